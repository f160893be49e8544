#!/bin/sh
# Containers for real: Podman with runc runs a CUDA program of two root
# filesystems under the spec that the portable folder's `cumemguard cdi
# --limit 1GiB --report-dir DIR --snapshot 1s` writes.  One root holds only
# the C library (this machine's) and a program built here; the other is
# Debian 11 (glibc 2.31) with the program built there.  The simulated
# driver and NVML reach the containers as NVIDIA's do, through a second
# CDI spec of a vendor kind that mounts them (sim.cumemguard.io/gpu=0),
# and its NVML lists processes by pids of the host, as NVIDIA's does in a
# PID namespace.  In each root: the cap holds, counting the context; the
# report reaches the host's DIR named after the container's host name and
# pid, and the host's reader reads it; a container killed outright leaves
# its last snapshot; a non-root user and a read-only root work; two
# processes of one container share one cap, two containers have one each,
# two containers of one pod share one; without the cumemguard device the
# program is not capped and has no LD_PRELOAD; without the vendor's device
# it finds no driver.  Podman is configured in the temporary directory; it
# needs no image registry and leaves nothing on the host.
. "$srcdir/tests/containers/defs.sh"
command -v podman >/dev/null 2>&1 ||
  skip_all "Podman is not installed (scripts/install-deps.sh installs it, with runc)"
command -v runc >/dev/null 2>&1 ||
  skip_all "runc is not installed (scripts/install-deps.sh installs it)"
need_portable

M=1048576
CAP=$((1024 * M))
C=$((200 * M)) # what each context costs on the simulated card
CDI=/var/run/cdi
KIND=sim.cumemguard.io/gpu
P=$tmp/podman
CG=/cmgtest-$$
R=$tmp/reports
mkdir -p "$P" "$R"
chmod 1777 "$R"

podman_setup

# ---- the specs ----------------------------------------------------------------

