#!/bin/sh
# The device plugin against a kubelet stand-in (kubelet.py, gRPC with
# Debian's python3-grpcio), on two simulated GPUs of 8 GiB and 4 GiB:
# registration, the devices it lists, preferred allocations, Allocate with
# CDI and with environment and mounts, bad IDs, a GPU that NVML loses and
# gets back, the kubelet starting again, its own socket removed, SIGTERM;
# and the caps an allocation gives, applied to a process on this machine.
# Containers for real are t-podman-k8s.sh's.
. "$srcdir/tests/k8s/defs.sh"
export CMG_SIM_DEVICES=8G,4G CMG_SIM_NVML_LOST=$tmp/lost
K=$tmp/k
mkdir -p "$tmp/cdi" "$tmp/reports"
stubs
tap $? "protoc makes the stand-in's stubs from src/k8s's .proto files"
start_kubelet "$K"
trap 'kill $kpid $ppid 2>/dev/null; rm -rf "$tmp"' EXIT

# plugin ARGS...: the plugin in the background, its log in $tmp/plugin.log.
plugin() {
  "$PLUGIN" --plugin-dir "$K" --cdi-dir "$tmp/cdi" --report-dir \
    "$tmp/reports" --library "$CUMEMGUARD_LIBRARY" \
    --pod-resources "$K/pod-resources.sock" --labels-dir "$tmp/labels" "$@" \
    >"$tmp/plugin.out" 2>"$tmp/plugin.log" &
  ppid=$!
}

# ---- bad input ----------------------------------------------------------------

bad() {
  want=$1
  shift
  "$PLUGIN" --plugin-dir "$K" --cdi-dir "$tmp/cdi" --library \
    "$CUMEMGUARD_LIBRARY" "$@" >"$tmp/out" 2>"$tmp/err"
  is "$?/$(wc -l <"$tmp/err")/$(cat "$tmp/err")" \
    "2/1/cumemguard-device-plugin: $want" "$* is refused in one line"
}
bad "bad value '4XB' for --unit: expected a size above 0 such as 1GiB, 512MiB or 1.5GB" --unit 4XB
bad "bad value '50%' for --unit: expected a size above 0 such as 1GiB, 512MiB or 1.5GB" --unit 50%
bad "--unit 5.0 GiB is larger than $G1 can hand out: 4.0 GiB, less --reserve 0 B" --unit 5GiB
bad "bad value 'nfs' for --strategy: expected cdi or envs" --strategy nfs
bad "bad value 'memory' for --resource: expected DOMAIN/NAME in lower case, such as cumemguard.io/gpu-memory" --resource memory
bad "unknown option '--uni'; try 'cumemguard-device-plugin --help'" --uni 1GiB
bad "bad value 'soon' for --cdi-keep: expected a duration from 1ms to 24h, such as 10m, 90s or 1h" --cdi-keep soon
is "$(ls -A "$K" | grep -v '^kubelet.sock$\|^cmd$\|^pod-resources.sock$' | wc -l)/$(ls -A "$tmp/cdi" | wc -l)" 0/0 \
  "and nothing is written"

# ---- registration and the list ------------------------------------------------

plugin --unit 1GiB --reserve 512MiB
until_ok registrations 1
tap $? "the plugin registers with the kubelet"
until_ok test -s "$K/devices.json"
is "$(grep -c '^Register: version v1beta1 endpoint cumemguard.sock resource cumemguard.io/gpu-memory preferred True$' "$tmp/kubelet.log")/$(grep -c '^GetDevicePluginOptions: pre_start_required False get_preferred_allocation_available True$' "$tmp/kubelet.log")" \
  1/1 "Register with v1beta1, the resource and its endpoint; then the options"
is "$(devices 'sorted(d) == sorted(["'$G0'::%d" % k for k in range(7)] + ["'$G1'::%d" % k for k in range(3)]) and set(d.values()) == {"Healthy"}')" True \
  "ListAndWatch: 7 units of 1 GiB on the 8 GiB GPU, 3 on the 4 GiB one, less the 512 MiB reserve, all Healthy"

