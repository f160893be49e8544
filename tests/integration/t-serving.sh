#!/bin/sh
# Where an inference server's memory arithmetic meets the caps, every
# figure tells one story.  vLLM and SGLang size themselves from
# cudaMemGetInfo (total x gpu_memory_utilization; the KV cache is what
# remains after what they measure), so after every kind of allocation a
# server makes (the caching allocator's cudaMalloc, a stream-ordered pool,
# cuMemCreate + cuMemMap, a CUDA graph's memory, a context, a library's
# workspace through its own cuGetProcAddress) the total is the cap and
# total - free is what the caps count, to the byte: the interposer's
# count, and the simulated driver's own (with the contexts' cost under
# count_context=1, without under 0), for a process's limit and a group's
# cap with another member holding memory.  NVML (v1, v2, the process's
# entry) agrees, and so does a child that reads NVML without starting
# CUDA, as nvidia-smi does.  Free never wraps past the cap under
# on_exceed=warn, also as another member frees; a sleep/wake cycle
# (unmap and release, create and map again) gives the memory back to the
# group's cap, where another process can take it, and takes it again,
# counted once and no leak, and a wake with the room taken is an ordinary
# out-of-memory error; two ranks of one group see one total.
. "$srcdir/tests/lib/defs.sh"
M=1048576
C=$((500 * M))
G=sv$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
export CMG_SIM_DEVICES=16G CMG_SIM_CONTEXT_BYTES=500M

# ---- every kind of allocation a server makes -----------------------------------

# After each step: cudaMemGetInfo, the interposer's count, the driver's.
V="info cmg 0 stats 0 ctxstats 0"
# The server: the weights in a caching allocator's segment; a stream-
# ordered pool; cuMemCreate + cuMemMap (expandable segments, NCCL's
# buffers, sleep mode's KV cache); a CUDA graph captured with a 64 MiB
# cudaMallocAsync, uploaded; a context of a library's; its workspace.
SERVER="$V alloc 1G $V pool_alloc default 256M $V vmm 512M $V
  stream capture 1 relaxed async_on 1 64M free_async_on 1 3 capture_end 1
  instantiate 0 0 upload 0 1 sync 1 $V ctx_create $V lib_alloc 32M $V
  nvml 0 nvml2 0 nvml_procs 0 pid await $tmp/done"
# What the server holds after each step, contexts apart, in MiB.
HELD="0 1024 1280 1792 1856 1856 1888"

# figures FIELD: FIELD of each step, in MiB, space-separated: total, used
# (cudaMemGetInfo's total - free), live (the interposer's), driver (the
# simulated driver's own usage by this process, its contexts' cost left
# out under count_context=0).
figures() {
  awk -v f="$1" -v cc="$cc" -v M=$M '
    $1 == "info" { split($0, a, /[ =]/); fr = a[5]; tot = a[7] }
    $1 == "cmg" { for (i = 2; i <= NF; i++) if ($i ~ /^live=/) live = substr($i, 6) }
    $1 == "stats" { for (i = 2; i <= NF; i++) if ($i ~ /^used=/) drv = substr($i, 6) }
    $1 == "ctxstats" {
      ctx = substr($3, 7)
      v = f == "total" ? tot : f == "used" ? tot - fr : f == "live" ? live : \
          cc ? drv : drv - ctx
      printf "%s%d", sep, v / M; sep = " "
    }' "$tmp/out"
}

# at_least FILE PATTERN N: N lines of FILE match (a program's pid lines,
# each printed before an await).
at_least() {
  [ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ]
}

# plus N LIST: each number of LIST plus N.
plus() {
  n=$1
  shift
  for v in "$@"; do printf '%s%d' "${sep-}" $((v + n)); sep=' '; done
  unset sep
}

# The server's contexts: its primary one, and from the ctx_create step on
# a second.
ctxs() {
  k=0
  for v in $HELD; do
    k=$((k + 1))
    printf '%s%d' "${sep-}" $((v + ($1 * (k >= 6 ? 2 : 1)))); sep=' '
  done
  unset sep
}