build_portable
# The specs go where Podman 4 reads them; one run of this test at a time
# on the machine, since another's spec would define the same devices.
mkdir -p "$CDI"
exec 8<"$CDI"
flock 8
# The Debian 11 root stays as make portable left it while containers run.
exec 7<"$top_builddir/portable.lock"
flock -s 7
for k in cumemguard.io/limit "$KIND"; do
  f=$(grep -l "\"kind\": *\"$k\"" /etc/cdi/*.json /etc/cdi/*.yaml \
    "$CDI"/*.json "$CDI"/*.yaml 2>/dev/null | head -n 1)
  [ -z "$f" ] || skip_all "$f defines CDI devices of kind $k already; these tests would clash with them"
done

env -u CUMEMGUARD_LIBRARY "$PORTABLE/bin/cumemguard" cdi --limit 1GiB \
  --report-dir "$R" --snapshot 1s --output "$CDI/cmgtest-$$-cumemguard.json" \
  >"$tmp/out" 2>"$tmp/err"
tap $? "the portable folder's cumemguard cdi writes the spec into $CDI"
ro_mount() {
  printf '{"hostPath": "%s", "containerPath": "%s", "options": ["ro", "nosuid", "nodev", "bind"]}' "$1" "$2"
}
L=/usr/lib/x86_64-linux-gnu
cat >"$CDI/cmgtest-$$-sim.json" <<EOF
{"cdiVersion": "0.5.0", "kind": "$KIND", "devices": [{"name": "0",
 "containerEdits": {
  "env": ["CMG_SIM_DEVICES=8G", "CMG_SIM_CONTEXT_BYTES=200M",
          "CMG_SIM_NVML_PIDNS=100000"],
  "mounts": [$(ro_mount "$PORTABLE_SIM/lib/libcuda.so.1" $L/libcuda.so.1),
             $(ro_mount "$PORTABLE_SIM/lib/libnvidia-ml.so.1" $L/libnvidia-ml.so.1)]}}]}
EOF

# ---- the root filesystems ---------------------------------------------------

# bare: this machine's C library, the program built here and the CUDA
# runtime it links, which ships with a program as pip's wheels ship it.
B=$tmp/bare
libc=$(ldd "$SIM/app_rt_shared" | awk '$1 == "libc.so.6" { print $3 }')
mkdir -p "$B/app" "$B$L" "$B/lib64" "$B/tmp"
cp "$SIM/app_rt_shared" "$B/app/"
cp -L "$SIM/.libs/libcudart.so.13" "$B$L/"
for l in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
  cp -L "${libc%/*}/$l" "$B$L/"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$B/lib64/"
# Debian 11: the root the folder was built in, the program built there
# too; overlaid (:O), so that nothing a container does reaches it.
D=$PORTABLE_CACHE/bullseye

# ---- the cases ----------------------------------------------------------------

# prun NAME ARGS...: podman run --rm with both devices, host name NAME;
# stdout in $tmp/out, stderr in $tmp/err, status in $rc.
prun() {
  _h=$1
  shift
  pm run --rm --network none --cgroup-parent "$CG" --hostname "$_h" \
    --device "$KIND=0" --device cumemguard.io/limit=1GiB "$@" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ -n "${VERBOSE:-}" ]; then cat "$tmp/out" "$tmp/err" >&2; fi
}

# logged NAME PATTERN: the log of container NAME has a line matching.
logged() {
  pm logs "$1" 2>/dev/null | grep -q -- "$2"
}

# environ NAME: the environment of container NAME's first process, in
# $tmp/env; fails unless it has the vendor's variables.
environ() {
  tr '\0' '\n' <"/proc/$(pm inspect -f '{{.State.Pid}}' "$1")/environ" \
    >"$tmp/env" && grep -q '^CMG_SIM_DEVICES=8G$' "$tmp/env"
}

# holds FILE BYTES: report FILE lists BYTES live.
holds() {
  [ -s "$1" ] && [ "$(q "$1" 'sum(l["bytes"] for l in r["leaks"] if l["kind"] != "context")' 2>/dev/null)" = "$2" ]
}

# cases NAME ROOT PROGRAM [SH]: every case in one root filesystem (ROOT,
# as --rootfs takes it); SH names its shell, if it has one.
cases() {
  n=$1 root=$2 app=$3 sh=${4:-}
  rf="--rootfs $root"

  # The cap, counting the context NVML lists under the host's pid.
  # shellcheck disable=SC2086
  prun "cmg-$n" $rf "$app" info alloc 600M alloc 600M info
  is "$rc/$(val 1 total)/$(val 1 free)" "0/$CAP/$((CAP - C))" \
    "$n: cudaMemGetInfo shows the 1 GiB cap, less the context"
  is "$(val 2 rc)/$(val 3 rc)/$(val 4 free)" "0/2/$((CAP - C - 600 * M))" \
    "$n: past the cap cudaMalloc fails with cudaErrorMemoryAllocation"
  is "$(grep -c "^cumemguard: denied cudaMalloc of 600.0 MiB (629145600 bytes) on device 0: group 'cdi-1GiB' has 800.0 MiB in use, group limit 1.0 GiB$" "$tmp/err")/$(noise)" \
    1/1 "$n: one line says so, and the report's line is the only other"
  echo "#   $n: $(grep '^cumemguard: denied' "$tmp/err")"
  f=$R/cumemguard.cmg-$n.1.json
  tap "$([ -s "$f" ]; echo $?)" "$n: the report reaches the host as $f (host name, pid 1)"
  echo "#   $n: $(grep '^cumemguard: report' "$tmp/err")"
  is "$(q "$f" '(r["process"]["hostname"], r["process"]["pid"], r["devices"][0]["footprint"]["source"], len(r["denials"]))')" \
    "('cmg-$n', 1, 'nvml', 1)" "$n: it names the container's host, pid 1, the context measured by NVML, one denial"
  validate "$f"
  "$top_builddir/cumemguard-report" "$f" >"$tmp/out" 2>"$tmp/err"
  is "$?/$(grep -c '^Leaked 600.0 MiB in 1 allocation' "$tmp/out")" 0/1 \
    "$n: cumemguard-report on the host reads it"

  # A container killed outright leaves its last snapshot.
  # shellcheck disable=SC2086
  pm run -d --name "k-$n" --network none --cgroup-parent "$CG" \
    --hostname "cmgk-$n" --device "$KIND=0" --device cumemguard.io/limit=1GiB \
    $rf "$app" alloc 300M sleep 60000 >"$tmp/out" 2>"$tmp/err"
  f=$R/cumemguard.cmgk-$n.1.json
  until_ok holds "$f" $((300 * M))
  tap $? "$n: --snapshot 1s: the report holds the live allocation while the container runs"
  environ "k-$n"
  is "$?/$(grep -c '^LD_PRELOAD=/usr/lib/cumemguard/lib/libcumemguard.so$' "$tmp/env")/$(grep -c '^CUMEMGUARD_OPTIONS=group=cdi-1GiB,group_limit=1GiB,' "$tmp/env")" \
    0/1/1 "$n: the capped container's process has the spec's LD_PRELOAD and options"
  pm kill --signal KILL "k-$n" >/dev/null 2>&1
  pm wait "k-$n" >"$tmp/out" 2>&1
  is "$(cat "$tmp/out")/$(holds "$f" $((300 * M)) && echo kept)" 137/kept \
    "$n: killed with SIGKILL, it leaves its last snapshot on the host"
  pm rm -f "k-$n" >/dev/null 2>&1

  # Another user, a read-only root.
  # shellcheck disable=SC2086
  prun "cmgu-$n" --user 1000:1000 --read-only $rf "$app" alloc 600M alloc 600M
  f=$R/cumemguard.cmgu-$n.1.json
  is "$rc/$(val 1 rc)/$(val 2 rc)/$(stat -c %u "$f" 2>/dev/null)" 0/0/2/1000 \
    "$n: --user 1000:1000 --read-only: capped, and the report is the user's"

  # Two processes of one container share its cap.
  if [ -n "$sh" ]; then
    # shellcheck disable=SC2086
    prun "cmg2-$n" $rf "$sh" -c "$app alloc 600M sleep 30000 >/tmp/first &
      until grep -q rc= /tmp/first; do sleep 0.05; done; $app alloc 600M"
    is "$rc/$(val 1 rc)" 0/2 "$n: two processes started by the container's shell share one cap"
  else
    # shellcheck disable=SC2086
    prun "cmg2-$n" $rf "$app" alloc 600M fork alloc 600M endfork
    is "$rc/$(val 1 rc)/$(val 2 rc)" 0/0/2 \
      "$n: two processes of one container (a fork: this root has no shell) share one cap"
  fi

  # Two containers have a cap each.
  # shellcheck disable=SC2086
  pm run -d --name "a-$n" --network none --cgroup-parent "$CG" \
    --device "$KIND=0" --device cumemguard.io/limit=1GiB \
    $rf "$app" alloc 600M sleep 60000 >/dev/null 2>&1
  until_ok logged "a-$n" 'alloc i=0 .* rc=0'
  # shellcheck disable=SC2086
  prun "cmgb-$n" $rf "$app" alloc 600M
  is "$rc/$(val 1 rc)" 0/0 "$n: a second container has a cap of its own"
  pm rm -f -t 0 "a-$n" >/dev/null 2>&1

  # Two containers of one pod share /dev/shm, and so one cap.
  pm pod create --name "pod-$n" --network none --cgroup-parent "$CG" \
    >"$tmp/out" 2>"$tmp/err"
  tap $? "$n: a pod (its infra container from Podman's own pause image, built locally)"
  # shellcheck disable=SC2086
  pm run -d --pod "pod-$n" --name "pa-$n" --device "$KIND=0" \
    --device cumemguard.io/limit=1GiB $rf "$app" alloc 600M sleep 60000 \
    >/dev/null 2>&1
  until_ok logged "pa-$n" 'alloc i=0 .* rc=0'
  # shellcheck disable=SC2086
  pm run --rm --pod "pod-$n" --device "$KIND=0" \
    --device cumemguard.io/limit=1GiB $rf "$app" alloc 600M \
    >"$tmp/out" 2>"$tmp/err"
  is "$?/$(val 1 rc)" 0/2 "$n: two containers of one pod share one cap"
  pm pod rm -f -t 0 "pod-$n" >/dev/null 2>&1

  # Without the cumemguard device: no cap, no LD_PRELOAD.
  # shellcheck disable=SC2086
  pm run -d --name "n-$n" --network none --cgroup-parent "$CG" \
    --device "$KIND=0" $rf "$app" alloc 600M alloc 600M info sleep 60000 \
    >/dev/null 2>&1
  until_ok logged "n-$n" '^info '
  pm logs "n-$n" >"$tmp/out" 2>&1
  environ "n-$n"
  is "$?/$(val 1 rc)/$(val 2 rc)/$(val 3 total)/$(grep -c -e '^LD_PRELOAD=' -e '^CUMEMGUARD_OPTIONS=' "$tmp/env")" \
    "0/0/0/$((8192 * M))/0" "$n: without the cumemguard device, no cap and no LD_PRELOAD"
  pm rm -f -t 0 "n-$n" >/dev/null 2>&1

  # Without the vendor's device the program finds no driver: the driver
  # comes only through the vendor's spec.
  # shellcheck disable=SC2086
  pm run --rm --network none --cgroup-parent "$CG" \
    --device cumemguard.io/limit=1GiB $rf "$app" info >"$tmp/out" 2>"$tmp/err"
  is "$(val 1 rc)" 35 "$n: without the vendor's device, no driver (cudaErrorInsufficientDriver)"
}

start=$(date +%s)
cases bare "$B" /app/app_rt_shared
echo "# the bare root: $(($(date +%s) - start)) s"
start=$(date +%s)
cases debian11 "$D:O" /build/src/tests/sim/app_rt_shared /bin/sh
echo "# Debian 11: $(($(date +%s) - start)) s"

done_testing
