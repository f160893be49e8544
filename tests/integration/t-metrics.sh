#!/bin/sh
# cumemguard status sees every guarded process, in a group or not, and
# --prometheus prints them as metrics that promtool accepts, with the bytes
# the segments hold: a member holding 600 MiB of a 1 GiB group shows
# exactly those.  A Slurm job's group is labelled with the job, a segment
# in a private /dev/shm (a container's) with its container, and a segment
# that cannot be read is counted, not fatal.  A process in no group counts
# its bytes per thread (lanes, and a shared counter past the lanes): a free
# on another thread than the allocation's, and more threads than lanes,
# still show its exact bytes.  --textfile is written whole
# and --every rewrites it.  Bad flags: one line, exit 2.
. "$srcdir/tests/lib/defs.sh"
G=met$$
SHM=/dev/shm/cumemguard.$(id -u)
CMG_SIM_DEVICES=16G
export CMG_SIM_DEVICES
trap 'kill $(cat "$tmp"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$tmp"; rm -f "$SHM.$G"* "$SHM.slurm.$$"' EXIT

# bg NAME LAUNCHER-OPTIONS... -- SCRIPT...: a simulated program in the
# background, its output in $tmp/NAME.out, its pid in $tmp/NAME.pid.
bg() {
  name=$1
  shift
  "$LAUNCHER" --report "$tmp/$name.%p.json" "$@" >"$tmp/$name.out" 2>&1 &
  echo $! >"$tmp/$name.pid"
}

# metric NAME LABELS: the value of the series whose labels contain LABELS.
metric() {
  grep "^$1{" "$tmp/m.prom" | grep -F -- "$2" | sed 's/.* //'
}

bg a --group "$G" --group-limit 1GiB -- "$SIM/app_driver" alloc 600M sleep 30000
bg b --limit 100M -- "$SIM/app_driver" alloc 60M alloc 60M sleep 30000
bg j --group "slurm.$$" --group-limit 2G -- "$SIM/app_driver" alloc 1M sleep 30000
bg t -- "$SIM/app_driver" alloc 8M alloc 2M free_thread 1 threads 12 300 1K \
  sleep 30000
until_line "$tmp/a.out" 'alloc i=0 .* rc=0'
until_line "$tmp/b.out" 'alloc i=1 .* rc=2'
until_line "$tmp/j.out" 'alloc i=0 .* rc=0'
until_line "$tmp/t.out" 'threads ok=3600 failed=0'
a=$(cat "$tmp/a.pid") b=$(cat "$tmp/b.pid") t=$(cat "$tmp/t.pid")
# A corrupt segment of this user: counted as unreadable, the rest shown.
head -c 100 /dev/zero >"$SHM.$G-bad"
chmod 600 "$SHM.$G-bad"

"$LAUNCHER" status --prometheus >"$tmp/m.prom" 2>"$tmp/err"
is "$?/$(wc -c <"$tmp/err")" 0/0 "status --prometheus exits 0 with a corrupt segment about"
promtool check metrics <"$tmp/m.prom" >"$tmp/out" 2>&1
tap $? "promtool check metrics accepts the exposition"
is "$(metric cumemguard_group_used_bytes "group=\"$G\",uid=\"$(id -u)\",device=\"0\"")" \
  629145600 "the group holds exactly the 600 MiB its member holds"
is "$(metric cumemguard_group_limit_bytes "group=\"$G\",uid=\"$(id -u)\",device=\"0\"")" \
  1073741824 "the group's cap is 1 GiB"
is "$(metric cumemguard_process_used_bytes "pid=\"$a\",command=\"app_driver\",device=\"0\"")" \
  629145600 "the member shows its 600 MiB"
is "$(metric cumemguard_process_peak_bytes "pid=\"$a\",")" 629145600 \
  "and its peak"
is "$(metric cumemguard_group_members "group=\"$G\"")" 1 "the group has one member"
is "$(metric cumemguard_process_used_bytes "{uid=\"$(id -u)\",pid=\"$b\",")" \
  62914560 "a process in no group is there too, without a group label"
is "$(metric cumemguard_process_denials_total "pid=\"$b\",")" 1 \
  "its denial is counted"
is "$(metric cumemguard_process_used_bytes "pid=\"$t\",")/$(metric cumemguard_process_peak_bytes "pid=\"$t\",")" \
  8388608/10485760 "a process freeing on another thread, with 13 threads, shows its exact bytes and peak"
is "$(metric cumemguard_process_denials_total "pid=\"$a\",")" 0 \
  "the member has none"
grep -q "^cumemguard_process_used_bytes{group=\"slurm.$$\",job=\"$$\"," "$tmp/m.prom"
tap $? "a Slurm job's group is labelled with the job"
grep -q '^# TYPE cumemguard_process_denials_total counter$' "$tmp/m.prom" &&
  grep -q '^# HELP cumemguard_group_used_bytes ' "$tmp/m.prom"
