#!/bin/sh
# Growth policies: on_exceed=warn allows and records, on_exceed=wait waits
# for frees (and times out), a soft limit warns and writes a snapshot once
# per crossing, max_alloc refuses one large allocation, --on-demand-growth
# sets the frameworks' own switches.  Every decision is in the report.
. "$srcdir/tests/lib/defs.sh"
R=$tmp/r.json

# warn: both allocations over the limit go ahead; one line; both recorded.
guard "--limit 1M --on-exceed warn --report $R" app_driver alloc 768K \
  alloc 768K alloc 768K cmg 0
is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)" 0/0/0 "on_exceed=warn allows past the limit"
is "$(val 4 live)/$(val 4 denials)" $((3 * 786432))/0 "counted, not denied"
is "$(count 'allowed cuMemAlloc_v2 of 768.0 KiB on device 0 over the limit' "$tmp/err")" 1 \
  "one line for the first, on stderr"
validate "$R"
is "$(q $R '[(e["kind"], e["requested_bytes"]) for e in r["events"]]')" \
  "[('warn', 786432), ('warn', 786432)]" "every one recorded as an event"
is "$(q $R 'r["summary"]["events"]["warn"]')" 2 "and counted"

# wait: two threads share a cap of one allocation; nobody fails.
guard "--limit 4K --on-exceed wait --report $R" app_rt_static \
  threads 2 200000 4096 cmg 0 stats 0
is "$(val 1 failed)" 0 "on_exceed=wait: every allocation eventually fits"
is "$(val 3 peak)" 4096 "and the driver never held more than the cap"
validate "$R"
is "$(q $R 'all(e["kind"] == "wait" and e["granted"] for e in r["events"])')" True \
  "the waits are recorded, all granted"
is "$(q $R 'r["summary"]["events"]["wait"] > 0 and r["summary"]["denials"] == 0')" True \
  "the threads did wait, and nothing was denied"

# wait with nothing to wait for: the timeout, then the ordinary error.
guard "--limit 4K --on-exceed wait --wait-timeout 200ms --report $R" \
  app_driver alloc 4K alloc 4K
is "$(val 2 rc)" 2 "a wait nobody ends times out as out of memory"
validate "$R"
is "$(q $R '[(e["kind"], e["granted"], 0.15 < e["waited"] < 5) for e in r["events"]]')" \
  "[('wait', False, True)]" "the wait and its length are recorded"
is "$(q $R 'len(r["denials"])')" 1 "and the denial"
is "$(count 'waited wait_timeout for frees' "$tmp/err")" 1 "the line says it waited"

# soft limit: a line, an event and a snapshot report per crossing.
"$LAUNCHER" --soft-limit 2M --report "$tmp/s.json" -- "$SIM/app_driver" \
  alloc 1M alloc 1536K sleep 60000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
until_exists "$tmp/s.json"
cp "$tmp/s.json" "$tmp/snap.json" 2>/dev/null
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
validate "$tmp/snap.json"
is "$(q "$tmp/snap.json" '(r["process"]["reason"], r["summary"]["live_bytes"])')" \
  "('soft_limit', 2621440)" "crossing the soft limit writes a snapshot report"
is "$(count 'device 0 passed its soft limit of 2.0 MiB; writing a snapshot report' "$tmp/err")" 1 \
  "with one line"
guard "--soft-limit 2M --report $R" app_driver alloc 1M alloc 1536K \
  alloc 1M free 1 free 2 alloc 2M
validate "$R"
is "$(q $R '[e["kind"] for e in r["events"]]')" "['soft_limit', 'soft_limit']" \
  "once per crossing: staying above adds none, dropping below re-arms"

# max_alloc: one allocation too large, whatever the limit.
guard "--max-alloc 1M --report $R" app_driver alloc 2M alloc 1M
is "$(val 1 rc)/$(val 2 rc)" 2/0 "max_alloc refuses only what is larger"
is "$(count 'larger than max_alloc=1.0 MiB' "$tmp/err")" 1 "and says so"

# --on-demand-growth sets the frameworks' switches for the program.
CUMEMGUARD_LIBRARY=$CUMEMGUARD_LIBRARY "$LAUNCHER" --on-demand-growth -- \
  sh -c 'echo "$TF_FORCE_GPU_ALLOW_GROWTH $XLA_PYTHON_CLIENT_PREALLOCATE"' \
  >"$tmp/out" 2>"$tmp/err"
is "$(cat "$tmp/out")" "true false" "--on-demand-growth: TF grows, XLA does not preallocate"
# A value the user set stays, and the report says whose each one is.
TF_FORCE_GPU_ALLOW_GROWTH=false guard "--on-demand-growth --report $R" \
  app_driver alloc 1M
is "$(q "$R" '[(s["name"], s["value"], s["set_by"]) for s in r["options"]["pool_switches"] if s["name"] == "XLA_PYTHON_CLIENT_PREALLOCATE"]')" \
  "[('XLA_PYTHON_CLIENT_PREALLOCATE', 'false', 'cumemguard')]" \
  "--on-demand-growth: the report says cumemguard set XLA's switch"
CUMEMGUARD_LIBRARY=$CUMEMGUARD_LIBRARY TF_FORCE_GPU_ALLOW_GROWTH=false \
  XLA_PYTHON_CLIENT_PREALLOCATE=true "$LAUNCHER" --on-demand-growth -- \
  sh -c 'echo "$TF_FORCE_GPU_ALLOW_GROWTH $XLA_PYTHON_CLIENT_PREALLOCATE"' \
  >"$tmp/out" 2>"$tmp/err"
is "$(cat "$tmp/out")" "false true" "--on-demand-growth: the user's own values stay"

done_testing
