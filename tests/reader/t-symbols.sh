#!/bin/sh
# Native frames named from the program's files after the run: a C++
# program built with -g and without -rdynamic (tests/reader/prog/symprog.cc)
# allocates through a template in a namespace, a function inlined into its
# caller and a lambda.  Every output names them demangled, with file and
# line: summary (short names; --all-frames and --json the full ones),
# folded, flame, pprof, timeline, diff and merge.  A stripped copy, a file
# replaced by another build after the run and a file gone since are read
# honestly: never a wrong name, and the summary says which were not read.
# A statically linked CUDA runtime's frames hide, and its group is labeled
# with the runtime entry the program called.
. "$srcdir/tests/reader/defs.sh"
P=$top_builddir/tests/reader/prog/symprog
SRC=$srcdir/tests/reader/prog/symprog.cc

# at MARK: the line of symprog.cc that carries the comment "@MARK".
at() {
  grep -n "// @$1\$" "$SRC" | cut -d: -f1
}
G=$(at grab) R=$(at reserve) D=$(at direct) L=$(at lambda)
MD=$(at main-direct) MR=$(at main-reserve) ML=$(at main-lambda)
# Any of the program's own functions, as a frame would name it.
OURS='grab|reserve|direct|lambda|#[0-9]+ main[ (]'

hguard "--report $tmp/a.json" "$P"
is "$rc" 0 "the program runs on the simulated GPU"
validate "$tmp/a.json"
is "$(q "$tmp/a.json" '[f["function"] for f in r["frames"] if "grab" in (f["function"] or "")]')" \
  "[]" "the report itself cannot name the program's functions (no -rdynamic)"

# The numbered frames of each leak group, as the summary prints them.
tool "$tmp/a.json"
is "$rc" 0 "summary"
grep '^    #' "$tmp/out" >"$tmp/frames"
cat >"$tmp/want" <<EOF
    #0 gpu::Pool<float>::grab (symprog.cc:$G)
    #1 main::{lambda(unsigned long)#1}::operator() (symprog.cc:$L)
    #2 main (symprog.cc:$ML)
    #0 gpu::Pool<float>::grab (symprog.cc:$G)
    #1 reserve (symprog.cc:$R, inlined)
    #2 main (symprog.cc:$MR)
    #0 gpu::Pool<float>::grab (symprog.cc:$G)
    #1 direct (symprog.cc:$D)
    #2 main (symprog.cc:$MD)
EOF
is "$(diff "$tmp/want" "$tmp/frames" && echo same)" same \
  "summary: demangled names, file and line, the inlined call and the lambda"
is "$(grep -c "^    2.0 MiB in 1 allocation: gpu::Pool<float>::grab (symprog.cc:$G) < reserve (symprog.cc:$R) < main (symprog.cc:$MR)\$" "$tmp/out")" 1 \
  "the peak's one-line stacks too"
is "$(grep -c 'Not read on this machine' "$tmp/out")" 0 \
  "every module was read: nothing to say about it"

tool --all-frames "$tmp/a.json"
is "$(grep -c "^    #1 gpu::Pool<float>::grab(unsigned long)+0x[0-9a-f]* (.*tests/reader/prog/symprog.cc:$G, symprog+0x[0-9a-f]*)\$" "$tmp/out")" 3 \
  "--all-frames: the full name, offset, source path and place in the module"
is "$(grep -c "^    #2 reserve(gpu::Pool<float>&, unsigned long) (.*symprog.cc:$R, symprog+0x[0-9a-f]*, inlined)\$\|^    #2 reserve (.*symprog.cc:$R, symprog+0x[0-9a-f]*, inlined)\$" "$tmp/out")" 1 \
  "--all-frames: the inlined call at its caller's address"

tool_json "$tmp/a.sum.json" --json "$tmp/a.json"
is "$rc" 0 "summary --json"
is "$("$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))["summaries"][0]
f = s["leaks"][1]["frames"]
g = next(x for x in f if x.get("name") == "gpu::Pool<float>::grab")
r = next(x for x in f if x.get("inlined"))
print(g["function"], g["file"].rsplit("/", 1)[-1], g["line"], r["function"].split("(")[0], r["line"])
' "$tmp/a.sum.json")" \
  "gpu::Pool<float>::grab(unsigned long) symprog.cc $G reserve $R" \
  "--json: the full name, the short one, file, line, and inlined"

tool folded "$tmp/a.json"
is "$(grep -c "main (symprog.cc:$MR);reserve (symprog.cc:$R);gpu::Pool<float>::grab (symprog.cc:$G);cudaMalloc 2097152\$" "$tmp/out")" 1 \
  "folded: the same names, outermost first"
tool flame -o "$tmp/a.svg" "$tmp/a.json"
is "$(grep -c 'gpu::Pool&lt;float&gt;::grab (symprog.cc:' "$tmp/a.svg")" 3 \
  "flame: the same names"
tool timeline -o "$tmp/a.trace" "$tmp/a.json"
is "$(grep -c 'gpu::Pool<float>::grab(unsigned long)' "$tmp/a.trace")" 1 \
  "timeline: the same names in the slices' stacks"

