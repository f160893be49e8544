#!/bin/sh
# cumemguard cdi: the CDI spec is valid by the CDI project's JSON schema and
# by the rules the schema leaves to the reference library (kind is
# vendor/class, device names, the lowest version that has what it uses),
# and, where Go and the reference library are installed, by that library's
# own loading and validation, which also shows what a runtime does with an
# image's own LD_PRELOAD.  Bad input is one line, exit 2, nothing written;
# --output is written whole.  Two processes started with one device's
# environment share its cap, and each sees it in its memory information.
. "$srcdir/tests/lib/defs.sh"
CDI_SRC=/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface
SCHEMA=$CDI_SRC/schema/schema.json
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.cdi-"*"MiB-$$"' EXIT
LIB_IN=/usr/lib/cumemguard/libcumemguard.so

"$LAUNCHER" cdi --limit 24GiB --limit 1.5G --limit 50% --limit 3000000 \
  --report-dir "$tmp" >"$tmp/spec.json" 2>"$tmp/err"
is "$?/$(grep -vc '^cumemguard: cdi: --device cumemguard.io/limit=' "$tmp/err")" 0/0 \
  "cdi writes a spec to standard output, and says each device's name on stderr"
is "$(sed 's/: a cap.*//' "$tmp/err" | tr '\n' ' ')" \
  "cumemguard: cdi: --device cumemguard.io/limit=24GiB cumemguard: cdi: --device cumemguard.io/limit=1.5G cumemguard: cdi: --device cumemguard.io/limit=50pct cumemguard: cdi: --device cumemguard.io/limit=3000000 " \
  "one line per device, with the name to pass to --device: the size as written, a percentage as NNpct"
is "$(sed -n 2p "$tmp/err")" \
  "cumemguard: cdi: --device cumemguard.io/limit=1.5G: a cap of 1.5 GiB (1610612736 bytes) on each GPU, shared by the container's processes" \
  "each line says the cap in bytes"

# ---- the schema, and the rules the schema leaves to the library ------------

"$PYTHON3" - "$SCHEMA" "$tmp/spec.json" >"$tmp/out" 2>&1 <<'PY'
import json, pathlib, sys, jsonschema
schema_path = pathlib.Path(sys.argv[1])
schema = json.load(open(schema_path))
resolver = jsonschema.RefResolver(schema_path.parent.as_uri() + "/", schema)
jsonschema.validate(json.load(open(sys.argv[2])), schema, resolver=resolver)
PY
tap $? "the spec passes the CDI JSON schema ($SCHEMA)"

"$PYTHON3" - "$tmp/spec.json" "$CUMEMGUARD_LIBRARY" "$tmp" \
  >"$tmp/out" 2>&1 <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
vendor, _, cls = s["kind"].partition("/")
# pkg/cdi/qualified-device.go: ValidateVendorName, ValidateClassName,
# ValidateDeviceName.
assert re.fullmatch(r"[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?", vendor), vendor
assert re.fullmatch(r"[A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?", cls), cls
names = [d["name"] for d in s["devices"]]
for n in names:
    assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?", n), n
assert names == ["24GiB", "1.5G", "50pct", "3000000"], names
assert len(set(names)) == len(names)
# Names starting with a digit need 0.5.0 (requiresV050); nothing needs more.
assert s["cdiVersion"] == "0.5.0", s["cdiVersion"]
# The schema leaves env entries unchecked (defs.json says "ref", not
# "$ref"); ValidateEnv wants NAME=VALUE with a name.
for d in s["devices"]:
    for e in d["containerEdits"]["env"]:
        assert isinstance(e, str) and e.find("=") > 0, e
env = s["devices"][0]["containerEdits"]["env"]
assert env == ["LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so",
               "CUMEMGUARD_OPTIONS=group=cdi-24GiB,group_limit=24GiB,"
               "report=%s/cumemguard.%%h.%%p.json" % sys.argv[3]], env
m = s["containerEdits"]["mounts"]
assert m[0] == {"hostPath": sys.argv[2],
                "containerPath": "/usr/lib/cumemguard/libcumemguard.so",
                "options": ["ro", "nosuid", "nodev", "bind"]}, m[0]
assert m[1] == {"hostPath": sys.argv[3], "containerPath": sys.argv[3],
                "options": ["rw", "nosuid", "nodev", "bind"]}, m[1]
print("ok")
PY
tap $? "kind, device names, version, env and mounts follow the CDI rules"

