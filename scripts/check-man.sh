#!/bin/sh
# The manual pages lint clean with mandoc (every level, style included),
# and carry this release's version.
set -u
: "${srcdir:?run through make check}" "${top_builddir:?run through make check}"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
pages=$(ls "$srcdir"/man/*.[0-9])
echo "1..$(($(echo "$pages" | wc -l) * 2))"
n=0
for page in $pages; do
  name=$(basename "$page")
  if command -v mandoc >/dev/null 2>&1; then
    out=$(mandoc -Tlint -W all "$page" 2>&1)
    if [ -z "$out" ]; then
      echo "ok $((n += 1)) - $name: mandoc -Tlint -W all says nothing"
    else
      echo "not ok $((n += 1)) - $name: mandoc -Tlint -W all says nothing"
      echo "$out" | sed 's/^/#   /'
    fi
  else
    echo "ok $((n += 1)) # SKIP mandoc is not installed (scripts/install-deps.sh installs it)"
  fi
  if head -n 5 "$page" | grep -q "^\.\(TH\|Os\) .*cumemguard $version"; then
    echo "ok $((n += 1)) - $name: names cumemguard $version"
  else
    echo "not ok $((n += 1)) - $name: names cumemguard $version"
  fi
done