kube '{"op": "preferred", "size": 2, "must": ["'$G0'::3"]}'
is "$(answer 'sorted(a["ids"])')" "['$G0::0', '$G0::3']" \
  "GetPreferredAllocation honours must_include: its GPU, and the ID itself"

# ---- allocations ----------------------------------------------------------------

kube '{"op": "allocate", "size": 2}'
is "$(answer 'sorted({i.split("::")[0] for i in a["ids"]})')" "['$G1']" \
  "2 units: on one GPU, the one they fill best"
cp "$tmp/answer" "$tmp/first"
group=$(answer 'a["response"]["containerResponses"][0]["cdiDevices"][1]["name"].split("=")[1]')
is "$(answer '[d["name"] for d in a["response"]["containerResponses"][0]["cdiDevices"]]')" \
  "['nvidia.com/gpu=$G1', 'cumemguard.io/k8s=$group']" \
  "CDI: the GPU as NVIDIA's kind names it, and the container's cumemguard device"
spec=$tmp/cdi/cumemguard-$group.json
is "$("$PYTHON3" -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["kind"], s["devices"][0]["name"], s["devices"][0]["containerEdits"]["env"][1])' "$spec")" \
  "cumemguard.io/k8s $group CUMEMGUARD_OPTIONS=group=$group,group_limit=0,group_limit.$G1=2147483648,report=$tmp/reports/$group.%h.%p.json" \
  "its spec, written before the answer: one group, 2 GiB on that GPU, 0 on any other"
kube '{"op": "allocate", "size": 5}'
is "$(answer 'sorted({i.split("::")[0] for i in a["ids"]})')" "['$G0']" \
  "5 units: on the GPU that has them"
kube '{"op": "allocate", "size": 3}'
is "$(answer 'sorted({i.split("::")[0] for i in a["ids"]})')/$(answer 'len(a["response"]["containerResponses"][0]["cdiDevices"])')" \
  "['$G0', '$G1']/3" "3 units when no GPU has them alone: on two, each GPU named"
opts=$(answer 'a["response"]["containerResponses"][0]["cdiDevices"][2]["name"].split("=")[1]')
is "$(grep -o "group_limit.$G0=[0-9]*\|group_limit.$G1=[0-9]*" "$tmp/cdi/cumemguard-$opts.json" | tr '\n' ' ')" \
  "group_limit.$G0=2147483648 group_limit.$G1=1073741824 " \
  "and a cap on each, as many units as it has there"
kube '{"op": "allocate", "size": 1}'
is "$(answer 'a.get("error")')" "not enough units: 0 free" \
  "the units handed out never add up past a GPU: none is left"
n=$(ls "$tmp/cdi" | wc -l)
kube '{"op": "allocate_ids", "ids": ["GPU-bogus::0"]}'
is "$(answer 'a["code"]')/$(answer 'a["details"]')" \
  "INVALID_ARGUMENT/Allocate: unknown device ID 'GPU-bogus::0': expected one this plugin advertised for cumemguard.io/gpu-memory (GPU-<uuid>::<unit>)" \
  "Allocate of an ID never advertised: a gRPC error naming it"
is "$(ls "$tmp/cdi" | wc -l)" "$n" "and nothing is written"
is "$(grep -c "^cumemguard-device-plugin: allocated 2 units to group $group: $G1 2.0 GiB$" "$tmp/plugin.log")" 1 \
  "the plugin's log names each group and its caps"

# The first container's caps, on this machine's simulated GPUs (the
# runtime would give it only its GPU; here it sees both).
env $("$PYTHON3" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["devices"][0]["containerEdits"]["env"][1:]))' "$spec") \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" device 1 info alloc 2G \
  alloc 1M device 0 info alloc 1M >"$tmp/out" 2>"$tmp/err"
is "$(at info total 1)/$(at alloc rc 1)/$(at alloc rc 2)/$(at info total 2)/$(at alloc rc 3)" \
  "$((2048 * M))/0/2/0/2" \
  "the spec's options: 2 GiB on its GPU, seen as the total; nothing on the other"

# ---- the operator's view ---------------------------------------------------------

