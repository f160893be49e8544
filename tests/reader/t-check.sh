#!/bin/sh
# check: exit status 1 when the device memory leaked (after suppressions)
# exceeds --max-leak (default 0), else 0; 2 for anything it cannot read.
# What CUDA graph memory pools hold and what contexts took is never leaked.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data
A=$tmp/a.json E=$tmp/e.json

guard "--report $A" app_driver site 1 1M site 2 2M
guard "--report $E" app_driver site 1 1M free 0
validate "$A" "$E"

tool check "$A"
is "$rc" 1 "a leak: status 1"
is "$(tail -n 1 "$tmp/out")" \
  "check: FAILED: 3.0 MiB (3145728 bytes) leaked, more than the 0 B allowed" \
  "the verdict, last"
is "$(grep -c '^Leaked ' "$tmp/out")/$(grep -c '^SUMMARY: cumemguard: 3.0 MiB (3145728 bytes) leaked in 2 allocations$' "$tmp/out")" \
  2/1 "the leaks and the SUMMARY line come before it"
is "$(grep -c '^dev ' "$tmp/out")" 0 "no device table: only what CI needs"

tool check "$E"
is "$rc/$(tail -n 1 "$tmp/out")" "0/check: passed: 0 B (0 bytes) leaked, 0 B allowed" \
  "nothing leaked: status 0"
tool check --max-leak 3M "$A"
is "$rc" 0 "leaked exactly --max-leak: status 0"
tool check --max-leak 3145727 "$A"
is "$rc" 1 "one byte more than --max-leak: status 1"
tool check --max-leak 1.5GiB "$A"
is "$rc/$(tail -n 1 "$tmp/out")" "0/check: passed: 3.0 MiB (3145728 bytes) leaked, 1.5 GiB allowed" \
  "--max-leak 1.5GiB"
tool check --max-leak 2M "$A" "$E"
is "$rc" 1 "several files: the leaks add up (3M > 2M)"
tool check --max-leak 5M "$A" "$A"
is "$rc" 1 "the same report twice counts twice (6M > 5M)"

# Suppressions count out what they hide.
printf 'leak:cmgtest_site_2\n' >"$tmp/supp"
tool check --max-leak 1M --suppressions "$tmp/supp" "$A"
is "$rc" 0 "a suppression hides 2M: 1M left, allowed"
is "$(grep -c '^      1    2097152 cmgtest_site_2$' "$tmp/out")" 1 "and the table says what it hid"
printf 'leak:cmgtest_site_\n' >"$tmp/supp"
tool check --suppressions "$tmp/supp" "$A"
is "$rc/$(tail -n 1 "$tmp/out")" "0/check: passed: 0 B (0 bytes) leaked, 0 B allowed" \
  "everything suppressed: status 0"

# Host memory is not device memory: check counts device memory only.
tool check "$D/job-b.json"
is "$rc" 1 "the fixed report job-b leaks device memory"
tool check --max-leak 3.75GiB "$D/job-b.json"
is "$rc" 0 "job-b leaks 3.75 GiB of device memory"
tool check --max-leak 4581232640 "$D/job-a.json"
is "$rc" 0 "job-a: its 64 MiB of pinned host memory do not count"

# What CUDA graph memory pools hold and what contexts took is device
# memory, but not a leak: of data/graph.json's 5.0 GiB live, its pool
# holds 1.5 GiB; of data/context.json's 2.3 GiB, its two contexts took
# 780 MiB.  Check lists that apart from the leaks and does not count it.
# apart KIND LIVE MAX LEAKED HEADING: data/KIND.json has LIVE bytes of
# device memory live, of which LEAKED are leaks, MAX (in GiB) as a size;
# HEADING is the first line of its section.
printf 'leak:alloc_weights\nleak:model_workspace_alloc\n' >"$tmp/leaks"
apart() {
  f=$D/$1.json
  is "$(js "$f" 'd["summary"]["live_bytes"]')" "$2" "data/$1.json: $2 bytes live"
  tool check --max-leak "$3" "$f"
  is "$rc/$(tail -n 1 "$tmp/out")" \
    "0/check: passed: ${3%GiB} GiB ($4 bytes) leaked, ${3%GiB} GiB allowed" \
    "$1: not counted as leaked"
  is "$(grep -cxF "$5" "$tmp/out")/$(grep -c '^Leaked ' "$tmp/out")" 1/2 \
    "$1: listed apart from the leaks"
  tool check --max-leak $(($4 - 1)) "$f"
  is "$rc" 1 "$1: a byte less than the leaks alone: status 1"
  tool check --suppressions "$tmp/leaks" "$f"
  is "$rc/$(tail -n 1 "$tmp/out")" "0/check: passed: 0 B (0 bytes) leaked, 0 B allowed" \
    "$1: with the leaks suppressed, it alone passes"
}
apart graph 5368709120 3.5GiB 3758096384 \
  'Held by the CUDA graph memory pool of device 0 at exit: 1.5 GiB, grown by:'
apart context 2428502016 1.5GiB 1610612736 \
  'Contexts and modules on device 0 at exit: 780.0 MiB in 2 contexts, made by:'

# Status 2, one line.
tool check "$tmp/missing.json"
one_line_error "missing.json: cannot open: No such file or directory" "a missing report: status 2"
tool check --max-leak lots "$A"
one_line_error "bad --max-leak 'lots'" "a bad --max-leak: status 2"
tool check --max-leak 50% "$A"
one_line_error "bad --max-leak '50%'" "a percentage is not a size here"
tool check "$A" "$TOOLDIR/broken/version-2.json"
one_line_error "version-2.json: report version 2 is newer" "one bad report among good ones: status 2"
tool check
one_line_error "no report FILE given" "no file: status 2"
tool summary --max-leak 1M "$A"
one_line_error "does not apply to summary" "--max-leak is for check"

done_testing
