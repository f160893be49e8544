#!/bin/sh
# html: one self-contained page of a run, checked in a real browser.  The
# tool writes pages of the test reports (a run on the simulated CUDA with
# two devices, denials, dumps and a soft limit; PyTorch's Python and C++
# frames; a C++ program; a report of nothing; one whose strings hold
# markup; one of 10^6 allocations; BASE and NEW; several merged), and
# page-test.js opens each in Debian's chromium, headless, through the
# DevTools protocol: what each moment shows is what --json says, stacks
# open, search and the flame graph work, nothing is fetched, no error is
# logged, no string of a report becomes markup, and the screenshots (in
# tests/html/screenshots/ beside this test's log) are pictures.  Where the
# browser or puppeteer-core is missing, the test fails and says so.
. "$srcdir/tests/reader/defs.sh"

CHROMIUM=${CMG_CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo chromium)}
NODE_MODULES=${CMG_NODE_MODULES:-/usr/local/lib/cumemguard-tests/node_modules}
SHOTS=$top_builddir/tests/html/screenshots
DATA=$srcdir/tests/reader/data

# ---- the reports -----------------------------------------------------------

export CMG_SIM_DEVICES=16G,8G
guard "--limit 1GiB --soft-limit 700MiB --report $tmp/rich.json" app_rt_shared \
  site 1 300M sleep 20 site 2 300M sleep 10 alloc 200M sleep 10 free 2 \
  sleep 5 site 3 600M sleep 5 device 1 site 1 500M sleep 10 site 2 700M \
  sleep 5 free 4 sleep 5 site 3 100M dump - sleep 5 device 0 alloc 50M
is "$rc/$(q "$tmp/rich.json" 'len(r["timeline"]["devices"]), len(r["denials"]), len(r["timeline"]["dumps"])')" \
  "0/(2, 2, 3)" "a run with two devices, two denials and three reports written"
guard "--report $tmp/empty.json" app_driver alloc 1M free 0
is "$rc/$(q "$tmp/empty.json" 'len(r["leaks"]), len(r["denials"])')" "0/(0, 0)" \
  "a run that leaves nothing live and is refused nothing"
unset CMG_SIM_DEVICES

# Markup, quotes, control characters and a 10000-character name where
# reports hold names, paths and the command line.
"$PYTHON3" - "$tmp/rich.json" "$tmp/hostile.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
evil = '<script>window.__pwned=1</script>'
for f in r["frames"]:
    if f.get("function") == "cmgtest_site_1":
        f["function"] = evil
    elif f.get("function") == "cmgtest_site_2":
        f["function"] = '<img src=x onerror="window.__pwned=1"></script><!--'
    elif f.get("function") == "cmgtest_site_3":
        f["function"] = "q'\"\u0001\u0007\n&amp;" + "x" * 10000
for m in r["modules"]:
    m["path"] = m["path"] + "</script><b>bold</b>"
r["process"]["argv"] = [evil, "--name=\"</script>\"", "\u2028\u2029"]
for d in r["devices"]:
    d["name"] = "<h1>GPU</h1>"
json.dump(r, open(sys.argv[2], "w"))
PY

# 10^6 live allocations over 10^4 stacks, written as the benchmark writes
# them.
LD_PRELOAD=$CUMEMGUARD_LIBRARY CUMEMGUARD_OPTIONS=limit=15GiB,stack_depth=32 \
  CMG_SIM_DEVICES=16G,16G "$top_builddir/bench/cmgbench" --child report \
  --live 1000000 --stacks 10000 --rounds 1 --out "$tmp/big.json" \
  --tmp "$tmp" --block-ms 10 >/dev/null 2>"$tmp/err"
is "$?/$(q "$tmp/big.json" 'r["summary"]["live_allocations"]')" 0/1000000 \
  "a report of 10^6 live allocations"

# ---- the pages -------------------------------------------------------------

# page NAME FILES...: NAME.html and NAME.sum.json (--json --top 0).
page() {
  name=$1
  shift
  tool html -o "$tmp/$name.html" "$@"
  [ "$rc" -eq 0 ] && [ -s "$tmp/$name.html" ]
  tap $? "html $name: exit 0, a page"
  tool_json "$tmp/$name.sum.json" --json --top 0 "$@"
}

