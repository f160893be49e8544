#!/bin/sh
# Every relative link of the manual names a file that exists: README.md,
# docs/*.md and tests/README.md, each link target `](path)` or
# `](path#anchor)` taken from the folder of the file that holds it
# (http:, https:, mailto: and a bare #anchor are not files).  An anchor
# into a Markdown file must name one of its headings, as GitHub spells
# them.  One test point per file; each broken link is one line on stderr:
#   check-links: FILE: LINK: no such file
set -u
srcdir=${srcdir:-.}
cd "$srcdir" || exit 1

files=README.md
for f in docs/*.md tests/README.md; do
  [ -f "$f" ] && files="$files $f"
done

# The link targets of file $1, one a line.
targets() {
  awk '{
    s = $0
    while (match(s, /\]\([^)]*\)/)) {
      t = substr(s, RSTART + 2, RLENGTH - 3)
      sub(/^[ \t]*</, "", t); sub(/>[ \t]*$/, "", t)
      sub(/[ \t].*$/, "", t)   # a title after the path
      if (t != "") print t
      s = substr(s, RSTART + RLENGTH)
    }
  }' "$1"
}

# The anchors of Markdown file $1's headings, as GitHub makes them:
# lower case, punctuation dropped, spaces made hyphens.
anchors() {
  awk '/^```/ { fenced = !fenced; next }
    !fenced && /^#+ / {
      h = $0
      sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
      h = tolower(h)
      gsub(/[^a-z0-9 _-]/, "", h)
      gsub(/ /, "-", h)
      print h
    }' "$1"
}

# No link is a pattern to expand.
set -f
# shellcheck disable=SC2086 # the names hold no spaces
set -- $files
echo "1..$#"
n=0 status=0
for f in "$@"; do
  dir=$(dirname "$f")
  links=0 bad=0
  for link in $(targets "$f"); do
    case $link in
      http:* | https:* | mailto:*) continue ;;
      \#*) target=$f ;;   # a heading of this file
      /*) target=.${link%%#*} ;;
      *) target=$dir/${link%%#*} ;;
    esac
    links=$((links + 1))
    if [ ! -e "$target" ]; then
      echo "check-links: $f: $link: no such file" >&2
      bad=$((bad + 1))
      continue
    fi
    case $target:$link in
      *.md:*\#*)
        if ! anchors "$target" | grep -Fqx -- "${link#*#}"; then
          echo "check-links: $f: $link: no such heading" >&2
          bad=$((bad + 1))
        fi
        ;;
    esac
  done
  n=$((n + 1))
  if [ "$bad" -eq 0 ]; then
    echo "ok $n - $f: $links relative links, none broken"
  else
    echo "not ok $n - $f: $bad of its $links relative links broken"
    status=1
  fi
done
exit $status
