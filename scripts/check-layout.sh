#!/bin/sh
# The layout's rules hold (docs/INTERNALS.md, "Layout"), each one test
# point, each breach one line on stderr:
#   check-layout: WHAT: why it breaks the rule
# - no folder of src/ holds more than 15 C or C++ files directly;
# - calls run one way: core includes only core, the runtime only core and
#   the runtime, so nothing below the preload library calls up into it;
# - only runtime/linker/dynlink.c calls libc's dlsym or dlvsym, so that no
#   lookup of the library's own lands in the dlsym it exports
#   (preload/hooks/resolvers.c defines that one);
# - no source file (C, C++, headers, the page's HTML, CSS and script, the
#   shell and Python of src/, tests/, bench/ and scripts/) is longer than
#   700 lines, so that each can be read as a whole;
# - each file of the reader's cmd/ is one command: none includes another's
#   header;
# - the reader's stages call down only (cmd > run > show > model > load):
#   each includes its own headers, those of the stages below it, the
#   reader's own (tool.h and the generated ones) and the core's.
set -u
srcdir=${srcdir:-.}
cd "$srcdir" || exit 1
echo "1..6"
status=0

# point N TEXT BREACHES: ok when BREACHES is empty, else each line of it
# goes to stderr.
point() {
  if [ -z "$3" ]; then
    echo "ok $1 - $2"
  else
    printf '%s\n' "$3" | sed 's/^/check-layout: /' >&2
    echo "not ok $1 - $2"
    status=1
  fi
}

crowded=$(find src -type d | sort | while read -r d; do
  n=$(find "$d" -maxdepth 1 -type f \( -name '*.c' -o -name '*.cc' \) | wc -l)
  [ "$n" -gt 15 ] && echo "$d: $n C files, more than 15"
done)
point 1 "no folder of src/ holds more than 15 C files" "$crowded"

# The quoted includes of the files under $1 that name a folder of src/
# outside the ones listed after it.
includes_outside() {
  dir=$1
  shift
  allowed=$(printf '%s/|' "$@")
  grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z0-9_]+/' "$dir" \
    --include='*.c' --include='*.h' |
    grep -vE "#[[:space:]]*include[[:space:]]+\"(${allowed%|})" |
    sed 's/:\([0-9]*\):.*include[[:space:]]*/:\1: includes /'
}
up=$(includes_outside src/core core
  includes_outside src/runtime core runtime)
point 2 "nothing in src/core or src/runtime includes a header from above it" \
  "$up"

lookups=$(grep -rnE '(^|[^_a-zA-Z0-9])dl(v?)sym[[:space:]]*\(' src/core \
  src/runtime src/preload --include='*.c' |
  grep -v '^src/runtime/linker/dynlink\.c:' |
  grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*)' |
  grep -vE '^src/preload/hooks/resolvers\.c:[0-9]+:dlsym\(void' |
  sed 's/:\([0-9]*\):.*/:\1: calls dlsym itself, not runtime\/linker\/dynlink.h/')
point 3 "only runtime/linker/dynlink.c calls libc's dlsym" "$lookups"

# The sources, as git or the tarball holds them: not the tests' data.
sources() {
  find src tests bench scripts include -type f \( -name '*.c' -o -name '*.cc' \
    -o -name '*.h' -o -name '*.html' -o -name '*.css' -o -name '*.js' \
    -o -name '*.sh' -o -name '*.py' -o -name '*.awk' -o -name '*.mk' \
    -o -path 'scripts/*' \) ! -path 'bench/base-*' ! -name '*.pb-c.*' ! -name '*.pb.*' \
    ! -name 'page_html.h' ! -path '*/node_modules/*' 2>/dev/null | sort
}
long=$(sources | while read -r f; do
  n=$(wc -l <"$f")
  [ "$n" -gt 700 ] && echo "$f: $n lines, more than 700"
done)
point 4 "no source file is longer than 700 lines" "$long"

# The quoted includes of reader/cmd/X.c and X.h that name another file's
# header of cmd/.
commands=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"reader/cmd/' \
  src/reader/cmd/*.c src/reader/cmd/*.h |
  while IFS=: read -r f n line; do
    own=$(basename "$f")
    own=${own%.*}
    case $line in
    *"\"reader/cmd/$own.h\""*) ;;
    *) printf '%s:%s: includes %s\n' "$f" "$n" \
      "$(printf '%s' "$line" | sed 's/.*include[[:space:]]*//')" ;;
    esac
  done)
point 5 "no file of the reader's cmd/ includes another command's header" \
  "$commands"

# Each stage of the reader, followed by the stages below it.
stages="cmd run show model load"
down=$(set -- $stages
  while [ $# -gt 0 ]; do
    stage=$1
    allowed=$(printf '%s|' "$@")
    grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"reader/[a-z0-9_]+/' \
      "src/reader/$stage" -r --include='*.c' --include='*.h' |
      grep -vE "#[[:space:]]*include[[:space:]]+\"reader/(${allowed%|})/" |
      sed 's/:\([0-9]*\):.*include[[:space:]]*/:\1: includes /'
    shift
  done)
point 6 "each stage of the reader includes only itself and the stages below" \
  "$down"
exit $status