for cc in 1 0; do
  export CUMEMGUARD_OPTIONS=count_context=$cc
  ctx_mib=$((cc * 500))
  want=$(ctxs $ctx_mib)
  for caps in "--limit 4GiB" "--group $G-$cc --group-limit 5GiB"; do
    rm -f "$tmp/done"
    case $caps in
      --group*)
        # Another member holds 600 MiB (and its context) all along.
        other=$((600 + ctx_mib)) cap=5120
        rm -f "$tmp/other.out"
        # shellcheck disable=SC2086
        "$LAUNCHER" $caps --report "$tmp/other.%p.json" -- "$SIM/app_driver" \
          alloc 600M pid await "$tmp/done" >"$tmp/other.out" 2>&1 &
        until_line "$tmp/other.out" '^pid '
        ;;
      *) other=0 cap=4096 ;;
    esac
    rm -f "$tmp/out"
    # shellcheck disable=SC2086
    "$LAUNCHER" $caps --report "$tmp/report.%p.json" -- "$SIM/app_rt_shared" \
      $SERVER >"$tmp/out" 2>"$tmp/err" &
    srv=$!
    until_line "$tmp/out" '^pid '
    what="count_context=$cc, ${caps%% *}"
    is "$(figures total)" "$(plus $cap 0 0 0 0 0 0 0)" \
      "$what: after every step the total is the cap"
    # shellcheck disable=SC2086
    is "$(figures used)" "$(plus $other $want)" \
      "$what: total - free is what the caps count, step by step"
    is "$(figures live)" "$want" "$what: the interposer counts the same"
    is "$(figures driver)" "$want" "$what: and the driver agrees"
    last=$(grep '^info' "$tmp/out" | tail -n 1)
    free=$(echo "$last" | sed 's/.*free=\([0-9]*\) .*/\1/')
    total=$((cap * M))
    n=$(grep -c '' "$tmp/out")
    is "$(sed -n "$((n - 3)),$((n - 1))p" "$tmp/out" | sed 's/ rc=0//; s/ reserved=0//; s/ pid=[0-9]*//; s/ count=1//' | tr '\n' '|')" \
      "nvml dev=0 total=$total free=$free used=$((total - free))|nvml2 dev=0 total=$total free=$free used=$((total - free))|nvml_procs dev=0 used=$(($(echo "$want" | awk '{print $NF}') * M))|" \
      "$what: NVML's memory information (v1, v2) agrees, and the process's entry is its count"
    : >"$tmp/done"
    wait $srv
    is "$?" 0 "$what: the server ends well"
    wait
  done
done
unset CUMEMGUARD_OPTIONS

# ---- what a child reading NVML sees --------------------------------------------

# The server holds 1.5 GiB (and its context) and runs, as a child would
# run nvidia-smi, a reader that reaches NVML through dlopen and dlsym and
# starts no CUDA.  Under a group's cap the child sees the group's cap and
# the server's count; under a limit alone, its own limit, with nothing
# held: it holds nothing, and no cap of its counts the server.
cat >"$tmp/family.sh" <<'EOF'
sim=$1 dir=$2
"$sim/app_rt_shared" alloc 1G vmm 512M info pid await "$dir/go" \
  >"$dir/server.out" 2>"$dir/server.err" &
until grep -q '^pid ' "$dir/server.out" 2>/dev/null; do sleep 0.02; done
"$sim/app_dlsym" nvml 0 nvml2 0 nvml_procs 0
: >"$dir/go"
wait
EOF
for caps in "--group $G-c --group-limit 4GiB" "--limit 4GiB"; do
  rm -f "$tmp/go"
  hguard "$caps" /bin/sh "$tmp/family.sh" "$SIM" "$tmp"
  srv=$(grep '^info' "$tmp/server.out")
  sfree=$(echo "$srv" | sed 's/.*free=\([0-9]*\) .*/\1/')
  case $caps in
    --group*) used=$((4096 * M - sfree)) what="a group's cap" ;;
    *) used=0 what="a limit alone" ;;
  esac
  is "$(echo "$srv" | sed 's/.*total=//')/$((4096 * M - sfree))" \
    "$((4096 * M))/$((1536 * M + C))" "$what: the server's cudaMemGetInfo"
  is "$(sed -n 1,2p "$tmp/out" | sed 's/ rc=0//; s/ reserved=0//' | tr '\n' '|')" \
    "nvml dev=0 total=$((4096 * M)) free=$((4096 * M - used)) used=$used|nvml2 dev=0 total=$((4096 * M)) free=$((4096 * M - used)) used=$used|" \
    "$what: the child's NVML shows the cap, and as used what its caps count"
