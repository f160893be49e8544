# Writes page.html as the C array cmg__page_lines (reader/page_html.h), one
# string per line, so that the tool carries its page and needs no file at
# run time.  A line "@include FILE" of page.html stands for the lines of
# FILE, a file beside it (its style and script), so that the tool writes
# one self-contained page.  Characters are escaped by hand, without gsub,
# whose handling of backslashes in replacements differs from one awk to the
# next.
function esc(s,    out, c, i) {
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\") c = "\\\\"
    else if (c == "\"") c = "\\\""
    else if (c == "\t") c = "\\t"
    else if (c == "?") c = "\\?"
    out = out c
  }
  return out
}
function put(s) { print "  \"" esc(s) "\\n\"," }
# A missing part fails the build rather than leave a hole in the page.
function include(name,    dir, path, line, rc) {
  dir = FILENAME
  sub(/[^\/]*$/, "", dir)
  path = dir name
  while ((rc = (getline line < path)) > 0)
    put(line)
  if (rc < 0) {
    print "embed.awk: " FILENAME ":" FNR ": cannot read " path >"/dev/stderr"
    failed = 1
    exit 1
  }
  close(path)
}
BEGIN {
  print "/* Generated from src/reader/page.html and the files it includes by"
  print "   src/reader/embed.awk. */"
  print "static const char *const cmg__page_lines[] = {"
}
/^@include [^ ]+$/ { include(substr($0, 10)); next }
{ put($0) }
END { if (!failed) print "};" }