# The kubelet's PodResources says which pod holds the first container's
# units; status and its metrics name the group's pod.
ids=$("$PYTHON3" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["ids"]))' "$tmp/first")
kube '{"op": "pods", "pods": [{"name": "train-0", "namespace": "ml", "containers": [{"name": "worker", "resource": "cumemguard.io/gpu-memory", "ids": '"$ids"'}]}]}'
until_ok test -s "$tmp/labels/$group"
is "$(cat "$tmp/labels/$group" | tr '\n' ' ')" "namespace=ml pod=train-0 container=worker " \
  "the plugin writes what PodResources says of the group's container"
: >"$tmp/m.out"
env $("$PYTHON3" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["devices"][0]["containerEdits"]["env"][1:]))' "$spec") \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" device 1 alloc 1G \
  await "$tmp/m.go" >"$tmp/m.out" 2>&1 &
mpid=$!
until_line "$tmp/m.out" '^alloc i=0 .*rc=0'
CUMEMGUARD_K8S_DIR=$tmp/labels "$LAUNCHER" status "$group" >"$tmp/out" 2>&1
is "$(head -n 1 "$tmp/out" | sed 's/:.*//')" "pod ml/train-0, container worker (group $group)" \
  "cumemguard status names the group's pod, namespace and container"
CUMEMGUARD_K8S_DIR=$tmp/labels "$LAUNCHER" status "$group" --json >"$tmp/out" 2>&1
is "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["groups"][0]["kubernetes"])' "$tmp/out")" \
  "{'namespace': 'ml', 'pod': 'train-0', 'container': 'worker'}" "and so does its JSON"
CUMEMGUARD_K8S_DIR=$tmp/labels "$LAUNCHER" status --prometheus >"$tmp/out" 2>&1
is "$(grep -c "^cumemguard_group_used_bytes{group=\"$group\",namespace=\"ml\",pod=\"train-0\",pod_container=\"worker\",uid=\"$(id -u)\",device=\"1\",uuid=\"GPU-c36d6751-5e1a-4d0c-9a77-73696d677001\"} $((1024 * M))$" "$tmp/out")" 1 \
  "and its metrics carry the labels"
: >"$tmp/m.go"
wait $mpid
kube '{"op": "pods", "pods": []}'
until_ok sh -c "! test -e '$tmp/labels/$group'"
tap $? "a container gone from PodResources: its file goes"

# ---- health ---------------------------------------------------------------------

echo 1 >"$tmp/lost"
until_ok sh -c "grep -q '^ListAndWatch: 10 devices, 7 Healthy, 3 Unhealthy$' '$tmp/kubelet.log'"
tap $? "NVML loses the 4 GiB GPU: its 3 units turn Unhealthy in the stream"
is "$(devices 'sorted(i for i, h in d.items() if h == "Unhealthy") == ["'$G1'::%d" % k for k in range(3)]')/$(grep -c "^cumemguard-device-plugin: $G1 is unhealthy: NVML says .*(15)$" "$tmp/plugin.log")" \
  True/1 "those of that GPU, and the plugin says why"
rm "$tmp/lost"
until_ok sh -c "[ \$(grep -c '^ListAndWatch: 10 devices, 10 Healthy, 0 Unhealthy$' '$tmp/kubelet.log') -ge 2 ]"
tap $? "it comes back: Healthy again"

# ---- restarts and stopping ----------------------------------------------------

kube '{"op": "restart"}'
until_ok registrations 2
tap $? "the kubelet starts again (kubelet.sock made anew): the plugin registers again"
rm "$K/cumemguard.sock"
until_ok registrations 3
tap $? "its own socket removed: it serves it again, and registers again"
is "$(grep -c "^cumemguard-device-plugin: $K/cumemguard.sock is gone: serving it again$" "$tmp/plugin.log")" 1 \
  "and says so"
kill -TERM $ppid
wait $ppid
is "$?/$(test -e "$K/cumemguard.sock" && echo left || echo gone)/$(tail -n 1 "$tmp/plugin.log")" \
  "0/gone/cumemguard-device-plugin: stopped" "SIGTERM: it stops cleanly and removes its socket"

# ---- environment and mounts -------------------------------------------------