# A second run, less the lambda's allocation: diff and merge name it.
hguard "--report $tmp/b.json" "$P"
tool diff "$tmp/a.json" "$tmp/b.json"
is "$rc/$(grep -c "^    #0 gpu::Pool<float>::grab (symprog.cc:$G)\$" "$tmp/out")/$(tail -n 1 "$tmp/out" | sed 's/.*; //')" \
  "0/3/0 leak groups grew, 0 shrank, 3 held" \
  "diff of two equal runs: the three groups still held, named"
tool merge "$tmp/a.json" "$tmp/b.json"
is "$(grep -c "^    #1 main::{lambda(unsigned long)#1}::operator() (symprog.cc:$L)\$" "$tmp/out")" 1 \
  "merge: the two runs' frames are one"

if command -v go >/dev/null 2>&1; then
  HOME=$tmp/home GOCACHE=$tmp/home/cache GOFLAGS=-mod=mod GOTOOLCHAIN=local
  export HOME GOCACHE GOFLAGS GOTOOLCHAIN
  mkdir -p "$HOME"
  tool pprof -o "$tmp/a.pb.gz" "$tmp/a.json"
  go tool pprof -traces -lines "$tmp/a.pb.gz" >"$tmp/pp" 2>&1
  # pprof shortens C++ names itself (no template arguments, no parameters).
  is "$(grep -Ec "^ +gpu::Pool::grab .*symprog.cc:$G\$" "$tmp/pp")" 3 \
    "pprof: functions demangled, with their files and lines"
else
  echo "ok 99 # SKIP go is not installed (golang-go): pprof not read"
fi

tool --no-symbolize "$tmp/a.json"
is "$(grep -c '^    #0 ? (symprog+0x[0-9a-f]*)$' "$tmp/out")" 3 \
  "--no-symbolize: the report's own names only"

# Stripped: the build-id is the same, the names are gone; nothing is
# guessed.
strip -o "$tmp/stripped" "$P"
hguard "--report $tmp/s.json" "$tmp/stripped"
tool "$tmp/s.json"
is "$(grep -c '^    #0 ? (stripped+0x[0-9a-f]*)$' "$tmp/out")/$(grep -Ec "$OURS" "$tmp/out")" 3/0 \
  "a stripped program: its frames stay unnamed, never misnamed"

# Its debug information kept apart, as distributions ship it, where
# CUMEMGUARD_DEBUGINFO_PATH says: found by the build-id the report gives.
id=$(q "$tmp/s.json" '[m["build_id"] for m in r["modules"] if m["path"].endswith("/stripped")][0]')
mkdir -p "$tmp/debug/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug "$P" \
  "$tmp/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
saved=${CUMEMGUARD_DEBUGINFO_PATH-unset}
export CUMEMGUARD_DEBUGINFO_PATH="$tmp/debug"
tool "$tmp/s.json"
is "$rc/$(grep -c "^    #0 gpu::Pool<float>::grab (symprog.cc:$G)\$" "$tmp/out")" 0/3 \
  "its separate debug file, under CUMEMGUARD_DEBUGINFO_PATH: named, with lines"
export CUMEMGUARD_DEBUGINFO_PATH=/nonexistent
tool "$tmp/s.json"
is "$(grep -Ec "$OURS" "$tmp/out")" 0 "and under a path without it, unnamed"
if [ "$saved" = unset ]; then unset CUMEMGUARD_DEBUGINFO_PATH; else
  CUMEMGUARD_DEBUGINFO_PATH=$saved; fi

# By its .gnu_debuglink name, where libdwfl's default path looks: beside
# the program, in .debug under its folder, and under an absolute folder
# of CUMEMGUARD_DEBUGINFO_PATH followed by the program's folder; the debug
# file of another build there is not taken.
mkdir -p "$tmp/l/.debug" "$tmp/root$tmp/l"
objcopy --only-keep-debug "$P" "$tmp/linked.debug"
objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$tmp/linked.debug" \
  "$P" "$tmp/l/linked"
hguard "--report $tmp/l.json" "$tmp/l/linked"
for where in "" .debug/; do
  rm -f "$tmp/l/linked.debug" "$tmp/l/.debug/linked.debug"
  cp "$tmp/linked.debug" "$tmp/l/${where}linked.debug"
  tool "$tmp/l.json"
  is "$rc/$(grep -c "^    #0 gpu::Pool<float>::grab (symprog.cc:$G)\$" "$tmp/out")" 0/3 \
    "its debug file by its .gnu_debuglink name, in '${where:-its own folder}': named, with lines"
done
rm -f "$tmp/l/.debug/linked.debug"
cp "$tmp/linked.debug" "$tmp/root$tmp/l/linked.debug"
CUMEMGUARD_DEBUGINFO_PATH=":.debug:$tmp/root" tool "$tmp/l.json"
is "$(grep -c "^    #0 gpu::Pool<float>::grab (symprog.cc:$G)\$" "$tmp/out")" 3 \
  "and under an absolute folder of CUMEMGUARD_DEBUGINFO_PATH, then the program's own"
