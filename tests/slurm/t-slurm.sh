#!/bin/sh
# The SPANK plugin on a real one-node Slurm, started here from the
# distribution's packages (munged, slurmctld, slurmd) on private ports,
# with its state and logs in the build tree, its sockets in /tmp, and
# stopped and removed at exit.  Simulated-CUDA programs run through srun
# and sbatch with the built plugin: the cap is enforced; default_limit
# applies; a size over max_limit, a malformed one, a bad plugin argument,
# a missing library and an unusable segment stop the step before the
# program starts (a marker file says whether it did); the report pattern
# gets the job id; the tasks of a job share one cap; sbatch's option caps
# its steps; a job past its time limit leaves its report (written as
# Slurm's SIGTERM kills it); the user's own options and LD_PRELOAD are
# kept, the library put in it as tests/preload-cases.txt says; status
# names the job; a task sees the job's cap in every memory view; and no segment is left in /dev/shm.  Without root, the
# packages or a plugin build, it skips.
. "$srcdir/tests/lib/defs.sh"

skip() {
  echo "1..0 # SKIP $*"
  exit 0
}

PLUGIN=$top_builddir/src/slurm/.libs/spank_cumemguard.so
[ -f "$PLUGIN" ] || skip "the plugin was not built (configure found no <slurm/spank.h>)"
[ "$(id -u)" -eq 0 ] || skip "slurmd and munged need root"
for p in munged slurmctld slurmd srun sbatch scontrol squeue scancel timeout; do
  command -v "$p" >/dev/null 2>&1 ||
    skip "$p is not installed (scripts/install-deps.sh installs Slurm)"
done

# An environment inside a real job would steer srun elsewhere.
for v in $(env | sed -n 's/^\(\(SLURM\|SBATCH\|SRUN\|SALLOC\|SPANK\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
unset LD_PRELOAD

# Everything of this run's cluster lives in $c, in the build tree; jobs
# are numbered from a first id of this run's own, so that no other run's
# segments can be taken for ours.
c=$top_builddir/tests/slurm/cluster.$$
first=$(( ($$ % 60000) * 1000 + 1000 ))
SHM=/dev/shm/cumemguard.0.slurm
LIB=$top_builddir/.libs/libcumemguard.so
APP=$SIM/app_driver
export CMG_SIM_DEVICES=16G SLURM_CONF=$c/slurm.conf

pid_of() {
  cat "$c/$1.pid" 2>/dev/null
}

# stop NAME: ends the daemon this test started, by its pid file, waiting
# up to 5 s before SIGKILL.
stop() {
  _pid=$(pid_of "$1")
  [ -n "$_pid" ] || return 0
  kill "$_pid" 2>/dev/null || return 0
  _n=0
  while kill -0 "$_pid" 2>/dev/null && [ $_n -lt 50 ]; do
    sleep 0.1
    _n=$((_n + 1))
  done
  kill -9 "$_pid" 2>/dev/null
}

# our_segments: the segments of this run's jobs still in /dev/shm.
our_segments() {
  for f in "$SHM".*; do
    [ -e "$f" ] || continue
    id=${f##*.}
    case $id in *[!0-9]*) continue ;; esac
    [ "$id" -ge $first ] && [ "$id" -lt $((first + 1000)) ] && echo "$f"
  done
}

# wait_for SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds,
# for at most SECONDS; the status says whether it did.
wait_for() {
  _left=$(($1 * 10))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $_left -gt 0 ] || return 1
    sleep 0.1
    _left=$((_left - 1))
  done
}

no_jobs() {
  [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]
}

