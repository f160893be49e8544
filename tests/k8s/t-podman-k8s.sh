#!/bin/sh
# The device plugin's answers applied to containers for real, as CRI-O or
# containerd would apply them, by Podman with runc: the kubelet stand-in
# (kubelet.py) asks the plugin for units, and each Allocate response
# becomes a `podman run` of the portable folder's Debian 11 program: its
# CDI names as --device, or its environment and mounts as -e and -v (the
# GPUs in NVIDIA_VISIBLE_DEVICES then become the vendor's CDI devices, as
# NVIDIA's runtime makes them).  Two simulated GPUs of 8 GiB and 4 GiB
# reach containers through a vendor spec of kind sim.cumemguard.io/gpu,
# one device per UUID, each giving the container that GPU's "device node".
# Checked: each container's cap holds on the GPU it was given and
# cudaMemGetInfo shows it, two containers on one GPU keep a cap each, the
# units never add up past the GPU, the envs strategy gives the caps CDI
# gives, reports reach the host named after the container's group, and
# HAMi's variables alone give one cap to a whole container.
. "$srcdir/tests/containers/defs.sh"
. "$srcdir/tests/k8s/defs.sh"
command -v podman >/dev/null 2>&1 ||
  skip_all "Podman is not installed (scripts/install-deps.sh installs it, with runc): the kubelet stand-in's half runs in t-plugin.sh"
command -v runc >/dev/null 2>&1 ||
  skip_all "runc is not installed (scripts/install-deps.sh installs it)"
need_portable

