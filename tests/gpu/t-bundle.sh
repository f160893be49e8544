#!/bin/sh
# The bundle's programs and preload library start as a user runs them, on a
# machine that lacks every library the bundle carries in lib/deps: here the
# system's copies of those libraries are hidden, so only the run paths that
# scripts/gpu-bundle writes into the copies can find them.
. "$srcdir/tests/lib/defs.sh"

# The copies are hidden by bind mounts in a mount namespace of this test's
# own (inside a user namespace where not root), which nothing else sees:
# tests running beside this one keep the system's libraries.
: >"$tmp/empty"
: >"$tmp/probe"
ns=
for try in "unshare -m" "unshare -rm"; do
  if $try mount --bind "$tmp/empty" "$tmp/probe" 2>/dev/null; then
    ns=$try
    break
  fi
done
if [ -z "$ns" ]; then
  echo "1..0 # SKIP no private mount namespace here (unshare -m, unshare -rm)"
  exit 0
fi

# Without the nvcc programs (nvcc takes seconds, nothing here runs them,
# and t-suite-nogpu checks a bundle that has them): an nvcc that fails.
NVCC=/bin/false CMG_GPU_ARCH=sm_90 bash "$srcdir/scripts/gpu-bundle" --no-build \
  --build "$top_builddir" "$tmp/b" >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "the bundle builds"
b=$tmp/b
[ -d "$b/lib/deps" ] || { done_testing; exit; }

# Every copy the loader could find of each library in lib/deps: those its
# cache names and those in the usual directories, symbolic links resolved
# (a bind mount lands on the file a link names).
for so in "$b"/lib/deps/*; do
  so=${so##*/}
  ldconfig -p 2>/dev/null | awk -v so="$so" '$1 == so { print $NF }'
  for d in /lib /lib64 /usr/lib /usr/lib64 /usr/local/lib \
           /lib/*-linux-gnu* /usr/lib/*-linux-gnu*; do
    [ -e "$d/$so" ] && echo "$d/$so"
  done
done | while read -r f; do readlink -f "$f"; done | sort -u >"$tmp/hide"
tap "$([ -s "$tmp/hide" ]; echo $?)" \
  "the system has copies to hide ($(wc -l <"$tmp/hide") files)"

# hidden PROGRAM ARGS...: PROGRAM with each of those copies read as an empty
# file, which the loader rejects ("file too short") instead of skipping:
# wherever a run path is missing, the program cannot start.
cat >"$tmp/hide.sh" <<'EOF'
list=$1 empty=$2
shift 2
while read -r f; do
  mount --bind "$empty" "$f" || { echo "cannot hide $f" >&2; exit 99; }
done <"$list"
exec "$@"
EOF
hidden() {
  $ns sh "$tmp/hide.sh" "$tmp/hide" "$tmp/empty" "$@" >"$tmp/out" 2>"$tmp/err"
}

# As a user runs them: nothing on LD_LIBRARY_PATH, the bundle's library.
unset LD_LIBRARY_PATH
CUMEMGUARD_LIBRARY=$b/lib/libcumemguard.so
export CUMEMGUARD_LIBRARY

# The hiding itself works: a copy of the reader without its run path
# cannot start (it needs cJSON and protobuf-c; the launcher needs only the
# C library).
if [ -x "$b/bin/cumemguard-report" ]; then
  mkdir "$tmp/plain"
  cp "$b/bin/cumemguard-report" "$tmp/plain/"
  patchelf --remove-rpath "$tmp/plain/cumemguard-report"
  hidden "$tmp/plain/cumemguard-report" --version
  st=$?
  tap "$([ $st -ne 0 ]; echo $?)" \
    "without its run path the reader does not start (status $st)"
else
  echo "ok $((tap_n += 1)) # SKIP no reader in the bundle to start"
fi

# notfound: the lines of $tmp/out where ldd names a library not found.
notfound() {
  grep -c 'not found' "$tmp/out"
}

for p in "$b"/bin/*; do
  n=bin/$(basename "$p")
  hidden "$p" --version
  st=$?
  is "$st/$(wc -l <"$tmp/err")" 0/0 "$n --version starts, quietly"
  hidden ldd "$p"
  st=$?
  is "$st/$(notfound)" 0/0 "ldd $n: every library found"
done

# A preload library that cannot load is only a warning of the loader's,
# and the program still runs: stderr must stay empty.
hidden env LD_PRELOAD="$b/lib/libcumemguard.so" /bin/true
st=$?
is "$st/$(wc -l <"$tmp/err")" 0/0 "lib/libcumemguard.so preloads, quietly"
hidden ldd "$b/lib/libcumemguard.so"
st=$?
is "$st/$(notfound)" 0/0 "ldd lib/libcumemguard.so: every library found"
for f in "$b"/lib/deps/*; do
  hidden ldd "$f"
  st=$?
  is "$st/$(notfound)" 0/0 "ldd lib/deps/${f##*/}: every library found"
done

# DT_RUNPATH, not DT_RPATH: a user's LD_LIBRARY_PATH still comes before the
# bundle's copies.
so=$(ldd "$b/lib/libcumemguard.so" |
     awk 'index($3, "/lib/deps/") { print $1; exit }')
mkdir "$tmp/user"
cp "$b/lib/deps/$so" "$tmp/user/"
LD_LIBRARY_PATH=$tmp/user ldd "$b/lib/libcumemguard.so" >"$tmp/out" 2>"$tmp/err"
is "$(awk -v so="$so" '$1 == so { print $3 }' "$tmp/out")" "$tmp/user/$so" \
  "LD_LIBRARY_PATH still overrides the bundle's $so"

# A report made through the bundle's launcher on the simulated CUDA (the
# build tree's: the bundle carries one only where nvcc was found), and read
# by the bundle's reader (pprof writes protobuf through zlib).
if [ -x "$b/bin/cumemguard-report" ]; then
  R=$tmp/r.json
  hidden env CMG_SIM_DEVICES=1G LD_LIBRARY_PATH="$SIM/.libs" \
    "$b/bin/cumemguard" --report "$R" -- "$SIM/app_rt_static" alloc 1M
  st=$?
  is "$st/$(grep -c 'rc=0' "$tmp/out")" 0/1 \
    "the bundle's launcher runs a program on the simulated CUDA"
  hidden "$b/bin/cumemguard-report" "$R"
  st=$?
  is "$st/$(grep -c '^SUMMARY: cumemguard: 1.0 MiB (1048576 bytes) leaked' \
    "$tmp/out")" 0/1 "the bundle's cumemguard-report reads its report"
  hidden "$b/bin/cumemguard-report" pprof -o "$tmp/r.pb.gz" "$R"
  st=$?
  gzip -t "$tmp/r.pb.gz" 2>/dev/null
  is "$st/$?" 0/0 "and writes a pprof profile of it"
else
  echo "# cumemguard-report is not built: the bundle has no reader"
fi

done_testing