cleanup() {
  # Jobs of this cluster first, so that no step outlives its slurmd.
  if [ -n "$(pid_of slurmctld)" ]; then
    timeout 10 scancel --quiet -u root 2>/dev/null
    wait_for 5 no_jobs
  fi
  stop slurmd
  stop slurmctld
  stop munged
  for f in $(our_segments); do rm -f "$f"; done
  rm -rf "$tmp" "$c"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# port_busy PORT: something listens on TCP PORT.
port_busy() {
  _hex=$(printf '%04X' "$1")
  grep -q ":$_hex [0-9A-F]*:[0-9A-F]* 0A" /proc/net/tcp /proc/net/tcp6 \
    2>/dev/null
}

# A pair of free ports from a range of this run's own.
port=$((20000 + ($$ % 15000) * 2))
tries=0
while port_busy $port || port_busy $((port + 1)); do
  tries=$((tries + 1))
  [ $tries -lt 20 ] || skip "no free pair of TCP ports near $port"
  port=$((port + 2))
done

# Sockets go under $tmp (/tmp/cmgtest.*): a build tree's path may be past
# the 108 bytes a socket's path can hold.
mkdir -p "$c/state" "$tmp/spool" "$c/log" || exit 99
chmod 700 "$c"
dd if=/dev/urandom of="$c/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$c/munge.key"
host=$(hostname -s)
cat >"$c/slurm.conf" <<EOF
ClusterName=cmg$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$c/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$c/log/slurmctld.log
SlurmdLogFile=$c/log/slurmd.log
PlugStackConfig=$c/plugstack.conf
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId=$first
NodeName=cmgnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=4 State=UNKNOWN
PartitionName=cmg Nodes=cmgnode Default=YES MaxTime=INFINITE State=UP
EOF

# plugstack_line LINE: plugstack.conf holds LINE.  Replaced whole, by a
# rename: the epilog of the job before may be reading it, and an epilog
# that finds the file empty runs no plugin and leaves that job's segment.
plugstack_line() {
  echo "$1" >"$c/plugstack.conf.new" && mv -f "$c/plugstack.conf.new" "$c/plugstack.conf"
}

# plugstack ARGS...: the plugin's line, required, so that a failing
# plugin stops the job; slurmstepd and srun read it again for every step.
plugstack() {
  plugstack_line "required $PLUGIN library=$LIB $*"
}
plugstack

# why LOG: the last error of a daemon's log, for a skip line.
why() {
  grep -i 'error\|fatal' "$1" 2>/dev/null | tail -n 1
}

munged --force --socket="$tmp/munge.sock" --key-file="$c/munge.key" \
  --pid-file="$c/munged.pid" --log-file="$c/log/munged.log" \
  --seed-file="$c/munged.seed" >"$c/log/munged.out" 2>&1 ||
  skip "munged does not start: $(tail -n 1 "$c/log/munged.out")"
wait_for 10 test -S "$tmp/munge.sock" || skip "munged made no socket"
slurmctld -i -f "$c/slurm.conf" >"$c/log/slurmctld.out" 2>&1 ||
  skip "slurmctld does not start: $(why "$c/log/slurmctld.log")"
slurmd -N cmgnode -f "$c/slurm.conf" >"$c/log/slurmd.out" 2>&1 ||
  skip "slurmd does not start: $(why "$c/log/slurmd.log")"

node_idle() {
  scontrol show node cmgnode 2>/dev/null | grep -q 'State=IDLE'
}
wait_for 30 node_idle ||
  skip "the node does not come up: $(why "$c/log/slurmd.log")"

# sr ARGS...: srun -Q, bounded; stdout in $tmp/out, stderr in $tmp/err.
sr() {
  timeout 30 srun -Q --chdir="$tmp" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ -n "${VERBOSE:-}" ]; then cat "$tmp/out" "$tmp/err" >&2; fi
}

# marked NAME: the command line that creates marker NAME, then runs the
# program: a refused step leaves no marker.
marked() {
  echo "touch $tmp/ran.$1; echo job=\$SLURM_JOB_ID; exec $APP"
}

# refused NAME WHAT LINE SRUN-ARGS...: the step is refused before the
# program runs, with LINE on stderr once.
refused() {
  name=$1 what=$2 line=$3
  shift 3
  sr "$@" sh -c "$(marked "$name") alloc 1M"
  [ "$rc" -ne 0 ] && [ ! -e "$tmp/ran.$name" ]
  tap $? "$what: refused, the program never starts"
  is "$(count "$line" "$tmp/err")" 1 "$what: one line says why"
}

# ---- the cap ---------------------------------------------------------------

sr --gpu-mem-limit=10M sh -c "$(marked cap) alloc 6M alloc 6M"
job=$(val 1 job)
is "$rc/$(val 2 rc)/$(val 3 rc)" 0/0/2 \
  "--gpu-mem-limit=10M: the second 6M allocation is denied"
is "$(count "group 'slurm.$job' has 6.0 MiB in use, group limit 10.0 MiB" "$tmp/err")" 1 \
  "the denial names the job's group and its cap"

sr --gpu-mem-limit=10M sh -c 'echo "$CUMEMGUARD_OPTIONS|$LD_PRELOAD|$SLURM_JOB_ID"'
is "$(cat "$tmp/out")" \
  "group=slurm.$((job + 1)),group_limit=10M,on_exceed=fail|$LIB|$((job + 1))" \
  "the task gets the library first in LD_PRELOAD and the job's options"

