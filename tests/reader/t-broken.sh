#!/bin/sh
# Bad input: every file of tests/reader/broken (listed with the line it must
# produce in broken/expected.txt), files made here (missing, a directory,
# a NUL byte, a real report cut at many points), and bad command lines.
# Each gives one line on stderr naming the file and the problem, nothing
# on stdout, and status 2, never a crash.  check-tool-asan runs this file
# with the tool built with AddressSanitizer and UBSan.
. "$srcdir/tests/reader/defs.sh"
B=$TOOLDIR/broken

while IFS='	' read -r name want; do
  case "$name" in '#'* | '') continue ;; esac
  tool "$B/$name"
  one_line_error "$want" "$name: refused in one line" "$B/$name: "
done <"$B/expected.txt"
is "$(ls "$B"/*.json | wc -l | tr -d ' ')" "$(grep -c '\.json	' "$B/expected.txt")" \
  "(every file of the corpus is listed)"

# Every command refuses them alike.
for cmd in merge folded flame check; do
  tool $cmd "$B/version-2.json"
  one_line_error "version-2.json: report version 2 is newer" "$cmd refuses a newer version"
done
tool diff "$TOOLDIR/data/job-a.json" "$B/leak-stack-unknown.json"
one_line_error "leak-stack-unknown.json: leaks[0].stack" "diff refuses a bad NEW"

tool "$tmp/missing.json"
one_line_error "$tmp/missing.json: cannot open: No such file or directory" "a missing file"
tool "$tmp"
one_line_error "$tmp: cannot read: Is a directory" "a directory"
printf '{"format": "cumemguard-report",\0 "version": 1}' >"$tmp/nul.json"
tool "$tmp/nul.json"
one_line_error "$tmp/nul.json: not a text file" "a NUL byte"
tool - </dev/null
one_line_error "-: empty file" "empty standard input"

# A real report cut short anywhere: never a crash, always one line.
R=$tmp/r.json
guard "--limit 8M --report $R" app_rt_shared site 1 1M site 2 2M site 3 4M \
  free 2 site 3 7M site 1 1M
size=$(wc -c <"$R")
bad=0 n=0
for frac in 1 3 7 13 29 41 50 63 77 88 95 99; do
  cut=$((size * frac / 100))
  head -c "$cut" "$R" >"$tmp/cut.json"
  tool "$tmp/cut.json"
  n=$((n + 1))
  if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
    ! grep -q "^cumemguard-report: $tmp/cut.json: truncated JSON" "$tmp/err"; then
    bad=$((bad + 1))
    echo "# cut at $cut of $size: rc=$rc $(cat "$tmp/err")"
  fi
done
is "$bad" 0 "the report cut at $n points: each called truncated, status 2"

# Bad command lines: one line, status 2.
tool --bogus
one_line_error "unknown option '--bogus'" "an unknown option"
tool -z "$R"
one_line_error "unknown option '-z'" "an unknown short option"
tool --top
one_line_error "option '--top' needs a value" "a missing value"
tool --top -1 "$R"
one_line_error "bad --top '-1'" "a bad --top"
tool --min-bytes 3X "$R"
one_line_error "bad --min-bytes '3X'" "a bad --min-bytes"
tool --jso "$R"
one_line_error "unknown option '--jso'; try 'cumemguard-report --help'" \
  "an abbreviated option is refused, as the launcher refuses one"
tool --json=yes "$R"
one_line_error "option '--json=yes' takes no value" "a value for a flag"
tool diff "$R"
one_line_error "diff takes two reports" "diff with one report"
tool diff "$R" "$R" "$R"
one_line_error "diff takes two reports" "diff with three"
tool flame --width 5 "$R"
one_line_error "bad --width '5'" "a bad --width"
tool -o x.svg "$R"
one_line_error "does not apply to summary" "-o is for flame"
tool
one_line_error "no report FILE given" "no file"

# A write that fails half-way (the file-size limit here, as a full disk
# would) is said in one line and leaves the file the user had as it was,
# and no other file; one that succeeds replaces it and keeps its mode.
# A block is 512 or 1024 bytes as the shell counts: each output of this
# real GPU's report is several (the one line of error fits in one).
J=$TOOLDIR/data/gpu/torch-release-before.json
for cmd in flame html pprof; do
  o=$tmp/page.$cmd
  printf 'the old one\n' >"$o"
  chmod 640 "$o"
  # shellcheck disable=SC2086
  (trap '' XFSZ; ulimit -f 1; exec ${CMG_TEST_PREFIX:-} "$TOOL" $cmd -o "$o" "$J") \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  one_line_error "$o: cannot write: File too large" "$cmd: a write cut short"
  is "$(cat "$o")/$(stat -c %a "$o")/$(ls "$tmp" | grep -c "page\.$cmd\.")" \
    "the old one/640/0" "... leaves the old file as it was, and no other"
  tool $cmd -o "$o" "$J"
  is "$rc/$(stat -c %a "$o")/$(ls "$tmp" | grep -c "page\.$cmd\.")" "0/640/0" \
    "... a whole write replaces it, with its mode"
  is "$(grep -c "the old one" "$o")" 0 "... and its text"
done
tool html -o /dev/null "$J"
is "$rc/$(stat -c %t,%T /dev/null)" "0/1,3" "a device is written through, not replaced"

tool --help
is "$rc/$(head -n 1 "$tmp/out")" "0/usage: cumemguard-report [summary] [OPTIONS] FILE..." \
  "--help: status 0"
tool --version
is "$rc/$(cat "$tmp/out")" "0/cumemguard-report $(sed -n 's/^#define CMG_VERSION_STRING "\(.*\)"/\1/p' "$srcdir/include/cumemguard.h") (reads report version 1)" \
  "--version"

done_testing