# ---- the reference library -------------------------------------------------

# Debian's Go packages build it offline in GOPATH mode; the build cache is
# kept in the build tree so that later runs take a second, not ten.
if command -v go >/dev/null 2>&1 && [ -d "$CDI_SRC/pkg/cdi" ]; then
  mkdir -p "$top_builddir/tests/cdi"
  GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOPROXY=off \
    GOCACHE=$(cd "$top_builddir" && pwd)/tests/cdi/go-cache \
    go build -o "$tmp/cdicheck" "$srcdir/tests/cdi/cdicheck.go" \
    >"$tmp/out" 2>&1
  tap $? "the reference library's checker builds offline"
  cp "$tmp/spec.json" "$tmp/cumemguard.json"
  "$tmp/cdicheck" "$tmp/cumemguard.json" >"$tmp/out" 2>&1
  tap $? "the reference library loads and validates the spec"
  is "$(grep -c '^cumemguard.io/limit=' "$tmp/out")" 4 \
    "it sees the four devices"
  line=$(grep '^cumemguard.io/limit=24GiB: ' "$tmp/out")
  case $line in
    *"LD_PRELOAD=/image.so|LD_PRELOAD=$LIB_IN|CUMEMGUARD_OPTIONS=group=cdi-24GiB,group_limit=24GiB,"*) st=0 ;;
    *) st=1 ;;
  esac
  tap $st "an image's LD_PRELOAD stays, and the spec's is appended after it"
  case $line in
    *"$CUMEMGUARD_LIBRARY>$LIB_IN(ro,nosuid,nodev,bind)"*) st=0 ;;
    *) st=1 ;;
  esac
  tap $st "the library is bind-mounted read-only"
else
  echo "ok $((tap_n += 1)) # SKIP the reference library's checker: no Go toolchain or" \
    "no golang-github-container-orchestrated-devices-container-device-interface-dev"
fi

# ---- --preload, bad input, --output ------------------------------------------

# The cases of tests/preload-cases.txt whose library is the spec's: OLD
# given as --preload (none when unset), WANT the devices' LD_PRELOAD.
sed -e '/^#/d' -e '/^$/d' -e "s#@D@#${LIB_IN%/*}#g" \
  "$srcdir/tests/preload-cases.txt" >"$tmp/cases"
while IFS='|' read -r old l want what; do
  [ "$l" = "$LIB_IN" ] || continue
  if [ "$old" = "(unset)" ]; then set --; else set -- --preload "$old"; fi
  "$LAUNCHER" cdi --limit 1G "$@" >"$tmp/out" 2>"$tmp/err" &&
    ! grep -v '^cumemguard: cdi: --device ' "$tmp/err" >/dev/null &&
    grep -qF "\"LD_PRELOAD=$want\"" "$tmp/out"
  tap $? "--preload: $what"
done <"$tmp/cases"

for bad in "--limit 24X" "--limit 0" "--limit 150%" "--limit" \
  "--limit 1G --limit 1GiB" "--limit 1G --report-dir relative" \
  "--limit 1G --report-dir $tmp/none" "--limit 1G --output $tmp/s.yaml" \
  "--limit 1G --snapshot 30s" "--limit 1G --report-dir $tmp --snapshot often" \
  "--limit 1G --bogus" "--limit 1G stray" "--limit 1G -- stray" \
  "--limit=1G --help=yes" "--lim 1G" "--limit 1G --output $tmp/.json" ""; do
  # shellcheck disable=SC2086
  "$LAUNCHER" cdi --output "$tmp/bad.json" $bad >"$tmp/out" 2>"$tmp/err"
  st=$?
  is "$st/$(wc -l <"$tmp/err")/$(ls -A "$tmp" | grep -c bad)" 2/1/0 \
    "cdi ${bad:-(no --limit)}: one line, exit 2, nothing written"
done
is "$(cat "$tmp/err")" "cumemguard: cdi needs at least one --limit SIZE" \
  "no --limit says so"
"$LAUNCHER" cdi --limit 24X 2>"$tmp/err"
is "$(cat "$tmp/err")" \
  "cumemguard: bad value '24X' for --limit: expected a size above 0 (4GiB, 1.5GB, 512M) or a share of the device (50%)" \
  "a bad size names the value and what was expected"

