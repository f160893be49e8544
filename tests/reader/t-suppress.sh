#!/bin/sh
# Suppressions in LeakSanitizer's format: leak:PATTERN lines, # comments and
# blank lines; a pattern matches a function, module path or module base
# name of any frame of the leak's stack (or its API), as a substring with
# * wildcards, ^ and $ anchors.  Each rule reports what it hid.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data
A=$tmp/a.json

guard "--report $A" app_rt_shared site 1 1M site 2 2M site 3 4M
validate "$A"

# hidden RULES...: the leaked bytes left once the rules (one a line) apply.
left() {
  printf '%s\n' "$@" >"$tmp/supp"
  tool_json "$tmp/s.json" --json --suppressions "$tmp/supp" "$A"
  js "$tmp/s.json" 'd["summaries"][0]["leaked_bytes"]'
}

is "$(left 'leak:cmgtest_site_2')" $((5 * M)) "a function name"
is "$(left 'leak:site_2')" $((5 * M)) "a substring of it"
is "$(left 'leak:^site_2')" $((7 * M)) "^ anchors at the start: no match"
is "$(left 'leak:^cmgtest_site_3$')" $((3 * M)) "^...\$: the whole name"
is "$(left 'leak:cmgtest_site_3$')" $((3 * M)) "\$ anchors at the end"
is "$(left 'leak:cmgtest_site_$')" $((7 * M)) "\$: no match when the name goes on"
is "$(left 'leak:cmg*site_1')" $((6 * M)) "* matches any run of characters"
is "$(left 'leak:^cmg*_1$')" $((6 * M)) "* between anchors"
is "$(left 'leak:cmgtest_alloc_leaf')" 0 "a frame every leak has: all of them"
is "$(left 'leak:app_rt_shared')" 0 "a module's base name"
is "$(left "leak:^$SIM/app_rt_shared\$")" 0 "a module's full path"
is "$(left 'leak:libcudart.so')" 0 "a module of a frame that is hidden in the output"
is "$(left 'leak:cudaMalloc')" 0 "the API"
is "$(left 'leak:nothing_like_this')" $((7 * M)) "no match: nothing hidden"
is "$(left '# a comment' '' '   leak:cmgtest_site_1   ' '#leak:cmgtest_site_2')" $((6 * M)) \
  "comments, blank lines and surrounding blanks"

# Each rule: how many allocations and bytes it hid; the first rule that
# matches takes a group.
printf 'leak:cmgtest_site_3\nleak:cmgtest_site_*\nleak:never_matches\n' >"$tmp/supp"
tool_json "$tmp/s.json" --json --suppressions "$tmp/supp" "$A"
is "$(js "$tmp/s.json" '[(r["pattern"], r["line"], r["count"], r["bytes"]) for r in d["summaries"][0]["suppressions"]]')" \
  "[('cmgtest_site_3', 1, 1, $((4 * M))), ('cmgtest_site_*', 2, 2, $((3 * M))), ('never_matches', 3, 0, 0)]" \
  "per rule: what it hid, first match wins, unused rules show 0"
is "$(js "$tmp/s.json" '(d["summaries"][0]["suppressed_bytes"], d["summaries"][0]["suppressed_allocations"], len(d["summaries"][0]["leaks"]))')" \
  "($((7 * M)), 3, 0)" "the suppressed totals, and no leak listed"
tool --suppressions "$tmp/supp" "$A"
sed -n '/^Suppressions used:/,/^---/p' "$tmp/out" >"$tmp/table"
is "$(cat "$tmp/table")" "Suppressions used:
  count      bytes template
      1    4194304 cmgtest_site_3
      2    3145728 cmgtest_site_*
      0          0 never_matches
-----------------------------------------------------" "text: LeakSanitizer's table"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: 0 B (0 bytes) leaked in 0 allocations; 7.0 MiB (7340032 bytes) in 3 allocations suppressed" \
  "text: SUMMARY says what was suppressed"

# Several files of rules add up.
printf 'leak:cmgtest_site_1\n' >"$tmp/s1"
printf 'leak:cmgtest_site_2\n' >"$tmp/s2"
tool_json "$tmp/s.json" --json --suppressions "$tmp/s1" --suppressions "$tmp/s2" "$A"
is "$(js "$tmp/s.json" 'd["summaries"][0]["leaked_bytes"]')" $((4 * M)) "two --suppressions files"

# Also for merge, diff, folded and flame.
printf 'leak:cmgtest_site_3\n' >"$tmp/supp"
tool folded --suppressions "$tmp/supp" "$A"
is "$(grep -c cmgtest_site_3 "$tmp/out")/$(wc -l <"$tmp/out" | tr -d ' ')" 0/2 "folded leaves it out"
tool_json "$tmp/s.json" merge --json --suppressions "$tmp/supp" "$A" "$A"
is "$(js "$tmp/s.json" 'd["summaries"][0]["suppressions"][0]["count"]')" 2 "merge counts it in both"
printf 'leak:alloc_weights\n' >"$tmp/supp"
tool_json "$tmp/s.json" diff --json --suppressions "$tmp/supp" "$D/job-a.json" "$D/job-b.json"
is "$(js "$tmp/s.json" 'len([c for c in d["changes"] if any(f["function"] == "alloc_weights" for f in c["frames"])])')" 0 \
  "diff leaves it out on both sides"

# Bad files: one line naming the file and line, status 2.
printf 'leak:ok\nrace:foo\n' >"$tmp/bad"
tool --suppressions "$tmp/bad" "$A"
one_line_error "$tmp/bad:2: unknown suppression type 'race'" "an unknown type: FILE:LINE, status 2"
printf 'cmgtest_site_1\n' >"$tmp/bad"
tool --suppressions "$tmp/bad" "$A"
one_line_error "$tmp/bad:1: expected leak:PATTERN" "no type at all"
printf 'leak:\n' >"$tmp/bad"
tool --suppressions "$tmp/bad" "$A"
one_line_error "$tmp/bad:1: empty pattern" "an empty pattern"
tool --suppressions "$tmp/none" "$A"
one_line_error "$tmp/none: cannot open: No such file or directory" "a missing suppressions file"

done_testing
