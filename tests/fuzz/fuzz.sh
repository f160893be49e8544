#!/bin/sh
# make fuzz-smoke: builds the libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined) in _fuzz/ and runs each for
# FUZZ_TIME seconds (default 20), starting from its committed corpus in
# tests/fuzz/corpus/TARGET (read only: new inputs go to _fuzz/work/TARGET).
# A crash, a leak, a timeout or an out-of-memory fails the target and leaves
# the input in _fuzz/artifacts/; reproduce with _fuzz/TARGET FILE.
#
#   config  CUMEMGUARD_OPTIONS: cmg__config_parse, cmg__config_expand
#   size    cmg__size_parse, cmg__format_size
#   report  cumemguard-report's reader (cmg__tool_read) and everything the
#           tool does with a report it accepted
#
# Without clang's fuzzer runtime nothing is installed: it says so and fails.
# Called by make with the flags and file lists in the environment.
set -u
: "${top_builddir:?run through make fuzz-smoke}" "${top_srcdir:?}"
B=$top_builddir/_fuzz
T=${FUZZ_TIME:-20}
CLANG=${CLANG:-clang}
TARGETS=${FUZZ_TARGETS:-config size report}
mkdir -p "$B/artifacts"

FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
if ! command -v "$CLANG" >/dev/null 2>&1; then
  echo "fuzz-smoke: no $CLANG; libFuzzer needs clang (Debian: apt-get install clang)" >&2
  exit 1
fi
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' \
  >"$B/probe.c"
if ! "$CLANG" $FLAGS -o "$B/probe" "$B/probe.c" >"$B/probe.log" 2>&1; then
  echo "fuzz-smoke: $CLANG cannot link -fsanitize=fuzzer: its libFuzzer runtime is missing" >&2
  echo "fuzz-smoke: (Debian 12: apt-get install clang, which brings libclang-rt-14-dev)" >&2
  sed 's/^/fuzz-smoke:   /' "$B/probe.log" | head -n 5 >&2
  exit 1
fi

src() {
  for f in "$@"; do
    case $f in
    */reader/main.c) ;;
    /*.c) printf '%s ' "$f" ;;  # generated, in the build tree
    *.c) printf '%s/%s ' "$top_srcdir" "$f" ;;
    esac
  done
}
CPPF="$FUZZ_CPPFLAGS $FUZZ_DEPS_CFLAGS"
build() {
  name=$1
  shift
  # shellcheck disable=SC2086
  "$CLANG" $FLAGS $CPPF -o "$B/$name" "$top_srcdir/tests/fuzz/fuzz_$name.c" \
    "$@" $FUZZ_DEPS_LIBS || exit 1
}
# shellcheck disable=SC2046
build config $(src src/core/conf.c src/core/conf_gpu.c src/core/conf_table.c src/core/conf_report.c src/core/signals.c src/core/size.c src/core/log.c)
# shellcheck disable=SC2046
build size $(src src/core/size.c src/core/log.c)
# shellcheck disable=SC2046
build report $(src $TOOL_SRC src/core/jsonw.c src/core/size.c src/core/log.c src/core/pools.c src/core/utf8.c)

failed=0
for t in $TARGETS; do
  mkdir -p "$B/work/$t"
  echo "fuzz-smoke: $t for ${T}s"
  if "$B/$t" -max_total_time="$T" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$B/artifacts/$t-" \
       "$B/work/$t" "$top_srcdir/tests/fuzz/corpus/$t" >"$B/$t.log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$B/$t.log" |
      sed "s/^/fuzz-smoke:   $t /"
  else
    failed=$((failed + 1))
    echo "fuzz-smoke: $t FAILED; the input is in $B/artifacts/, the log in $B/$t.log" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$B/$t.log" | head -n 10 >&2
  fi
done
[ "$failed" -eq 0 ]