tap $? "families have HELP and TYPE"
[ "$(sed -n 's/^cumemguard_segments_unreadable //p' "$tmp/m.prom")" -ge 1 ]
tap $? "the corrupt segment is counted as unreadable"

"$LAUNCHER" status >"$tmp/out" 2>"$tmp/err"
is "$?/$(grep -c "^group '$G-bad': .* is not a cumemguard group segment" "$tmp/out")" \
  0/1 "the text view shows the corrupt segment as one line"
# The whole list: other tests' processes in no group may be in it too.
awk '/^not in a group/ { on = 1; next } /^[^ ]/ { on = 0 } on' "$tmp/out" |
  grep -q "^ *$b  *app_driver  *0  *60.0 MiB  *60.0 MiB  1 denied$"
tap $? "the text view lists the process in no group, with its denial"
grep -A4 "^group $G: cap 1.0 GiB per device, 1 member$" "$tmp/out" |
  grep -q "^ *$a  *app_driver  *0  *600.0 MiB  *600.0 MiB$"
tap $? "and the member of the group"
"$LAUNCHER" status --json >"$tmp/out" 2>"$tmp/err"
is "$("$PYTHON3" -c '
import json, sys
r = json.load(sys.stdin)
print([(p["live"], p["denials"]) for g in r["groups"] if g.get("name") is None
       and "processes" in g for p in g["processes"] if p["pid"] == int(sys.argv[1])])' "$b" <"$tmp/out")" \
  "[(62914560, 1)]" "status --json lists it with its bytes and denials"
rm -f "$SHM.$G-bad"

# ---- a private /dev/shm, as a container has --------------------------------

if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm && exec "$@"' sh \
    "$LAUNCHER" --group "$G-box" --group-limit 2G --report "$tmp/c.%p.json" \
    -- "$SIM/app_driver" alloc 300M sleep 30000 >"$tmp/c.out" 2>&1 &
  echo $! >"$tmp/c.pid"
  until_line "$tmp/c.out" 'alloc i=0 .* rc=0'
  c=$(cat "$tmp/c.pid")
  [ ! -e "$SHM.$G-box" ]
  tap $? "the boxed process's segment is not in the host's /dev/shm"
  "$LAUNCHER" status --prometheus >"$tmp/m.prom" 2>"$tmp/err"
  is "$(metric cumemguard_group_used_bytes "group=\"$G-box\",container=\"pid $c\",")" \
    314572800 "root finds it through /proc/PID/root, labelled by container"
  kill "$c"
else
  echo "ok $((tap_n += 1)) # SKIP a private /dev/shm needs root and unshare -m"
  echo "ok $((tap_n += 1)) # SKIP a private /dev/shm needs root and unshare -m"
fi

# ---- --textfile and --every ------------------------------------------------

mkdir "$tmp/tf"
"$LAUNCHER" status --textfile "$tmp/tf/cumemguard.prom" >"$tmp/out" 2>"$tmp/err"
is "$?/$(wc -c <"$tmp/out")/$(ls -A "$tmp/tf")" 0/0/cumemguard.prom \
  "--textfile writes the file, nothing else, no temporary left"
promtool check metrics <"$tmp/tf/cumemguard.prom" >"$tmp/out" 2>&1
tap $? "promtool accepts the file"
"$LAUNCHER" status --textfile="$tmp/tf/cumemguard.prom" --every=100ms \
  >"$tmp/out" 2>"$tmp/err" &
echo $! >"$tmp/every.pid"
kill "$a"
has_no_member() {
  ! grep -q "pid=\"$a\"" "$tmp/tf/cumemguard.prom"
}
until_ok has_no_member
tap $? "--every rewrites the file: a member that exited leaves it"
kill "$(cat "$tmp/every.pid")"
is "$(ls -A "$tmp/tf")" cumemguard.prom "no temporary file is left behind"

# ---- bad flags -------------------------------------------------------------

for bad in "--textfile $tmp/x.txt" "--every 1s" \
  "--textfile $tmp/tf/y.prom --every soon" "--json --prometheus" \
  "--textfile" "--bogus" "--json=yes" "--json a b" "--prom" \
  "--textfile $tmp/tf/.prom"; do
  # shellcheck disable=SC2086
  "$LAUNCHER" status $bad >"$tmp/out" 2>"$tmp/err"
  is "$?/$(wc -l <"$tmp/err")/$(wc -c <"$tmp/out")" 2/1/0 \
    "status $bad: one line, exit 2"
done
is "$(ls -A "$tmp/tf")" cumemguard.prom "and nothing written"

kill "$(cat "$tmp/b.pid")" "$(cat "$tmp/j.pid")" "$t"
wait
echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