done

# ---- past the cap, as another member frees ----------------------------------------

# A member past the group's cap under on_exceed=warn, then freeing in two
# steps; between the steps a reader (NVML without CUDA, and a process
# with a context of its own) looks: free is 0, never wrapped, then what
# the frees gave back.
rm -f "$tmp"/go*
"$LAUNCHER" --group "$G-w" --group-limit 2GiB --on-exceed warn \
  --report "$tmp/w.%p.json" -- "$SIM/app_driver" alloc 1G alloc 1G pid \
  await "$tmp/go1" free 1 pid await "$tmp/go2" free 0 pid await "$tmp/go3" \
  >"$tmp/w.out" 2>"$tmp/w.err" &
w=$!
n='' c=''
for step in 1 2 3; do
  until_ok at_least "$tmp/w.out" '^pid ' $step
  guard "--group $G-w --group-limit 2GiB" app_dlsym nvml 0 nvml2 0
  n="${n:+$n|}$(val 1 total)/$(val 1 free)/$(val 1 used)/$(val 2 free)"
  guard "--group $G-w --group-limit 2GiB" app_driver info nvml 0
  c="${c:+$c|}$(val 1 rc)/$(val 1 total)/$(val 1 free)/$(val 2 free)"
  : >"$tmp/go$step"
done
wait $w
# The member holds its context and 2 GiB, 1 GiB after a free, then its
# context alone; the reader with a context adds its own, which is refused
# while the group is past its cap, as a full card refuses one.
is "$n" \
  "$((2048 * M))/0/$((2048 * M))/0|$((2048 * M))/$((1024 * M - C))/$((1024 * M + C))/$((1024 * M - C))|$((2048 * M))/$((2048 * M - C))/$C/$((2048 * M - C))" \
  "warn past the cap: NVML without CUDA shows free 0, never wrapped, then what each free gave back"
is "$c" \
  "2///0|0/$((2048 * M))/$((1024 * M - 2 * C))/$((1024 * M - 2 * C))|0/$((2048 * M))/$((2048 * M - 2 * C))/$((2048 * M - 2 * C))" \
  "and so does a member with a context of its own, counted too, and refused while there is no room for it"

# ---- sleep and wake ----------------------------------------------------------------

# vLLM's sleep mode under a group's cap: the weights (1 GiB) and a KV
# cache of three 512 MiB chunks mapped with cuMemCreate + cuMemMap; asleep, the
# weights are dropped and each chunk unmapped and released; a trainer of
# the group takes the room, gives it back and ends; the server wakes (the
# weights and the chunks again), and sleeps once more; then, while another
# member holds the room, it tries to wake and is refused as out of memory.
rm -f "$tmp"/go*
"$LAUNCHER" --group "$G-s" --group-limit 4GiB --report "$tmp/s.%p.json" -- \
  "$SIM/app_rt_shared" alloc 1G vmm 512M vmm 512M vmm 512M info cmg 0 \
  free 0 vmm_free 1 vmm_free 2 vmm_free 3 info cmg 0 pid await "$tmp/go" \
  info alloc 1G vmm 512M vmm 512M vmm 512M info cmg 0 \
  free 4 vmm_free 5 vmm_free 6 vmm_free 7 info cmg 0 pid await "$tmp/go2" \
  vmm 512M info >"$tmp/s.out" 2>"$tmp/s.err" &
s=$!
until_line "$tmp/s.out" '^pid '
guard "--group $G-s --group-limit 4GiB" app_driver info alloc 3000M info \
  free 0 info
: >"$tmp/go"
is "$(val 1 free)/$(val 2 rc)/$(val 3 free)/$(val 5 free)" \
  "$((3596 * M - C))/0/$((596 * M - C))/$((3596 * M - C))" \
  "asleep, the server's memory is back under the cap: a trainer takes 3000 MiB of it, and gives it back"
