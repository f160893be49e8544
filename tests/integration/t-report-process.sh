#!/bin/sh
# Reports across processes and time: a forked child that allocates writes
# its own report and the parent's has none of the child's allocations; a
# child that does not allocate writes none; a dump signal during two
# allocating threads gives a valid report; a process killed with SIGKILL
# while writing its report leaves nothing at the final path.
. "$srcdir/tests/lib/defs.sh"
M=1048576

# Fork.
guard "--report $tmp/f.%p.json" app_rt_static site 1 1M fork site 2 2M \
  endfork site 3 3M
set -- "$tmp"/f.*.json
is "$#" 2 "parent and allocating child write one report each"
parent=$(ls "$tmp"/f.*.json | while read -r f; do
  [ "$(q "$f" 'r["process"]["ppid"] == r["process"]["pid"]')" = False ] &&
    [ "$(q "$f" 'len(r["leaks"])')" = 2 ] && echo "$f"; done)
child=$(ls "$tmp"/f.*.json | grep -v "^$parent\$")
validate "$parent" "$child"
is "$(q "$child" 'r["process"]["ppid"]')" "$(q "$parent" 'r["process"]["pid"]')" \
  "the child's report names the parent"
is "$(q "$child" '[(l["bytes"], "cmgtest_site_2" in fn(l["stack"])) for l in r["leaks"]]')" \
  "[($((2 * M)), True)]" "the child's report holds only the child's allocation"
is "$(q "$parent" 'sorted(l["bytes"] for l in r["leaks"])')" "[$M, $((3 * M))]" \
  "the parent's report has none of the child's"
is "$(q "$parent" 'any("cmgtest_site_2" in fn(l["stack"]) for l in r["leaks"])')" False \
  "not even by stack"
rm -f "$tmp"/f.*.json
guard "--report $tmp/f.%p.json" app_rt_static site 1 1M fork endfork
set -- "$tmp"/f.*.json
is "$#" 1 "a child that does not allocate writes no report"

# A dump signal while two threads allocate and free as fast as they can.
"$LAUNCHER" --report "$tmp/s.json" --dump-signal USR1 -- "$SIM/app_rt_static" \
  threads 2 2000000 4096 sleep 4000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
until_caught $pid 10
sleep 0.1
kill -USR1 $pid
until_exists "$tmp/s.json"
cp "$tmp/s.json" "$tmp/s-signal.json" 2>/dev/null
threads_done=$(grep -c '^threads ' "$tmp/out")
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
is "$threads_done" 0 "the dump came while the threads were still running"
validate "$tmp/s-signal.json"
is "$(q "$tmp/s-signal.json" 'r["process"]["reason"]')" signal "reason: signal"

# SIGKILL while the report is being written: the temporary file may stay,
# the final path never holds a part of a report.
"$LAUNCHER" --report "$tmp/k.json" -- "$SIM/app_rt_static" many 300000 512 \
  dump - sleep 10000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while ! ls "$tmp"/k.json.tmp.* >/dev/null 2>&1 && [ $i -lt 2000 ]; do
  sleep 0.005
  i=$((i + 1))
done
seen=$([ ! -e "$tmp/k.json" ] && ls "$tmp"/k.json.tmp.* >/dev/null 2>&1 && echo yes)
kill -KILL $pid
wait $pid 2>/dev/null
is "$seen" yes "killed while the temporary report was being written"
tap "$([ ! -e "$tmp/k.json" ]; echo $?)" "nothing at the final path"

done_testing