"$LAUNCHER" cdi --limit 1G --report-dir "$tmp" --snapshot 30s >"$tmp/out" 2>"$tmp/err"
is "$?/$(grep -c "\"CUMEMGUARD_OPTIONS=group=cdi-1G,group_limit=1G,report=$tmp/cumemguard.%h.%p.json,snapshot=30s\"" "$tmp/out")" \
  0/1 "--snapshot 30s: the containers' reports are rewritten every 30 s"
"$LAUNCHER" cdi --limit 4GB >"$tmp/out" 2>"$tmp/err"
is "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"][0]["name"])' "$tmp/out")/$(sed 's/: a cap.*//' "$tmp/err")" \
  "4GB/cumemguard: cdi: --device cumemguard.io/limit=4GB" \
  "--limit 4GB: the device is named 4GB, as the user wrote it"
"$LAUNCHER" cdi --limit 1G --snapshot 30s 2>"$tmp/err"
is "$(cat "$tmp/err")" \
  "cumemguard: --snapshot 30s needs --report-dir: a snapshot is a report" \
  "--snapshot without --report-dir says why"

mkdir "$tmp/cdi"
"$LAUNCHER" cdi --limit 1G --output "$tmp/cdi/cumemguard.json" >"$tmp/out"
is "$?/$(wc -c <"$tmp/out")/$(ls -A "$tmp/cdi")" 0/0/cumemguard.json \
  "--output writes the file and nothing else, no temporary left"
"$LAUNCHER" cdi --limit 1G >"$tmp/stdout.json"
cmp -s "$tmp/stdout.json" "$tmp/cdi/cumemguard.json"
tap $? "--output writes what standard output would show"
is "$(stat -c %a "$tmp/cdi/cumemguard.json")" 644 "the spec is world-readable"
# An unwritable directory (as user nobody when root, whom none stops).
chmod 555 "$tmp/cdi"
if [ "$(id -u)" -ne 0 ]; then
  "$LAUNCHER" cdi --limit 2G --output "$tmp/cdi/cumemguard.json" 2>"$tmp/err"
  st=$?
elif other_user; then
  as_nobody "$tmp/bin/cumemguard" cdi --limit 2G \
    --output "$tmp/cdi/cumemguard.json" 2>"$tmp/err"
  st=$?
else
  st=skip
fi
if [ "$st" != skip ]; then
  is "$st/$(grep -c '"1G"' "$tmp/cdi/cumemguard.json")/$(ls -A "$tmp/cdi")" \
    1/1/cumemguard.json \
    "a spec that cannot be written leaves the old one whole, and nothing beside it"
else
  echo "ok $((tap_n += 1)) # SKIP root, and user nobody cannot run copies in $tmp"
fi
chmod 755 "$tmp/cdi"

# ---- the edits at work -----------------------------------------------------

# Two processes with one device's environment (as a container's would be,
# the library at its host path) share its cap: the second gets what the
# first left.
"$LAUNCHER" cdi --limit 10M >"$tmp/one.json"
opts=$("$PYTHON3" -c '
import json, sys
e = json.load(open(sys.argv[1]))["devices"][0]["containerEdits"]["env"]
print(e[1].split("=", 1)[1].replace("cdi-10MiB", "cdi-10MiB-" + sys.argv[2]))' \
  "$tmp/one.json" $$)
CUMEMGUARD_OPTIONS="$opts,report=$tmp/a.%p.json" LD_PRELOAD=$CUMEMGUARD_LIBRARY \
  "$SIM/app_driver" alloc 6M await "$tmp/a.go" >"$tmp/a.out" 2>&1 &
until_line "$tmp/a.out" 'alloc i=0 .* rc=0'
CUMEMGUARD_OPTIONS="$opts,report=$tmp/b.%p.json" LD_PRELOAD=$CUMEMGUARD_LIBRARY \
  "$SIM/app_driver" info total 0 nvml 0 alloc 6M alloc 4M info \
  >"$tmp/out" 2>"$tmp/err"
is "$(val 4 rc)/$(val 5 rc)" 2/0 "the processes of one device share its cap"
is "$(val 1 free)/$(val 1 total)/$(val 2 bytes)" 4194304/10485760/10485760 \
  "a process sees the device's cap, less what the other holds, in cuMemGetInfo"
is "$(val 3 free)/$(val 3 total)/$(val 6 free)" 4194304/10485760/0 \
  "and in NVML's memory information; once the cap is full, free is 0"
: >"$tmp/a.go"
wait

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
