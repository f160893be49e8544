#!/bin/sh
# --no-pools and no_pools=1: the frameworks' four pool switches are set for
# the program, a value the user set is kept, the report records which were
# set and by whom; the library sets them itself (from its constructor,
# before main) when it is preloaded without the launcher; children inherit
# them and still know they were cumemguard's; a bad value is refused.
. "$srcdir/tests/lib/defs.sh"
R=$tmp/r.json
VARS="PYTORCH_NO_CUDA_MEMORY_CACHING TF_GPU_ALLOCATOR XLA_PYTHON_CLIENT_ALLOCATOR XLA_PYTHON_CLIENT_PREALLOCATE"
unset $VARS CUMEMGUARD_POOLS_SET
envs() { for v in $VARS; do printf 'env %s ' "$v"; done; }

# Through the launcher, nothing set beforehand: exactly the four switches.
# shellcheck disable=SC2046
guard "--no-pools --report $R" app_pool tensor 1M $(envs)
is "$rc" 0 "--no-pools runs the program"
is "$(sed -n '2,5p' "$tmp/out" | tr '\n' ' ')" \
  "PYTORCH_NO_CUDA_MEMORY_CACHING=1 TF_GPU_ALLOCATOR=cuda_malloc XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false " \
  "it sets each framework's switch"
validate "$R"
is "$(q $R '(r["options"]["no_pools"], "no_pools=1" in r["options"]["string"])')" \
  "(True, True)" "the report says pools were asked off"
is "$(q $R '[(s["name"], s["value"], s["set_by"]) for s in r["options"]["pool_switches"]]')" \
  "[('PYTORCH_NO_CUDA_MEMORY_CACHING', '1', 'cumemguard'), ('TF_GPU_ALLOCATOR', 'cuda_malloc', 'cumemguard'), ('XLA_PYTHON_CLIENT_ALLOCATOR', 'platform', 'cumemguard'), ('XLA_PYTHON_CLIENT_PREALLOCATE', 'false', 'cumemguard')]" \
  "and which variables it set"
"$LAUNCHER" -- /usr/bin/env | grep -v '^CUMEMGUARD_' | sort >"$tmp/env0"
"$LAUNCHER" --no-pools -- /usr/bin/env | grep -v '^CUMEMGUARD_' | sort >"$tmp/env1"
is "$(comm -13 "$tmp/env0" "$tmp/env1" | tr '\n' ' ')/$(comm -23 "$tmp/env0" "$tmp/env1")" \
  "PYTORCH_NO_CUDA_MEMORY_CACHING=1 TF_GPU_ALLOCATOR=cuda_malloc XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false /" \
  "exactly those four variables are added, and nothing else changes"

# The user's own values are kept, and recorded as theirs.
# shellcheck disable=SC2046
TF_GPU_ALLOCATOR=cuda_malloc_async PYTORCH_NO_CUDA_MEMORY_CACHING=0 \
  guard "--no-pools --report $R" app_pool tensor 1M $(envs)
is "$(sed -n '2,5p' "$tmp/out" | tr '\n' ' ')" \
  "PYTORCH_NO_CUDA_MEMORY_CACHING=0 TF_GPU_ALLOCATOR=cuda_malloc_async XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false " \
  "a variable the user set keeps its value"
is "$(q $R '[(s["value"], s["set_by"]) for s in r["options"]["pool_switches"]]')" \
  "[('0', 'user'), ('cuda_malloc_async', 'user'), ('platform', 'cumemguard'), ('false', 'cumemguard')]" \
  "the report tells the user's values from cumemguard's"

# Without --no-pools nothing is set, and the report still says what was.
# shellcheck disable=SC2046
TF_GPU_ALLOCATOR=cuda_malloc guard "--report $R" app_pool tensor 1M $(envs)
is "$(sed -n '2,5p' "$tmp/out" | tr '\n' ' ')" \
  "PYTORCH_NO_CUDA_MEMORY_CACHING unset TF_GPU_ALLOCATOR=cuda_malloc XLA_PYTHON_CLIENT_ALLOCATOR unset XLA_PYTHON_CLIENT_PREALLOCATE unset " \
  "without --no-pools nothing is set"
validate "$R"
is "$(q $R '(r["options"]["no_pools"], [(s["value"], s["set_by"]) for s in r["options"]["pool_switches"]])')" \
  "(False, [(None, None), ('cuda_malloc', 'user'), (None, None), (None, None)])" \
  "the report says pools were not asked off, and what was set"

# The library alone (LD_PRELOAD, as the Slurm plugin and containers start
# programs): its constructor sets them before main.
# shellcheck disable=SC2046
CUMEMGUARD_OPTIONS="no_pools=1,report=$R" LD_PRELOAD=$CUMEMGUARD_LIBRARY \
  XLA_PYTHON_CLIENT_PREALLOCATE=true "$SIM/app_pool" tensor 1M $(envs) \
  >"$tmp/out" 2>"$tmp/err"
is "$(sed -n '2,5p' "$tmp/out" | tr '\n' ' ')" \
  "PYTORCH_NO_CUDA_MEMORY_CACHING=1 TF_GPU_ALLOCATOR=cuda_malloc XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=true " \
  "no_pools=1 without the launcher: the library sets them before main"
validate "$R"
is "$(q $R '[s["set_by"] for s in r["options"]["pool_switches"]]')" \
  "['cumemguard', 'cumemguard', 'cumemguard', 'user']" \
  "and records which it set"

# A child started by the program inherits them, still marked as ours.
"$LAUNCHER" --no-pools --report "$tmp/c.%p.json" -- /bin/sh -c \
  "exec '$SIM/app_pool' tensor 1M env TF_GPU_ALLOCATOR" >"$tmp/out" 2>"$tmp/err"
set -- "$tmp"/c.*.json
is "$(q "$1" '[s["set_by"] for s in r["options"]["pool_switches"]]')" \
  "['cumemguard', 'cumemguard', 'cumemguard', 'cumemguard']" \
  "a process started by the program knows they were cumemguard's"

# Bad values: one line, exit 2, the program is not run.
guard "--no-pools=1" app_pool env TF_GPU_ALLOCATOR
is "$rc/$(cat "$tmp/err")" "2/cumemguard: option '--no-pools=1' takes no value" \
  "--no-pools takes no value"
CUMEMGUARD_OPTIONS=no_pools=yes guard "" app_pool env TF_GPU_ALLOCATOR
is "$rc/$(cat "$tmp/err")" "2/cumemguard: bad value 'no_pools=yes': expected 0 or 1" \
  "no_pools=yes is refused"
is "$(cat "$tmp/out")" "" "and the program did not run"

done_testing
