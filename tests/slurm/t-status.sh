#!/bin/sh
# `cumemguard status` shows a group named slurm.JOBID, as the Slurm plugin
# names a job's group, as "Slurm job JOBID"; other names as groups.  No
# Slurm is needed: the group is made with the launcher.
. "$srcdir/tests/lib/defs.sh"
J=$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.slurm.$J" "$SHM.slurm.x$J"' EXIT

for name in slurm.$J slurm.x$J; do
  "$LAUNCHER" --group "$name" --group-limit 8M --report "$tmp/r.%p.json" -- \
    "$SIM/app_driver" alloc 1M await "$tmp/go" >"$tmp/$name.out" 2>&1 &
done
until_line "$tmp/slurm.$J.out" 'alloc i=0 .* rc=0'
until_line "$tmp/slurm.x$J.out" 'alloc i=0 .* rc=0'

"$LAUNCHER" status "slurm.$J" >"$tmp/out" 2>"$tmp/err"
is "$?/$(sed -n 1p "$tmp/out")" \
  "0/Slurm job $J: cap 8.0 MiB per device, 1 member" \
  "a group slurm.JOBID is shown as the Slurm job"
"$LAUNCHER" status "slurm.x$J" >"$tmp/out" 2>"$tmp/err"
is "$?/$(sed -n 1p "$tmp/out")" \
  "0/group slurm.x$J: cap 8.0 MiB per device, 1 member" \
  "any other name is shown as a group"
: >"$tmp/go"
wait
done_testing