plugin --unit 1GiB --strategy envs --resource cumemguard.io/gpu-memory-envs
until_ok registrations 4
kube '{"op": "release", "ids": []}'
until_ok sh -c "grep -q 'resource cumemguard.io/gpu-memory-envs' '$tmp/kubelet.log'"
kube '{"op": "allocate_ids", "ids": ["'$G1'::0", "'$G1'::1"]}'
is "$(answer 'sorted(a["response"]["containerResponses"][0]["envs"])')" \
  "['CUMEMGUARD_OPTIONS', 'LD_PRELOAD', 'NVIDIA_VISIBLE_DEVICES']" \
  "--strategy envs: the options, the library preloaded, the GPU's visibility"
is "$(answer 'a["response"]["containerResponses"][0]["envs"]["NVIDIA_VISIBLE_DEVICES"]')/$(answer 'a["response"]["containerResponses"][0]["envs"]["LD_PRELOAD"]')" \
  "$G1//usr/lib/cumemguard/libcumemguard.so" "the GPU by UUID, the library where it is mounted"
is "$(answer '[(m["hostPath"], m["containerPath"], m.get("readOnly", False)) for m in a["response"]["containerResponses"][0]["mounts"]]')" \
  "[('$CUMEMGUARD_LIBRARY', '/usr/lib/cumemguard/libcumemguard.so', True), ('$tmp/reports', '$tmp/reports', False)]" \
  "the library mounted read-only, the reports read-write"
opts=$(answer 'a["response"]["containerResponses"][0]["envs"]["CUMEMGUARD_OPTIONS"]')
is "$(echo "$opts" | sed 's/group=k8s-[0-9a-f]*/group=G/; s/report=.*\/k8s-[0-9a-f]*\./report=R./')" \
  "group=G,group_limit=0,group_limit.$G1=2147483648,report=R.%h.%p.json" \
  "the same caps as with CDI"
env CUMEMGUARD_OPTIONS="$opts" LD_PRELOAD="$CUMEMGUARD_LIBRARY" \
  "$SIM/app_driver" device 1 info alloc 2G alloc 1M >"$tmp/out" 2>"$tmp/err"
is "$(at info total)/$(at alloc rc 1)/$(at alloc rc 2)" "$((2048 * M))/0/2" \
  "which hold as the CDI spec's do"
kill -TERM $ppid
wait $ppid

# ---- the specs of containers gone ---------------------------------------------

# Specs stay while PodResources lists a container holding their units, and
# go once none has for --cdi-keep; the CDI folder's other files stay.
ours() {
  ls "$tmp/cdi" | grep '^cumemguard-k8s-' | tr '\n' ' '
}
before=$(ls "$tmp/cdi" | grep -c '^cumemguard-k8s-')
[ "$before" -ge 3 ]
tap $? "the allocations above left several specs ($before)"
echo '{}' >"$tmp/cdi/nvidia.yaml"
echo '{}' >"$tmp/cdi/cumemguard-k8s-mine.json"
kube '{"op": "pods", "pods": [{"name": "train-0", "namespace": "ml", "containers": [{"name": "worker", "resource": "cumemguard.io/gpu-memory", "ids": '"$ids"'}]}]}'
plugin --unit 1GiB --cdi-keep 2s
until_ok registrations 5
until_ok sh -c "[ '$(echo cumemguard-$group.json) ' = \"\$(ls '$tmp/cdi' | grep '^cumemguard-k8s-' | grep -v mine | tr '\n' ' ')\" ]"
is "$before/$(ours)" "$before/cumemguard-$group.json cumemguard-k8s-mine.json " \
  "after --cdi-keep, the specs of groups no container holds are gone; the held one stays"
is "$(grep -c "^cumemguard-device-plugin: removed $tmp/cdi/cumemguard-k8s-[0-9a-f]*\.json: no container has held group k8s-[0-9a-f]* for 2 s$" "$tmp/plugin.log")" \
  $((before - 1)) "and the plugin says so for each"
is "$(test -e "$tmp/cdi/nvidia.yaml" && echo kept)" kept "a file not of ours stays"
kube '{"op": "pods", "pods": []}'
until_ok sh -c "! test -e '$spec'"
tap $? "its container gone from PodResources, the last spec goes too"
kill -TERM $ppid
wait $ppid

sed 's/^/# kubelet: /' "$tmp/kubelet.log" | head -n 12
done_testing
