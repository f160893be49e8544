# Writes page.html as the C array cmg__page_lines (reader/page_html.h), one
# string per line, so that the tool carries its page and needs no file at
# run time.  Characters are escaped by hand, without gsub, whose handling
# of backslashes in replacements differs from one awk to the next.
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
BEGIN {
  print "/* Generated from src/reader/page.html by src/reader/embed.awk. */"
  print "static const char *const cmg__page_lines[] = {"
}
{ print "  \"" esc($0) "\\n\"," }
END { print "};" }