rm -f "$tmp/root$tmp/l/linked.debug"
objcopy --only-keep-debug "$top_builddir/tests/sim/app_rt_shared" "$tmp/l/linked.debug"
tool "$tmp/l.json"
is "$(grep -Ec "$OURS|cmgtest_|app_main" "$tmp/out")" 0 \
  "a debug file of that name from another build: not taken"
unset CUMEMGUARD_DEBUGINFO_PATH

# Only DEBUGINFOD_URLS sends the reader to the network: without it, a
# stripped module whose debug file is nowhere here loads no debuginfod
# client (and the thirty libraries it brings); with it, the client is
# asked, and a server that does not answer leaves the frames unnamed.
libs() {
  env "$@" DEBUGINFOD_CACHE_PATH="$tmp/dcache" DEBUGINFOD_TIMEOUT=2 \
    LD_DEBUG=files "$TOOL" "$tmp/s.json" 2>&1 >"$tmp/out" |
    grep -c 'file=libdebuginfod[^ ]* .*dynamically loaded by'
}
is "$(libs -u DEBUGINFOD_URLS)/$(grep -Ec "$OURS" "$tmp/out")" 0/0 \
  "without DEBUGINFOD_URLS, no debuginfod client is loaded"
is "$(libs DEBUGINFOD_URLS=' ')" 0 "nor with DEBUGINFOD_URLS empty"
is "$(libs DEBUGINFOD_URLS=http://127.0.0.1:9)/$(grep -Ec "$OURS" "$tmp/out")" 1/0 \
  "with DEBUGINFOD_URLS, the client is asked; a server that does not answer: unnamed"

# Another build at the same path after the run, then no file at all.
cp "$P" "$tmp/prog"
hguard "--report $tmp/c.json" "$tmp/prog"
cp "$top_builddir/tests/sim/app_rt_shared" "$tmp/prog"
tool "$tmp/c.json"
is "$(grep -c '^Not read on this machine, so their frames keep the report.s names: prog (another build here: its build-id is not the report.s)\.$' "$tmp/out")" 1 \
  "a file rebuilt since the run: said, in one line"
is "$(grep -Ec "$OURS|cmgtest_|app_main" "$tmp/out")" 0 \
  "and none of the other build's names is given to the frames"
rm -f "$tmp/prog"
tool "$tmp/c.json"
is "$(grep -c "^Not read on this machine, so their frames keep the report.s names: prog (not found here)\.\$" "$tmp/out")" 1 \
  "a file gone since the run: said, in one line"

# A report's paths are data: one naming a device is not read.
"$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[1]))
r["modules"][0]["path"] = "/dev/zero"
json.dump(r, open(sys.argv[2], "w"))' "$tmp/a.json" "$tmp/dev.json"
tool "$tmp/dev.json"
is "$rc/$(grep -c '^Not read on this machine, so their frames keep the report.s names: zero (not a regular file here)\.$' "$tmp/out")" 0/1 \
  "a module path naming a device is not read, and said"

# More modules than the first table of them holds: each stays whole as
# the table grows (run under ASan by check-tool-asan, valgrind by
# check-valgrind).
"$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[1]))
for i in range(40):
    r["modules"].append({"path": "/nonexistent/lib%d.so" % i,
                         "build_id": "%040x" % i, "base": "0x0"})
    r["frames"].append({"address": "0x%x" % (0x1000 + i),
                        "module": len(r["modules"]) - 1,
                        "offset": "0x%x" % (0x1000 + i), "function": None,
                        "function_offset": None})
r["stacks"][0]["frames"] += list(range(len(r["frames"]) - 40, len(r["frames"])))
json.dump(r, open(sys.argv[2], "w"))' "$tmp/a.json" "$tmp/many.json"
tool --all-frames "$tmp/many.json"
is "$rc/$(grep -c '^    #[0-9]* ? (lib[0-9]*\.so+0x' "$tmp/out")" 0/40 \
  "a report of 43 modules: each read or said, none mixed up"

# A statically linked CUDA runtime: its frames are inside the program, and
# what the library saw is the driver call the runtime made.  Named from
# .symtab, those frames hide as the shared runtime's do, and the group is
# labeled with the entry the program called.
hguard "--report $tmp/st.json" "$top_builddir/tests/gpu/cmg_alloc_sim_static" \
  site 1 1M
is "$(q "$tmp/st.json" '[l["api"] for l in r["leaks"]]')" "['cuMemAlloc_v2']" \
  "static runtime: the report has the driver call the library saw"
tool "$tmp/st.json"
is "$(grep -c '^Leaked 1.0 MiB in 1 allocation (cudaMalloc, device 0) from:$' "$tmp/out")/$(grep '^    #0 ' "$tmp/out" | cut -d' ' -f6 | cut -d+ -f1)" \
  "1/cmgtest_alloc_leaf" \
  "and the summary the cudaMalloc the program called, its frames hidden"

done_testing
