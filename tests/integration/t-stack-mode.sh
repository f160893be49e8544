#!/bin/sh
# stack_mode through the preload library: auto's stacks are exactly
# dwarf's (libunwind's) in every report, from programs and a runtime built
# without frame pointers, deep and shallow stacks; fp mode
# writes a valid report too; a bad mode is one line naming it.
. "$srcdir/tests/lib/defs.sh"
A=$tmp/auto.json
D=$tmp/dwarf.json

# The stacks of a report as (module path, offset) per frame, innermost
# first, with the truncation flag: addresses differ between runs.
stacks() {
  "$PYTHON3" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
mods = r["modules"]
def where(f):
    fr = r["frames"][f]
    m = fr.get("module")
    return (mods[m]["path"] if m is not None else None, fr.get("offset"))
by_id = {s["id"]: s for s in r["stacks"]}
out = []
for l in r["leaks"]:
    s = by_id[l["stack"]]
    out.append((s["truncated"], [where(f) for f in s["frames"]]))
print(sorted(out, key=repr))
PY
}

# same NAME "OPTIONS" APP SCRIPT...
same() {
  name=$1 mode_opts=$2
  shift 2
  guard "--report $A --stack-mode auto $mode_opts" "$@"
  ra=$rc
  guard "--report $D --stack-mode dwarf $mode_opts" "$@"
  rd=$rc
  a=$(stacks "$A") d=$(stacks "$D")
  if [ "$ra/$rd" = 0/0 ] && [ "$a" = "$d" ] && [ "$a" != "[]" ]; then
    tap 0 "$name: auto's stacks are dwarf's"
  else
    tap 1 "$name: auto's stacks are dwarf's"
    echo "#   auto ($ra): $a" | cut -c1-400
    echo "#   dwarf ($rd): $d" | cut -c1-400
  fi
}

same "a deep stack, truncated at 32" "" app_driver deep 50 1M
same "a deep stack, 64 frames" "--stack-depth 64" app_driver deep 50 1M
same "a shallow stack, whole" "--stack-depth 128" app_driver site 1 1M
same "through the runtime" "--stack-depth 128" app_rt_shared site 2 1M
same "the static runtime" "--stack-depth 128" app_rt_static site 3 1M
same "dlsym'd driver" "--stack-depth 128" app_dlsym site 1 1M
same "many allocations" "--stack-depth 128" app_driver many 100 1M

guard "--report $A --stack-mode fp --stack-depth 128" app_driver deep 50 1M
is "$rc" 0 "fp mode: the program runs"
validate "$A"
mode='r["options"]["stack_mode"]'
is "$(q "$A" "$mode")/$(q "$D" "$mode")" fp/dwarf "the report names the mode"

guard "--stack-mode frames" app_driver site 1 1M
is "$rc/$(wc -l <"$tmp/err" | tr -d " ")" 2/1 \
  "a bad stack_mode exits 2 with one line"
bad="'stack_mode=frames': expected one of auto, fp, dwarf"
is "$(count "$bad" "$tmp/err")" 1 "naming the value and the choices"
done_testing
