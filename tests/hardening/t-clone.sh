#!/bin/sh
# Children no fork handler runs in: glibc's clone(SIGCHLD), a raw clone
# system call and a vfork child, each calling exit(0) at once.  Their exit
# runs the parent's exit handlers with the parent's ledger and group slot
# (the vfork child in the parent's own memory): as a forked child that used
# no device memory, each writes no report, gives back none of the parent's
# share of its group, and exits with its own status whatever leak_exitcode
# says.  And children that do come from fork(): a report pattern without %p
# names the process that started with it, and every other process adds its
# pid, so that no report replaces another.  (A vfork child that calls
# exit() spends its parent's exit handlers: see below.)
. "$srcdir/tests/hardening/defs.sh"
G=clone$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT

for how in libc raw vfork; do
  rm -f "$tmp"/c.* "$tmp/go"
  : >"$tmp/p.out"
  "$LAUNCHER" --group "$G-$how" --group-limit 1GiB --leak-exitcode 9 \
    --report "$tmp/c.%p.json" -- "$SIM/app_driver" alloc 600M clone $how \
    info cmg 0 await "$tmp/go" >"$tmp/p.out" 2>"$tmp/p.err" &
  ppid=$!
  until_line "$tmp/p.out" '^await\|^cmg '
  guard "--group $G-$how --group-limit 1GiB --report $tmp/o.%p.json" \
    app_driver alloc 600M alloc 400M
  is "$(at alloc rc 1)/$(at alloc rc 2)" 2/0 \
    "$how child gone: a second member still gets only what the parent left"
  : >"$tmp/go"
  wait $ppid
  pst=$?
  cp "$tmp/p.out" "$tmp/out"
  is "$(at clone rc)/$(at clone status)" 0/0 \
    "$how: the child's exit(0) is its exit status, leak_exitcode or not"
  is "$(ls "$tmp"/c.*.json 2>/dev/null | grep -vc "/c.$ppid.json$")" 0 \
    "$how: no report of the child's"
  # glibc runs the exit handlers a vfork child's exit() finds, the driver's
  # and ours among them, in its parent's memory, and they are then spent:
  # the parent's own report at exit is lost, as its driver is (POSIX allows
  # only _exit or exec there).
  [ $how != vfork ] || continue
  is "$(at info free)/$(at info total)/$(at cmg live)" \
    $((424 * M))/$((1024 * M))/$((600 * M)) \
    "$how: the parent still sees its group's cap and its own 600 MiB"
  is "$pst/$(ls "$tmp"/c.*.json | wc -l)" 9/1 \
    "$how: the parent's report, and the parent's own leak status"
  is "$(q "$tmp/c.$ppid.json" 'r["summary"]["live_bytes"]')" $((600 * M)) \
    "$how: the parent's report holds its 600 MiB"
  cp "$tmp/p.err" "$tmp/err"
  is "$(grep -c '^cumemguard: report ' "$tmp/err")" 1 \
    "$how: one report line on stderr, the parent's"
done

# A raw clone child's cmg_dump writes nothing of its parent's ledger.
guard "" app_driver alloc 1M clone raw dump -
is "$(at dump rc)/$(ls "$tmp"/report.*.json | wc -l)" 0/1 \
  "the parent's own dump after a clone child still writes"

# ---- a report name without %p ------------------------------------------------

# Parent and forked child both use device memory: each writes a report,
# the child under the name with its pid added, and says so.
rm -rf "$tmp/fixed"
mkdir "$tmp/fixed"
guard "--report $tmp/fixed/run.json" app_driver alloc 1M fork pid alloc 2M \
  endfork alloc 3M
child=$(at pid pid)
is "$(ls "$tmp/fixed" | sort | tr '\n' ' ')" "run.$child.json run.json " \
  "a forked child's report goes to run.PID.json beside the parent's run.json"
is "$(q "$tmp/fixed/run.json" 'r["summary"]["live_bytes"]')/$(q "$tmp/fixed/run.$child.json" 'r["summary"]["live_bytes"]')" \
  $((4 * M))/$((2 * M)) "each report is its own process's"
is "$(count "cumemguard: report $tmp/fixed/run.$child.json: " "$tmp/err")/$(count "cumemguard: report $tmp/fixed/run.json: " "$tmp/err")" \
  1/1 "each process's line names its own report"

# A program the child runs (exec) is not the process the launcher started
# either; without the launcher, the process that read the options owns it.
rm -rf "$tmp/fixed"
mkdir "$tmp/fixed"
hguard "--report $tmp/fixed/x" /bin/sh -c \
  "'$SIM/app_driver' pid alloc 1M; exec '$SIM/app_driver' alloc 1M"
sub=$(at pid pid)
is "$(ls "$tmp/fixed" | sort | tr '\n' ' ')" "x x.$sub " \
  "a program a child runs adds its pid; the launcher's process keeps the name"
rm -rf "$tmp/fixed"
mkdir "$tmp/fixed"
CUMEMGUARD_OPTIONS="report=$tmp/fixed/y.json" LD_PRELOAD=$CUMEMGUARD_LIBRARY \
  "$SIM/app_driver" alloc 1M fork pid alloc 1M endfork >"$tmp/out" 2>"$tmp/err"
child=$(at pid pid)
is "$(ls "$tmp/fixed" | sort | tr '\n' ' ')" "y.$child.json y.json " \
  "without the launcher: the process that read the options keeps the name"

done_testing
