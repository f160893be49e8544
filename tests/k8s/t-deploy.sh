#!/bin/sh
# deploy/kubernetes/ parses as Kubernetes objects with the Kubernetes
# client's own models (Debian's python3-kubernetes): the DaemonSet mounts
# every host folder the plugin needs at the path it names, and passes the
# plugin the flags it reads; the pod asks for 8 units of the resource the
# DaemonSet advertises.  The flags are checked by the plugin itself.
. "$srcdir/tests/k8s/defs.sh"
"$PYTHON3" -c 'import kubernetes, yaml' 2>/dev/null ||
  skip_all "Debian's python3-kubernetes and python3-yaml are not installed (scripts/install-deps.sh installs them)"

"$PYTHON3" - "$srcdir/deploy/kubernetes" >"$tmp/out" 2>"$tmp/err" <<'PY'
import json, sys, yaml
from kubernetes.client import ApiClient

class Response:
    def __init__(self, obj):
        self.data = json.dumps(obj)

api = ApiClient()
def load(name, kind):
    docs = list(yaml.safe_load_all(open(sys.argv[1] + "/" + name)))
    assert len(docs) == 1, name
    obj = api.deserialize(Response(docs[0]), kind)
    print(name, "parses as", kind, docs[0]["apiVersion"], docs[0]["kind"])
    return obj

ds = load("daemonset.yaml", "V1DaemonSet")
pod = load("pod.yaml", "V1Pod")
spec = ds.spec.template.spec
c = spec.containers[0]
mounts = {m.name: m.mount_path for m in c.volume_mounts}
hosts = {v.name: v.host_path.path for v in spec.volumes}
print("mounted at their host paths:",
      all(mounts[n] == hosts[n] for n in hosts), sorted(hosts.values()))
flags = dict(a[2:].split("=", 1) for a in c.args)
print("flags:", " ".join("%s=%s" % kv for kv in sorted(flags.items())))
needed = {"plugin-dir", "cdi-dir", "report-dir", "library", "pod-resources",
          "labels-dir"}
print("folders mounted:", all(any(flags[f].startswith(p) for p in hosts.values())
                             for f in needed))
print("selector matches:", ds.spec.selector.match_labels ==
      ds.spec.template.metadata.labels)
print("pod asks:", pod.spec.containers[0].resources.limits)
PY
is "$?/$(grep -c ' parses as ' "$tmp/out")" 0/2 \
  "daemonset.yaml and pod.yaml parse as V1DaemonSet and V1Pod"
is "$(grep '^mounted at' "$tmp/out")" \
  "mounted at their host paths: True ['/opt/cumemguard', '/var/lib/kubelet/device-plugins', '/var/lib/kubelet/pod-resources', '/var/log/cumemguard', '/var/run/cdi', '/var/run/cumemguard/k8s']" \
  "the DaemonSet mounts the device-plugins folder, the pod-resources socket's, the CDI folder, the reports, the portable folder and the labels' folder, each at its host path"
is "$(grep '^folders mounted' "$tmp/out")/$(grep '^selector' "$tmp/out")" \
  "folders mounted: True/selector matches: True" \
  "every folder a flag names is mounted; the selector picks the template"
is "$(grep '^pod asks' "$tmp/out")" "pod asks: {'cumemguard.io/gpu-memory': '8'}" \
  "the pod asks for 8 units of cumemguard.io/gpu-memory"
flags=$(sed -n 's/^flags: //p' "$tmp/out")
is "$(echo "$flags" | grep -o 'resource=[^ ]*')" "resource=cumemguard.io/gpu-memory" \
  "the resource the pod asks for is the one the DaemonSet advertises"

# The DaemonSet's flags, as the plugin reads them (its folders here).
mkdir -p "$tmp/k" "$tmp/cdi" "$tmp/r"
args=$(echo "$flags" | tr ' ' '\n' | sed 's/^/--/' | grep -v -e '^--plugin-dir' \
  -e '^--cdi-dir' -e '^--report-dir' -e '^--library' -e '^--pod-resources' \
  -e '^--labels-dir' | tr '\n' ' ')
# shellcheck disable=SC2086
CMG_SIM_DEVICES=8G timeout 3 "$PLUGIN" $args --plugin-dir "$tmp/k" \
  --cdi-dir "$tmp/cdi" --report-dir "$tmp/r" --library "$CUMEMGUARD_LIBRARY" \
  --pod-resources "$tmp/k/none.sock" --labels-dir "$tmp/l" \
  >/dev/null 2>"$tmp/err"
is "$?/$(grep -c 'units of 1.0 GiB' "$tmp/err")" 124/1 \
  "the plugin takes the DaemonSet's flags and serves until stopped"

done_testing
