# Sourced by tests/k8s/t-*.sh: the integration tests' helpers, the device
# plugin and the kubelet stand-in (kubelet.py) with its stubs, and `kube`,
# which hands the stand-in a command and waits for its answer.
# (tests/containers/defs.sh may have sourced them already.)
[ -n "${tap_n+set}" ] || . "$srcdir/tests/lib/defs.sh"
PLUGIN=$top_builddir/cumemguard-device-plugin
KUBELET=$srcdir/tests/k8s/kubelet.py
M=1048576
G0=GPU-c36d6751-5e1a-4d0c-9a77-73696d677000
G1=GPU-c36d6751-5e1a-4d0c-9a77-73696d677001

# skip_all REASON: the whole test is skipped, in one line.
skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}

[ -x "$PLUGIN" ] ||
  skip_all "cumemguard-device-plugin was not built (configure found no libgrpc++, protoc or grpc_cpp_plugin; scripts/install-deps.sh installs them)"
"$PYTHON3" -c 'import grpc, google.protobuf' 2>/dev/null ||
  skip_all "Debian's python3-grpcio and python3-protobuf are not installed (scripts/install-deps.sh installs them)"

# stubs: the stand-in's Python code for the two .proto files, in $tmp/stubs.
stubs() {
  mkdir -p "$tmp/stubs"
  protoc -I"$srcdir/src/k8s" --python_out="$tmp/stubs" \
    --grpc_out="$tmp/stubs" --plugin=protoc-gen-grpc="$(command -v grpc_python_plugin)" \
    "$srcdir/src/k8s/deviceplugin.proto" "$srcdir/src/k8s/podresources.proto"
}

# start_kubelet DIR: the stand-in on DIR/kubelet.sock, its transcript in
# $tmp/kubelet.log.
start_kubelet() {
  kdir=$1
  mkdir -p "$kdir"
  "$PYTHON3" "$KUBELET" "$kdir" "$tmp/stubs" >"$tmp/kubelet.log" 2>&1 &
  kpid=$!
  until_ok test -S "$kdir/kubelet.sock"
}

kube_n=0
# kube JSON: a command for the stand-in; its answer in $tmp/answer.
kube() {
  kube_n=$((kube_n + 1))
  _c=$kdir/cmd/$(printf %04d $kube_n)
  printf '%s\n' "$1" >"$_c.tmp" && mv "$_c.tmp" "$_c.json"
  until_ok test -e "$_c.out"
  cp "$_c.out" "$tmp/answer"
}

# answer EXPR: a Python expression over the stand-in's answer `a`.
answer() {
  "$PYTHON3" -c 'import json, sys
a = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$tmp/answer" "$1"
}

# devices EXPR: a Python expression over the last ListAndWatch list `d`
# (ID -> health).
devices() {
  "$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$kdir/devices.json" "$1" 2>/dev/null
}

# registrations N: the stand-in has been registered with N times.
registrations() {
  [ "$(cat "$kdir/registrations" 2>/dev/null)" = "$1" ]
}