page rich "$tmp/rich.json"
# The reports of real GPUs, with the text summary their end must agree with.
fixtures=""
for f in torch-gpt2-compile jax-three-functions torch-release-before \
  torch-release-after torch-three-sites-nopools graph-capture-1GiB; do
  page "$f" "$DATA/gpu/$f.json"
  tool --top 0 "$DATA/gpu/$f.json"
  cp "$tmp/out" "$tmp/$f.txt"
  [ "$f" = torch-gpt2-compile ] && continue
  fixtures="$fixtures
  { \"name\": \"$f\", \"html\": \"$tmp/$f.html\", \"summary\": \"$tmp/$f.sum.json\", \"text\": \"$tmp/$f.txt\" },"
done
page cxx "$DATA/job-a.json"
page context "$DATA/context.json"
tool "$DATA/context.json"
cross=$(sed -n 's/^device [0-9]* \(cross-check .*\)$/"\1"/p' "$tmp/out" | paste -sd, -)
is "$(printf '%s\n' "$cross" | grep -c 'cross-check of 1 context')" 1 \
  "the text summary of contexts has its cross-check line"
page empty "$tmp/empty.json"
page hostile "$tmp/hostile.json"
page big "$tmp/big.json"
tool html -o "$tmp/merged.html" --merge "$DATA/job-a.json" "$DATA/job-b.json"
is "$rc" 0 "html --merge: exit 0"
tool_json "$tmp/merged.sum.json" merge --json --top 0 "$DATA/job-a.json" "$DATA/job-b.json"
tool html -o "$tmp/diff.html" "$DATA/gpu/torch-release-before.json" \
  "$DATA/gpu/torch-release-after.json"
is "$rc" 0 "html BASE NEW: exit 0"
tool_json "$tmp/diff.sum.json" --json --top 0 "$DATA/gpu/torch-release-after.json"
tool_json "$tmp/diff.diff.json" diff --json --top 0 \
  "$DATA/gpu/torch-release-before.json" "$DATA/gpu/torch-release-after.json"

size=$(wc -c <"$tmp/big.html")
[ "$size" -le $((20 * M)) ]
tap $? "the page of 10^6 allocations is at most 20 MiB ($size bytes)"

# The page is written whole or not at all, and says what is wrong in one line.
printf '{"format": "cumemguard-report", "version": 1' >"$tmp/cut.json"
tool html -o "$tmp/cut.html" "$tmp/cut.json"
one_line_error "cut.json" "html of a cut report: one line, status 2"
[ ! -e "$tmp/cut.html" ]
tap $? "html of a cut report: no page"
tool html -o "$tmp/three.html" "$tmp/rich.json" "$tmp/rich.json" "$tmp/rich.json"
one_line_error "html takes one report, or BASE and NEW, or several with --merge; got 3" \
  "html of three reports without --merge: one line, status 2"

# Strings reach the page as JSON that no string can end: a report's '<'
# is never written as such inside the data.
is "$(grep -c '</script><b>bold' "$tmp/hostile.html")" 0 \
  "no raw '</script>' of the report in the page"

# ---- in the browser --------------------------------------------------------

rm -rf "$SHOTS"
mkdir -p "$SHOTS"
cat >"$tmp/plan.json" <<EOF
{ "chromium": "$CHROMIUM", "shots": "$SHOTS", "pages": [
  { "name": "rich", "html": "$tmp/rich.html", "summary": "$tmp/rich.sum.json", "search": "cmgtest_site_3" },
  { "name": "torch", "html": "$tmp/torch-gpt2-compile.html", "summary": "$tmp/torch-gpt2-compile.sum.json", "text": "$tmp/torch-gpt2-compile.txt", "search": "train_step" },$fixtures
  { "name": "cxx", "html": "$tmp/cxx.html", "summary": "$tmp/cxx.sum.json", "search": "load_model" },
  { "name": "context", "html": "$tmp/context.html", "summary": "$tmp/context.sum.json", "crossCheck": [$cross] },
  { "name": "empty", "html": "$tmp/empty.html", "summary": "$tmp/empty.sum.json" },
  { "name": "hostile", "html": "$tmp/hostile.html", "summary": "$tmp/hostile.sum.json", "hostile": true },
  { "name": "merged", "html": "$tmp/merged.html", "summary": "$tmp/merged.sum.json", "search": "train_step" },
  { "name": "diff", "html": "$tmp/diff.html", "summary": "$tmp/diff.sum.json", "diff": "$tmp/diff.diff.json" },
  { "name": "big", "html": "$tmp/big.html", "summary": "$tmp/big.sum.json", "big": true }
] }
EOF
if ! command -v node >/dev/null 2>&1; then
  tap 1 "node is installed (scripts/install-deps.sh installs it)"
  done_testing
  exit
fi

# A browser that cannot start is a failure that says why, never a skip.
printf '{ "chromium": "%s", "shots": "%s", "pages": [] }\n' \
  "$tmp/no-such-chromium" "$SHOTS" >"$tmp/none.json"
NODE_PATH=$NODE_MODULES node "$srcdir/tests/html/page-test.js" "$tmp/none.json" 1 \
  >"$tmp/none.out" 2>&1
st=$?
is "$st/$(grep -c "^not ok 1 - chromium starts ($tmp/no-such-chromium): " "$tmp/none.out")" \
  1/1 "without a browser the browser tests fail, and say why"

NODE_PATH=$NODE_MODULES node "$srcdir/tests/html/page-test.js" "$tmp/plan.json" \
  $((tap_n + 1)) | tee "$tmp/tap"
grep -q '^not ok' "$tmp/tap" && exit 1
grep -q '^1\.\.' "$tmp/tap"
