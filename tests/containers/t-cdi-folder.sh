#!/bin/sh
# cumemguard cdi mounts a portable folder whole, read-only, and preloads
# the library inside it; a library of an ordinary install is mounted alone,
# as before.  Runs anywhere: the folder here is the build's library in a
# folder marked as the portable build marks it.
. "$srcdir/tests/containers/defs.sh"

# spec LIBRARY: the spec for --limit 1GiB with the library at LIBRARY, in
# $tmp/spec.json; its LD_PRELOAD and first mount in $tmp/out.
spec() {
  CUMEMGUARD_LIBRARY=$1 "$LAUNCHER" cdi --limit 1GiB --report-dir "$tmp" \
    >"$tmp/spec.json" 2>"$tmp/err"
  "$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["devices"][0]["containerEdits"]["env"][0])
print(s["containerEdits"]["mounts"])' "$tmp/spec.json" >"$tmp/out"
}

f=$tmp/folder
mkdir -p "$f/bin" "$f/lib/deps"
cp "$CUMEMGUARD_LIBRARY" "$f/lib/"
echo "cumemguard, portable" >"$f/PORTABLE"
spec "$f/lib/libcumemguard.so"
is "$(cat "$tmp/out")" "LD_PRELOAD=/usr/lib/cumemguard/lib/libcumemguard.so
[{'hostPath': '$f', 'containerPath': '/usr/lib/cumemguard', 'options': ['ro', 'nosuid', 'nodev', 'bind']}, {'hostPath': '$tmp', 'containerPath': '$tmp', 'options': ['rw', 'nosuid', 'nodev', 'bind']}]" \
  "a portable folder is mounted whole, read-only, and its library preloaded"

rm "$f/PORTABLE"
spec "$f/lib/libcumemguard.so"
is "$(head -n 1 "$tmp/out")" "LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so" \
  "without PORTABLE beside lib/, the library alone (an ordinary install)"
tap "$(grep -qF "'hostPath': '$f/lib/libcumemguard.so', 'containerPath': '/usr/lib/cumemguard/libcumemguard.so'" "$tmp/out"; echo $?)" \
  "and it is mounted alone"

mkdir "$f/PORTABLE"
spec "$f/lib/libcumemguard.so"
is "$(head -n 1 "$tmp/out")" "LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so" \
  "PORTABLE must be a file"
rmdir "$f/PORTABLE"

# A library not named libcumemguard.so, or not in lib/, is never taken
# for one of a folder.
echo "cumemguard, portable" >"$f/PORTABLE"
cp "$CUMEMGUARD_LIBRARY" "$f/lib/libcumemguard-copy.so"
spec "$f/lib/libcumemguard-copy.so"
is "$(head -n 1 "$tmp/out")" "LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so" \
  "a library of another name is mounted alone"
mkdir -p "$f/other"
cp "$CUMEMGUARD_LIBRARY" "$f/other/"
echo "cumemguard, portable" >"$f/other/PORTABLE"
spec "$f/other/libcumemguard.so"
is "$(head -n 1 "$tmp/out")" "LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so" \
  "so is one whose folder is not lib/"

done_testing
