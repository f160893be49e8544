#!/bin/sh
# merge: the reports of several processes as one view.  Two processes that
# leak from the same site make one group with the sum of both; devices are
# matched by UUID, so two ranks that number the same GPU differently add up
# on one row; the totals are the sums of the reports' totals.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data

tool_in "$TOOLDIR" merge data/job-a.json data/job-b.json
is "$rc" 0 "merge of the fixed reports"
golden merge-job-a-b.txt "its text"

tool_json "$tmp/m.json" merge --json --top 0 "$D/job-a.json" "$D/job-b.json"
s='d["summaries"][0]'
is "$(js "$tmp/m.json" "len(d['summaries']), len($s['sources'])")" "(1, 2)" \
  "--json: one summary of two sources"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" \
  "$(($(js "$D/job-a.json" 'd["summary"]["live_bytes"]') + $(js "$D/job-b.json" 'd["summary"]["live_bytes"]')))" \
  "leaked bytes: the sum of the two reports' live bytes"
is "$(js "$tmp/m.json" "$s['leaked_allocations']")" \
  "$(($(js "$D/job-a.json" 'd["summary"]["live_allocations"]') + $(js "$D/job-b.json" 'd["summary"]["live_allocations"]')))" \
  "leaked allocations: the sum"
is "$(js "$tmp/m.json" "[(x['uuid'][:12], x['processes'], x['live_bytes'], x['allocations']) for x in $s['devices']]")" \
  "[('GPU-0a0a0a0a', 2, 7517241344, 12), ('GPU-0b0b0b0b', 2, 1090523136, 5)]" \
  "devices matched by UUID across ranks that number them differently"
is "$(js "$tmp/m.json" "[(l['count'], l['bytes']) for l in $s['leaks'] if [f['function'] for f in l['frames']][2:3] == ['alloc_weights']]")" \
  "[(4, 6442450944)]" "the same site in both processes is one group: 2 + 2 allocations"
is "$(js "$tmp/m.json" "len($s['leaks'])")" 7 \
  "groups of both, without duplicates (7 in job-a, 3 in job-b, 3 shared)"
is "$(js "$tmp/m.json" "[(p['source'], p['device']) for p in $s['peaks']]")" \
  "[(0, 0), (0, 1), (1, 0), (1, 1)]" "each process's peaks, by source"

# Two runs of the simulated CUDA, as two processes of one job: the same
# sites, so the same stacks, whatever their addresses.
guard "--report $tmp/p1.json" app_rt_shared site 1 1M site 2 2M
guard "--report $tmp/p2.json" app_rt_shared site 1 1M site 3 4M
validate "$tmp/p1.json" "$tmp/p2.json"
tool_json "$tmp/m.json" merge --json "$tmp/p1.json" "$tmp/p2.json"
is "$(js "$tmp/m.json" "sorted((l['count'], l['bytes'], [f['function'] for f in l['frames'] if (f['function'] or '').startswith('cmgtest_site')]) for l in $s['leaks'])")" \
  "[(1, 2097152, ['cmgtest_site_2']), (1, 4194304, ['cmgtest_site_3']), (2, 2097152, ['cmgtest_site_1'])]" \
  "cmgtest_site_1 of both processes is one group of 2"
is "$(js "$tmp/m.json" "($s['leaked_bytes'], $s['leaked_allocations'])")" \
  "($((8 * M)), 4)" "the totals add up"
is "$(js "$tmp/m.json" "[(x['processes'], x['live_bytes'], x['allocations']) for x in $s['devices']]")" \
  "[(2, $((8 * M)), 4)]" "one device row for both processes"

# A parent and its forked child, each with its own report.
guard "--report $tmp/f.%p.json" app_rt_static site 1 1M site 2 2M fork site 1 3M \
  endfork site 3 4M
set -- "$tmp"/f.*.json
is "$#" 2 "a parent and its child wrote a report each"
validate "$@"
tool_json "$tmp/m.json" merge --json "$@"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" \
  "$(($(q "$1" 'r["summary"]["live_bytes"]') + $(q "$2" 'r["summary"]["live_bytes"]')))" \
  "merged leaked bytes: the sum of both reports"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" $((10 * M)) "that is 1M + 2M + 4M + 3M"
is "$(js "$tmp/m.json" "[(x['processes'], x['live_bytes']) for x in $s['devices']]")" \
  "[(2, $((10 * M)))]" "one device row, both processes"
tool merge "$@"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: 10.0 MiB (10485760 bytes) leaked in 4 allocations" "text: the SUMMARY line"
is "$(head -n 1 "$tmp/out")" "cumemguard reports of 2 processes, merged" "text: the header"

# merge of one report is its summary.
tool merge "$1"
cp "$tmp/out" "$tmp/merged1"
tool "$1"
cmp -s "$tmp/out" "$tmp/merged1"
tap $? "merge of one report prints what its summary prints"

done_testing