CDI=/var/run/cdi
KIND=sim.cumemguard.io/gpu
P=$tmp/podman
CG=/cmgtest-k8s-$$
R=$tmp/reports
K=$tmp/k
mkdir -p "$P" "$R" "$tmp/nodes"
chmod 1777 "$R"
cleanup_more() {
  kill $ppid $kpid 2>/dev/null
  for f in $(cat "$tmp/specs" 2>/dev/null); do rm -f "$f"; done
}
podman_setup
build_portable
mkdir -p "$CDI"
exec 8<"$CDI"
flock 8
exec 7<"$top_builddir/portable.lock"
flock -s 7
for k in cumemguard.io/k8s "$KIND"; do
  f=$(grep -l "\"kind\": *\"$k\"" /etc/cdi/*.json /etc/cdi/*.yaml \
    "$CDI"/*.json "$CDI"/*.yaml 2>/dev/null | head -n 1)
  [ -z "$f" ] || skip_all "$f defines CDI devices of kind $k already; these tests would clash with them"
done

# The vendor's spec: the driver and NVML for every device, and each GPU's
# node (CMG_SIM_PRESENT) for its own.
L=/usr/lib/x86_64-linux-gnu
ro_mount() {
  printf '{"hostPath": "%s", "containerPath": "%s", "options": ["ro", "nosuid", "nodev", "bind"]}' "$1" "$2"
}
: >"$tmp/nodes/gpu0"
: >"$tmp/nodes/gpu1"
cat >"$CDI/cmgtest-$$-sim.json" <<EOF
{"cdiVersion": "0.5.0", "kind": "$KIND",
 "devices": [
  {"name": "$G0", "containerEdits": {"mounts": [$(ro_mount "$tmp/nodes/gpu0" /run/cmgsim/gpu0)]}},
  {"name": "$G1", "containerEdits": {"mounts": [$(ro_mount "$tmp/nodes/gpu1" /run/cmgsim/gpu1)]}}],
 "containerEdits": {
  "env": ["CMG_SIM_DEVICES=8G,4G", "CMG_SIM_PRESENT=/run/cmgsim"],
  "mounts": [$(ro_mount "$PORTABLE_SIM/lib/libcuda.so.1" $L/libcuda.so.1),
             $(ro_mount "$PORTABLE_SIM/lib/libnvidia-ml.so.1" $L/libnvidia-ml.so.1)]}}
EOF
D=$PORTABLE_CACHE/bullseye
APP=/build/src/tests/sim/app_rt_shared

# The plugin on this node: the same two GPUs, the portable folder's
# library, specs into $CDI.
stubs
start_kubelet "$K"
# start_plugin ARGS...: the plugin in the background; waits for its
# registration number N (the first argument).
start_plugin() {
  n=$1
  shift
  CMG_SIM_DEVICES=8G,4G "$PLUGIN" --plugin-dir "$K" --cdi-dir "$CDI" \
    --report-dir "$R" --library "$PORTABLE/lib/libcumemguard.so" \
    --gpu-cdi-kind "$KIND" "$@" >"$tmp/plugin.out" 2>>"$tmp/plugin.log" &
  ppid=$!
  until_ok registrations "$n"
}
start_plugin 1 --unit 1GiB

# flags_of: the podman flags of the answer in $tmp/answer, in $tmp/flags:
# its devices, or its environment and mounts.
flags_of() {
  "$PYTHON3" - "$tmp/answer" "$KIND" >"$tmp/flags" <<'PY'
import json, sys
a, kind = json.load(open(sys.argv[1])), sys.argv[2]
r = a["response"]["containerResponses"][0]
out = ["--device=" + d["name"] for d in r.get("cdiDevices", [])]
for k, v in sorted(r.get("envs", {}).items()):
    if k == "NVIDIA_VISIBLE_DEVICES":
        out += ["--device=%s=%s" % (kind, u) for u in v.split(",")]
    else:
        out.append("--env=%s=%s" % (k, v))
for m in r.get("mounts", []):
    out.append("--volume=%s:%s:%s" % (m["hostPath"], m["containerPath"],
                                      "ro" if m.get("readOnly") else "rw"))
print("\n".join(out))
PY
  for s in $(grep -o 'cumemguard.io/k8s=k8s-[0-9a-f]*' "$tmp/flags" | sed 's/.*=//'); do
    echo "$CDI/cumemguard-$s.json" >>"$tmp/specs"
  done
}

# run_allocated NAME ARGS...: `podman run` of the answer in $tmp/answer,
# then ARGS; output in $tmp/out and $tmp/err, status in $rc.
run_allocated() {
  name=$1
  shift
  flags_of
  # shellcheck disable=SC2046
  pm run --rm --network none --cgroup-parent "$CG" --hostname "$name" \
    $(cat "$tmp/flags") --rootfs "$D:O" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# ---- CDI ------------------------------------------------------------------------

kube '{"op": "allocate", "size": 3}'
cp "$tmp/answer" "$tmp/a3"
group=$(answer '[d["name"] for d in a["response"]["containerResponses"][0]["cdiDevices"]][-1].split("=")[1]')
run_allocated kube-a $APP uuid 0 info alloc 2G alloc 2G
is "$rc/$(at uuid uuid)/$(at info total)/$(at alloc rc 1)/$(at alloc rc 2)" \
  "0/$G1/$((3072 * M))/0/2" \
  "3 units (CDI): the container sees its GPU alone, cudaMemGetInfo shows the 3 GiB cap, and it holds"
echo "# the container (CDI): $(tr '\n' '|' <"$tmp/out")"
echo "#   $(grep '^cumemguard: denied' "$tmp/err")"
is "$(grep -c "denied cudaMalloc of 2.0 GiB (2147483648 bytes) on device 0: group '$group' has 2.0 GiB in use, group limit 3.0 GiB" "$tmp/err")" 1 \
  "one line says so, naming the container's group"
f=$(ls "$R/$group.kube-a."*.json 2>/dev/null | head -n 1)
tap "$([ -s "$f" ]; echo $?)" "its report reaches the host as $R/$group.kube-a.PID.json"

# A container holding 2 GiB of its 3, and another on the same GPU.
kube '{"op": "allocate", "size": 1}'
cp "$tmp/answer" "$tmp/a1"
is "$(answer 'sorted({i.split("::")[0] for i in a["ids"]})')" "['$G1']" \
  "1 unit: on the same GPU, the one it fills"
cp "$tmp/a3" "$tmp/answer"
flags_of
# shellcheck disable=SC2046
pm run -d --name kube-hold --network none --cgroup-parent "$CG" \
  $(cat "$tmp/flags") --rootfs "$D:O" $APP alloc 2G sleep 60000 >/dev/null 2>&1
until_ok sh -c "podman --runtime-flag root=$P/runc logs kube-hold 2>/dev/null | grep -q 'alloc i=0 .*rc=0'"
cp "$tmp/a1" "$tmp/answer"
run_allocated kube-b $APP info alloc 1G alloc 1M
is "$rc/$(at info total)/$(at alloc rc 1)/$(at alloc rc 2)" "0/$((1024 * M))/0/2" \
  "two containers on one GPU: the second keeps its own 1 GiB while the first holds 2 GiB"
pm rm -f -t 0 kube-hold >/dev/null 2>&1
kube '{"op": "allocate", "size": 5}'
is "$(answer 'sorted({i.split("::")[0] for i in a["ids"]})')" "['$G0']" \
  "the 4 GiB GPU's 4 units are handed out: 5 more go to the other"
kube '{"op": "release", "ids": []}'
kill -TERM $ppid
wait $ppid

# ---- environment and mounts ---------------------------------------------------

start_plugin 2 --unit 1GiB --strategy envs
kube '{"op": "allocate_ids", "ids": ["'$G0'::0", "'$G0'::1", "'$G0'::2"]}'
run_allocated kube-e $APP uuid 0 info alloc 2G alloc 2G
echo "# the container (envs): $(tr '\n' '|' <"$tmp/out")"
is "$rc/$(at uuid uuid)/$(at info total)/$(at alloc rc 1)/$(at alloc rc 2)" \
  "0/$G0/$((3072 * M))/0/2" \
  "3 units (--strategy envs): the same cap, on the GPU it was given"
kill -TERM $ppid
wait $ppid

# ---- HAMi's variables ---------------------------------------------------------

# As HAMi mounts its library: an /etc/ld.so.preload naming it, and the
# container's limit in its environment; here the library is ours.
echo /usr/lib/cumemguard/lib/libcumemguard.so >"$tmp/ld.so.preload"
pm run --rm --network none --cgroup-parent "$CG" --hostname kube-hami \
  --device "$KIND=$G0" --volume "$PORTABLE:/usr/lib/cumemguard:ro" \
  --volume "$tmp/ld.so.preload:/etc/ld.so.preload:ro" \
  --env CUDA_DEVICE_MEMORY_LIMIT_0=1024m \
  --env CUDA_DEVICE_MEMORY_SHARED_CACHE=/tmp/vgpu/kube-hami.cache \
  --rootfs "$D:O" /bin/sh -c "$APP alloc 600M sleep 30000 >/tmp/first &
    until grep -q rc= /tmp/first; do sleep 0.05; done; $APP info alloc 600M" \
  >"$tmp/out" 2>"$tmp/err"
is "$?/$(at info total)/$(at alloc rc)" "0/$((1024 * M))/2" \
  "HAMi's CUDA_DEVICE_MEMORY_LIMIT_0 alone: one 1 GiB cap for the container's two processes"

sed 's/^/# kubelet: /' "$tmp/kubelet.log" | grep -v ListAndWatch | head -n 8
done_testing