CUMEMGUARD_OPTIONS=stack_depth=4,group=mine,group_limit.0=1G,on_exceed=warn \
LD_PRELOAD=libm.so.6 sr --gpu-mem-limit=10M --gpu-mem-policy=wait \
  sh -c 'echo "$CUMEMGUARD_OPTIONS|$LD_PRELOAD"'
is "$(sed 's/slurm\.[0-9]*/slurm.J/' "$tmp/out")" \
  "stack_depth=4,group=slurm.J,group_limit=10M,on_exceed=wait|$LIB:libm.so.6" \
  "the user's options are kept but the plugin's keys, and so is LD_PRELOAD"

# The cases of tests/preload-cases.txt whose library is the plugin's: OLD
# as srun's LD_PRELOAD, WANT as the task's.  srun gets /dev/null for
# stdin, since it would read the loop's, the cases, for its task.
sed -e '/^#/d' -e '/^$/d' -e "s#@D@#${LIB%/*}#g" \
  "$srcdir/tests/preload-cases.txt" >"$tmp/cases"
while IFS='|' read -r old l want what; do
  [ "$l" = "$LIB" ] || continue
  [ "$old" = "(unset)" ] || export LD_PRELOAD="$old"
  sr --gpu-mem-limit=10M sh -c 'echo "$LD_PRELOAD"' </dev/null
  unset LD_PRELOAD
  is "$rc|$(cat "$tmp/out")" "0|$want" "LD_PRELOAD: $what"
done <"$tmp/cases"

# ---- two tasks, one cap ----------------------------------------------------

sr -n2 --gpu-mem-limit=10M "$APP" alloc 6M sleep 3000
is "$rc/$(grep -c 'rc=0' "$tmp/out")/$(grep -c 'rc=2' "$tmp/out")" 0/1/1 \
  "srun -n2: two tasks of 6M under one 10M cap: one is denied"

# ---- what a task sees ------------------------------------------------------

# The job's cap is a group's: frameworks size their pools from what the
# memory information says, so every view shows the cap, not the card.
sr --gpu-mem-limit=10M "$APP" alloc 2M info total 0 nvml 0 nvml2 0
is "$rc/$(val 2 free)/$(val 2 total)/$(val 3 bytes)" 0/8388608/10485760/10485760 \
  "a task sees the job's cap in cuMemGetInfo and cuDeviceTotalMem"
is "$(val 4 free)/$(val 4 total)/$(val 5 free)/$(val 5 total)" \
  8388608/10485760/8388608/10485760 "and in NVML's memory information"

# ---- reports ---------------------------------------------------------------

sr --gpu-mem-limit=10M --gpu-mem-report="$tmp/rep.%j.%s.%p.json" \
  sh -c "$(marked rep) alloc 2M"
job=$(val 1 job)
f=$(ls "$tmp"/rep."$job".0.*.json 2>/dev/null | head -n 1)
tap $([ -n "$f" ]; echo $?) "--gpu-mem-report: a report named with the job and step ids"
[ -z "$f" ] || is "$(q "$f" 'r["group"]["name"]')" "slurm.$job" \
  "the report names the job's group"

# ---- a job past its time limit ---------------------------------------------

# At the time limit Slurm sends the step's processes SIGTERM (SIGKILL
# KillWait later): the program writes its report as SIGTERM kills it.
timeout 200 sbatch --wait --quiet --chdir="$tmp" -o "$tmp/late.out" --time=1 \
  --wrap "srun --gpu-mem-limit=10M --gpu-mem-report=$tmp/late.%j.%p.json \
    $APP alloc 3M sleep 600000" >"$tmp/out" 2>"$tmp/err"
f=$(ls "$tmp"/late.*.json 2>/dev/null | head -n 1)
tap $([ -n "$f" ]; echo $?) "a job past its time limit leaves its report"
[ -z "$f" ] || is "$(q "$f" '(r["process"]["end"]["name"], r["summary"]["live_bytes"])')" \
  "('SIGTERM', 3145728)" "written as SIGTERM killed it, with the live memory"

# ---- status ----------------------------------------------------------------

sr --gpu-mem-limit=10M sh -c "$APP alloc 1M sleep 3000 & sleep 1;
  $LAUNCHER status; wait"
job=$(sed -n 's/^Slurm job \([0-9]*\): .*/\1/p' "$tmp/out")
grep -q "^Slurm job $job: cap 10.0 MiB per device" "$tmp/out"
tap $? "cumemguard status names the group by its Slurm job id"

# ---- site settings ---------------------------------------------------------

plugstack default_limit=20M max_limit=100M
sr "$APP" alloc 16M alloc 6M
is "$rc/$(val 1 rc)/$(val 2 rc)" 0/0/2 "default_limit=20M applies without the option"
is "$(count "group limit 20.0 MiB" "$tmp/err")" 1 "with the site's default"

