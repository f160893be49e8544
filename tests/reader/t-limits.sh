#!/bin/sh
# What the tool takes from a report, and no more (the limits of
# docs/report-format.md, "What the reader takes from a report"): a stack
# of up to 1024 frames and cuts, a name of up to 64 KiB, a file of up to
# 1 GiB.  Past each, every command refuses the report in one line that
# names the value and the limit, and holds little memory doing so: one
# stack of 10^6 references to one frame (2 MB) was 295 MB of --json and
# 1.3 GB resident.  A NUL spelled \u0000 in a
# string reads as \x00, as the library writes a NUL, rather than ending
# the string, and a parse error after one is placed in the file as it is.
# check-tool-asan runs this file with the tool built with AddressSanitizer
# and UBSan.
. "$srcdir/tests/reader/defs.sh"
LARGE="$PYTHON3 $TOOLDIR/make-large.py"

# One stack of 10^6 references to one frame.
$LARGE refs "$tmp/refs.json" 1000000
measure 120 --json "$tmp/refs.json"
echo "# $(wc -c <"$tmp/refs.json") bytes: status $rc, $rss MiB resident"
one_line_error "refs.json: stacks[0].frames: 1000000 frames, more than the 1024 this tool reads of a stack" \
  "--json refuses a stack of 10^6 frames, in one line naming both counts"
is "$(awk -v m="$rss" 'BEGIN { print (m < 1024) }')" 1 \
  "and stays within 1 GiB of memory ($rss MiB)"
for cmd in summary folded html; do
  tool $cmd -o "$tmp/p.html" "$tmp/refs.json"
  [ $cmd = html ] || tool $cmd "$tmp/refs.json"
  one_line_error "stacks[0].frames: 1000000 frames, more than the 1024" \
    "$cmd refuses it alike"
done
[ ! -e "$tmp/p.html" ]
tap $? "and html writes no page"

# The limit itself is read; one frame or cut past it is not.
$LARGE refs "$tmp/at.json" 1024
tool "$tmp/at.json"
is "$rc/$(grep -c '^    #1023 ' "$tmp/out")" 0/1 "a stack of 1024 frames is read whole"
$LARGE refs "$tmp/past.json" 1025
tool "$tmp/past.json"
one_line_error "stacks[0].frames: 1025 frames, more than the 1024" \
  "a stack of 1025 frames is refused"
$LARGE refs "$tmp/cuts.json" 1000 25
tool "$tmp/cuts.json"
one_line_error "stacks[0].cuts: 25 cuts after 1000 frames, more than the 1024 frames and cuts" \
  "so is one of 1000 frames and 25 cuts"
$LARGE refs "$tmp/cuts.json" 1000 24
tool "$tmp/cuts.json"
is "$rc/$(grep -c '^    \.\.\. 1 native frame not recorded here$' "$tmp/out")" \
  0/24 "and one of 1000 frames and 24 cuts is read"

# Names.
$LARGE name "$tmp/name.json" 65537
tool "$tmp/name.json"
one_line_error "frames[0].function: 65537 bytes long, more than the 65536 this tool reads of a name" \
  "a function's name of 64 KiB and a byte is refused"
$LARGE name "$tmp/name.json" 65536
tool "$tmp/name.json"
is "$rc/$(awk '$1 == "#0" { print length($2) }' "$tmp/out")" 0/$((65536 + 4)) \
  "one of 64 KiB is read, and printed whole"

# Files: one past the limit is refused before it is read, and so is
# standard input past it (where the size is known only by reading).
truncate -s $((1024 * M + 1)) "$tmp/big.json"
measure 60 "$tmp/big.json"
one_line_error "big.json: 1.0 GiB (1073741825 bytes), more than the 1.0 GiB (1073741824 bytes) this tool reads of a report" \
  "a file of 1 GiB and a byte is refused, by its size"
is "$(awk -v m="$rss" 'BEGIN { print (m < 64) }')" 1 \
  "without reading it ($rss MiB)"
if [ -z "${CMG_TEST_PREFIX:-}" ]; then
  head -c $((1024 * M + 1)) /dev/zero | tool -
  one_line_error "-: more than 1.0 GiB (1073741824 bytes), the most this tool reads of a report" \
    "a pipe is read up to the limit, and refused past it"
else
  tap_n=$((tap_n + 1))
  echo "ok $tap_n - # SKIP 1 GiB through a pipe under ${CMG_TEST_PREFIX%% *}"
fi

# A NUL spelled \u0000: \x00, as the library writes one.
"$PYTHON3" - "$TOOLDIR/data/job-a.json" "$tmp/nul.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r["frames"]:
    if f["function"] == "train_step":
        f["function"] = "train\0step"
text = json.dumps(r)
assert "train\\u0000step" in text
open(sys.argv[2], "w").write(text)
PY
tool "$tmp/nul.json"
is "$rc/$(grep -c 'train\\x00step+0x7e (trainer+0x1f00)$' "$tmp/out")/$(grep -c ' train+' "$tmp/out")" \
  0/3/0 "a function holding \\u0000 is shown whole, the NUL as \\x00"
tool_json "$tmp/nul.out" --json "$tmp/nul.json"
is "$rc/$(js "$tmp/nul.out" 'sorted({f["function"] for s in d["summaries"] for g in s["leaks"] for f in g["frames"] if "train" in (f["function"] or "")})')" \
  "0/['train\\\\x00step']" "--json: the same"
printf '{"a": "b\\u0000c\\\\u0000d\\u0000", "format": "cumemguard-report" x}\n' \
  >"$tmp/nul-bad.json"
tool "$tmp/nul-bad.json"
one_line_error "nul-bad.json: not valid JSON (line 1, column 63)" \
  "an error after \\u0000 escapes is placed where the file has it"

done_testing