until_ok at_least "$tmp/s.out" '^pid ' 2
"$LAUNCHER" --group "$G-s" --group-limit 4GiB --report "$tmp/h.%p.json" -- \
  "$SIM/app_driver" alloc 3000M pid await "$tmp/go3" >"$tmp/h.out" 2>&1 &
h=$!
until_line "$tmp/h.out" '^pid '
: >"$tmp/go2"
wait $s
: >"$tmp/go3"
wait $h
mv "$tmp/s.out" "$tmp/out"
is "$(grep '^vmm' "$tmp/out" | tail -n 1)/$(grep '^info' "$tmp/out" | tail -n 1)" \
  "vmm i=8 size=$((512 * M)) dev=0 rc=2/info rc=0 free=$((96 * M)) total=$((4096 * M))" \
  "a wake with the room taken is refused as out of memory, and takes nothing"
is "$(grep -c ' rc=' "$tmp/out")/$(grep -c ' rc=0' "$tmp/out")" 25/24 \
  "every other step of the server succeeds"
is "$(sed -n 's/^info rc=0 free=\([0-9]*\) .*/\1/p' "$tmp/out" | tr '\n' /)" \
  "$((1036 * M))/$((3596 * M))/$((3596 * M))/$((1036 * M))/$((3596 * M))/$((96 * M))/" \
  "free falls by the weights and the KV cache, rises by them asleep, falls and rises again"
is "$(grep '^cmg' "$tmp/out" | sed 's/.* live=\([0-9]*\) peak=\([0-9]*\) live_allocs=[0-9]* allocs=\([0-9]*\) frees=\([0-9]*\) .*/\1 \2 \3 \4/' | tr '\n' /)" \
  "$((3060 * M)) $((3060 * M)) 5 0/$C $((3060 * M)) 5 4/$((3060 * M)) $((3060 * M)) 9 4/$C $((3060 * M)) 9 8/" \
  "nothing is counted twice: live, peak, allocations and frees at each step"
is "$(grep -c 'denied cuMemCreate of 512.0 MiB' "$tmp/s.err")" 1 \
  "the refused wake is one line"
R=$(ls "$tmp"/s.*.json)
validate "$R"
is "$(q "$R" '[(l["kind"], l["bytes"]) for l in r["leaks"]]')" "[('context', $C)]" \
  "the report: no leak, the context apart"

# ---- two ranks of one group ----------------------------------------------------------

# Two tensor-parallel ranks on one card, each asking for 0.45 of the
# total (half of gpu_memory_utilization=0.9) in a KV cache mapped with
# cuMemCreate: both see one total, the second sees the first's share
# gone, and both fit.  (Each rank's context is counted too: under a 12 GiB
# cap the 10% left over holds both.)
share=$((12288 * 45 / 100 / 2 * 2))
rm -f "$tmp/go"
"$LAUNCHER" --group "$G-t" --group-limit 12GiB --report "$tmp/t.%p.json" -- \
  "$SIM/app_rt_shared" info vmm "${share}M" info pid await "$tmp/go" \
  >"$tmp/t.out" 2>"$tmp/t.err" &
t=$!
until_line "$tmp/t.out" '^pid '
guard "--group $G-t --group-limit 12GiB" app_rt_shared info vmm "${share}M" \
  info nvml 0
: >"$tmp/go"
wait $t
is "$(val 1 total)/$(val 3 total)/$(sed -n 's/^info rc=0 free=[0-9]* total=//p' "$tmp/t.out" | tr '\n' /)" \
  "$((12288 * M))/$((12288 * M))/$((12288 * M))/$((12288 * M))/" \
  "both ranks see the group's cap as the total"
is "$(val 1 free)/$(val 2 rc)/$(val 3 free)/$(val 4 used)" \
  "$((12288 * M - 2 * C - share * M))/0/$((12288 * M - 2 * (C + share * M)))/$((2 * (C + share * M)))" \
  "the second rank sees the first's share and context gone, and its own share fits"

done_testing