refused max "--gpu-mem-limit=200M over max_limit=100M" \
  "srun: error: cumemguard: --gpu-mem-limit=200M is over the cluster's max_limit=100M" \
  --gpu-mem-limit=200M
refused bad "--gpu-mem-limit=10Q" \
  "srun: error: cumemguard: --gpu-mem-limit='10Q': expected a size" \
  --gpu-mem-limit=10Q
refused warn "--gpu-mem-policy=warn under max_limit" \
  "srun: error: cumemguard: --gpu-mem-policy=warn would let the job pass" \
  --gpu-mem-policy=warn
CUMEMGUARD_OPTIONS=limt=1G refused env "a bad CUMEMGUARD_OPTIONS" \
  "srun: error: cumemguard: unknown option 'limt=1G'" --gpu-mem-limit=10M

plugstack default_limt=20M
refused arg "a bad plugin argument" \
  "srun: error: cumemguard: plugstack.conf: unknown argument 'default_limt=20M'"

plugstack snapshot=often
refused snap "a bad snapshot period" \
  "srun: error: cumemguard: plugstack.conf snapshot='often': expected a duration such as 30s, 10m or 1h, from 1s to 24h, or 0"

# The site's snapshots reach the jobs that write reports.
mkdir -p "$tmp/rd"
plugstack report_dir="$tmp/rd" snapshot=1s
sr --gpu-mem-limit=10M "$APP" alloc 2M
f=$(ls "$tmp"/rd/*.json 2>/dev/null | head -n 1)
is "$([ -n "$f" ] && q "$f" 'r["options"]["snapshot"]')" 1 \
  "snapshot=1s in plugstack.conf: a report_dir job's reports are snapshotted"

plugstack_line "required $PLUGIN library=$tmp/none.so"
refused lib "a missing library" \
  "error: cumemguard: cannot preload $tmp/none.so: No such file or directory" \
  --gpu-mem-limit=10M
plugstack

# ---- an unusable segment, and the epilog -----------------------------------

# Jobs are numbered in turn, so the job after a held one is known.
held=$(timeout 30 sbatch --parsable --hold --wrap true 2>"$tmp/err")
timeout 30 scancel "$held"
next=$((held + 1))
printf 'not a segment' >"$SHM.$next"
chmod 600 "$SHM.$next"
refused seg "a corrupt segment" \
  "error: cumemguard: the job's GPU memory cap cannot be shared" \
  --gpu-mem-limit=10M
wait_for 20 test ! -e "$SHM.$next"
tap $? "the job's epilog removes its segment"

# Every process of the task dies by SIGKILL, so none removes the segment.
sr --gpu-mem-limit=10M sh -c "echo job=\$SLURM_JOB_ID; $APP alloc 1M sleep 60000 &
  sleep 0.5; ls $SHM.\$SLURM_JOB_ID; kill -9 \$! \$\$"
job=$(val 1 job)
is "$(grep -c "^$SHM.$job\$" "$tmp/out")" 1 "a killed job's processes leave its segment"
wait_for 20 test ! -e "$SHM.$job"
tap $? "the epilog removes it when the job ends"

# ---- sbatch ----------------------------------------------------------------

timeout 60 sbatch --wait --quiet --chdir="$tmp" -o "$tmp/batch.out" --gpu-mem-limit=10M \
  --wrap "srun $APP alloc 6M alloc 6M; $APP alloc 8M alloc 4M" \
  >"$tmp/out" 2>"$tmp/err"
is "$?/$(grep -c 'rc=0' "$tmp/batch.out")/$(grep -c 'rc=2' "$tmp/batch.out")" \
  0/2/2 "sbatch --gpu-mem-limit=10M caps its srun step and its script"

timeout 30 sbatch --wait --quiet --chdir="$tmp" --gpu-mem-limit=1Q -o "$tmp/b2.out" \
  --wrap "touch $tmp/ran.sbatch" >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && [ ! -e "$tmp/ran.sbatch" ]
tap $? "sbatch --gpu-mem-limit=1Q: refused, no job"
is "$(count "sbatch: error: cumemguard: --gpu-mem-limit='1Q'" "$tmp/err")" 1 \
  "sbatch says why in one line"

# ---- nothing left ----------------------------------------------------------

no_segments() {
  [ -z "$(our_segments)" ]
}
wait_for 20 no_segments
tap $? "no segment of this run's jobs is left in /dev/shm"
for f in $(our_segments); do echo "# left: $f"; done

done_testing
