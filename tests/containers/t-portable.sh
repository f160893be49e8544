#!/bin/sh
# The portable folder (make portable) holds the library, the launcher, the
# reader and their dependencies, and keeps to its floor: no file asks for a
# GLIBC_ version above 2.28 (objdump -T), nor for a shared library outside
# the folder other than the C library's own (readelf -d, and what the
# loader resolves), and every symbol resolves under Debian 11's glibc.  The same check fails for the library of this build,
# made against this machine's glibc.  From the folder, the launcher finds
# the library beside it and cumemguard cdi mounts the whole folder.
. "$srcdir/tests/containers/defs.sh"
need_portable
FLOOR=2.28
# The C library's own files: what every image with a C library has.
CLIB='libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2'

# floor FILE DEPDIR: one line per thing FILE asks for beyond the floor:
# a GLIBC_ version above it, or a library neither of the C library nor in
# DEPDIR; nothing when it keeps to it.
floor() {
  objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u |
    while read -r v; do
      n=${v#GLIBC_}
      # Versions compare by their numbers: 2.3.4 < 2.28 < 2.34.
      if [ "$(printf '%s\n%s\n' "$n" "$FLOOR" | sort -t. -k1,1n -k2,2n -k3,3n |
        tail -n 1)" != "$FLOOR" ]; then
        echo "asks for $v"
      fi
    done
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r lib; do
    case " $CLIB " in *" $lib "*) continue ;; esac
    [ -f "$2/$lib" ] || echo "needs $lib, which is not in the folder"
  done
}

# highest FILE...: the highest GLIBC_ version the files ask for.
highest() {
  objdump -T "$@" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' |
    sort -t. -k2,2n -k3,3n -u | tail -n 1
}

build_portable
for f in bin/cumemguard bin/cumemguard-report lib/libcumemguard.so \
  lib/deps/libunwind.so.8 lib/deps/libcjson.so.1 PORTABLE; do
  tap "$([ -s "$PORTABLE/$f" ]; echo $?)" "the folder has $f"
done
# cJSON is the reader's alone: the library and the launcher write JSON
# with the core's writer.
for f in lib/libcumemguard.so bin/cumemguard; do
  if readelf -d "$PORTABLE/$f" | grep -q libcjson; then st=1; else st=0; fi
  tap $st "$f needs no libcjson"
done

# ---- the floor ---------------------------------------------------------------

deps=$PORTABLE/lib/deps
files=$(cd "$PORTABLE" && find bin lib -type f | sort)
for f in $files; do
  floor "$PORTABLE/$f" "$deps" >"$tmp/out" 2>&1
  tap "$([ ! -s "$tmp/out" ]; echo $?)" \
    "$f: GLIBC_$FLOOR at most, and only the C library beyond lib/deps"
done
echo "# objdump -T, every file of the folder: highest $(cd "$PORTABLE" && highest $files)"
grep -q "^Its files ask for $(cd "$PORTABLE" && highest $files) at most" \
  "$PORTABLE/PORTABLE"
tap $? "PORTABLE names that version"

# The loader resolves every dependency inside the folder or to the C
# library's own files, through the run paths alone.
for f in bin/cumemguard bin/cumemguard-report lib/libcumemguard.so; do
  env -u LD_LIBRARY_PATH ldd "$PORTABLE/$f" | sed 's#/bin/\.\./lib/#/lib/#' |
    awk -v dir="$PORTABLE/lib/deps/" -v clib=" $CLIB " '
      $2 == "=>" && index($3, dir) != 1 && index(clib, " " $1 " ") == 0 {
        print; bad = 1 }
      /not found/ { print; bad = 1 }
      END { exit bad }' >"$tmp/out"
  tap $? "$f: the loader finds its libraries in lib/deps"
done

# Under Debian 11's C library (the root the folder was built in): every
# symbol the files need is found (ldd -r), and the library preloads into a
# program of that root.  A symbol the C library moved (shm_open left
# librt for libc in glibc 2.34) shows only there.
D=$PORTABLE_CACHE/bullseye
in=/tmp/cmg-portable-$$
(
  flock 9
  rm -rf "$D$in"
  cp -a "$PORTABLE" "$D$in"
  for f in $files; do
    chroot "$D" /usr/bin/ldd -r "$in/$f" 2>&1 |
      grep -e 'undefined symbol' -e 'not found' | sed "s#^#$f: #"
  done >"$tmp/out"
  chroot "$D" /usr/bin/env LD_PRELOAD="$in/lib/libcumemguard.so" /bin/true \
    >>"$tmp/out" 2>&1
  rm -rf "$D$in"
) 9>"$top_builddir/portable.lock"
tap "$([ ! -s "$tmp/out" ]; echo $?)" \
  "under Debian 11's glibc every symbol resolves, and the library preloads"

# The check can fail: this build's own library asks this machine's glibc
# for more, and needs libunwind from the system.
floor "$CUMEMGUARD_LIBRARY" "$tmp/none" >"$tmp/host"
glibc=$(ldd --version | sed -n '1s/.* //p')
case $glibc in
  2.1? | 2.2[0-8]) echo "ok $((tap_n += 1)) # SKIP this machine's glibc $glibc is not above the floor" ;;
  *)
    grep -q '^asks for GLIBC_2\.[3-9][0-9]' "$tmp/host" &&
      grep -q '^needs libunwind.so.8, which is not in the folder' "$tmp/host"
    tap $? "the check fails for this build's library (glibc $glibc): $(tr '\n' ';' <"$tmp/host" | cut -c1-60)"
    ;;
esac

# ---- the launcher in the folder ----------------------------------------------

env -u CUMEMGUARD_LIBRARY "$PORTABLE/bin/cumemguard" cdi --limit 1GiB \
  >"$tmp/spec.json" 2>"$tmp/err"
"$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))
m = s["containerEdits"]["mounts"][0]
print(s["devices"][0]["containerEdits"]["env"][0], m["hostPath"],
      m["containerPath"], m["options"][0])' "$tmp/spec.json" >"$tmp/out"
is "$(cat "$tmp/out")" \
  "LD_PRELOAD=/usr/lib/cumemguard/lib/libcumemguard.so $(cd "$PORTABLE" && pwd -P) /usr/lib/cumemguard ro" \
  "the folder's launcher finds the library beside it, and cdi mounts the folder"
"$PORTABLE/bin/cumemguard-report" --version >"$tmp/out" 2>"$tmp/err"
tap $? "the folder's reader runs"

done_testing
