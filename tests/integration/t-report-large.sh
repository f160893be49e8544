#!/bin/sh
# A large report read back: tens of thousands of live allocations from
# several stacks, on two devices, in VMM and in host memory, one freed.
# The leaks are written as they are made (src/core/jsonw.c), never held as
# a tree, and are the bulk of the report: the file must parse, and every
# figure in it must add up, leak by leak and device by device, to what the
# ledger itself says (cmg_device_stats).
. "$srcdir/tests/lib/defs.sh"
export CMG_SIM_DEVICES=16G,16G
R=$tmp/r.json
N0=20000 N1=30000
[ -z "${CMG_TEST_PREFIX:-}" ] || N0=2000 N1=3000

guard "--report $R" app_driver many $N0 4K site 1 1M site 2 3M deep 5 5K \
  deep 9 7K free 1 vmm 2M device 1 many $N1 1000 site 3 123457 deep 12 64K \
  host 8K cmg 0 cmg 1 cmg 64
is "$rc" 0 "the program ran"
validate "$R"
"$top_builddir/cumemguard-report" "$R" >"$tmp/summary" 2>&1
is "$?" 0 "cumemguard-report reads it"

# The ledger's figures, from the program's own cmg lines.
ledger() { grep "^cmg dev=$1 " "$tmp/out" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

is "$(q $R 'len(r["leaks"])')" 9 \
  "one leak per (stack, api, kind, device): the two loops, six sites, host"
is "$(q $R 'all(l["count"] == len(l["allocations"]) for l in r["leaks"])')" \
  True "every leak's count is its number of allocations"
is "$(q $R 'all(l["bytes"] == sum(a["bytes"] for a in l["allocations"]) for l in r["leaks"])')" \
  True "every leak's bytes are its allocations' sum"
is "$(q $R '[l["bytes"] for l in r["leaks"]] == sorted((l["bytes"] for l in r["leaks"]), reverse=True)')" \
  True "largest leak first"
is "$(q $R 'sorted(l["count"] for l in r["leaks"])[-2:]')" "[$N0, $N1]" \
  "the two loops, one leak each"
for d in 0 1; do
  is "$(q $R "(sum(l['count'] for l in r['leaks'] if l['device'] == $d and l['kind'] != 'host'), sum(l['bytes'] for l in r['leaks'] if l['device'] == $d and l['kind'] != 'host'))")" \
    "($(ledger $d live_allocs), $(ledger $d live))" \
    "device $d: the leaks add up to the ledger's live allocations and bytes"
  is "$(q $R "[x['live_bytes'] for x in r['devices'] if x['ordinal'] == $d]")" \
    "[$(ledger $d live)]" "device $d: its entry says the same"
done
is "$(q $R '(r["summary"]["live_allocations"], r["summary"]["live_bytes"])')" \
  "($(($(ledger 0 live_allocs) + $(ledger 1 live_allocs))), $(($(ledger 0 live) + $(ledger 1 live))))" \
  "the summary adds up both devices"
is "$(q $R '[(l["kind"], l["device"], l["count"], l["bytes"]) for l in r["leaks"] if l["kind"] == "host"], r["summary"]["host_live_bytes"]')" \
  "([('host', None, 1, 8192)], $(ledger 64 live))" "host memory: its own leak, no device"
is "$(q $R 'sum(l["count"] for l in r["leaks"]) == len({a["seq"] for l in r["leaks"] for a in l["allocations"]})')" \
  True "every allocation listed once (sequence numbers distinct)"
is "$(q $R 'all(a["address"].startswith("0x") and int(a["address"], 16) > 0 and a["time"] >= 0 and a["thread"] == r["process"]["pid"] for l in r["leaks"] for a in l["allocations"])')" \
  True "addresses, times and threads are well-formed"
is "$(q $R '{l["stack"] for l in r["leaks"]} <= set(stacks)')" True \
  "every stack a leak names is in the stacks table"
is "$(q $R '[a["bytes"] for l in r["leaks"] for a in l["allocations"] if a["bytes"] in (123457, 3145728)]')" \
  "[123457]" "an odd size comes back exactly; the freed allocation is gone"

done_testing
