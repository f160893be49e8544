# The shell tests' harness, sourced by every suite's t-*.sh (directly or
# through its own defs.sh): paths, a temporary directory removed on exit,
# TAP helpers, and `guard`, which runs a simulated-CUDA test program under
# the launcher.  Quiet unless VERBOSE is set.
set -u
: "${top_builddir:?run through make check}" "${srcdir:?run through make check}"

# The Python that configure found (make passes it), or as configure looks
# for it; exported for the shells a test starts.
if [ -z "${PYTHON3:-}" ]; then
  PYTHON3=python3
  [ -x /usr/bin/python3 ] && PYTHON3=/usr/bin/python3
fi
export PYTHON3
SIM=$top_builddir/tests/sim
LAUNCHER=$top_builddir/cumemguard
CUMEMGUARD_LIBRARY=$top_builddir/.libs/libcumemguard.so
LD_LIBRARY_PATH=$SIM/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUMEMGUARD_LIBRARY LD_LIBRARY_PATH
unset CUMEMGUARD_OPTIONS CMG_SIM_DEVICES CMG_SIM_GETPROC_TRAMPOLINE \
  CUDA_VISIBLE_DEVICES

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmgtest.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

tap_n=0
tap_failed=0

# ok CONDITION-EXIT-STATUS DESCRIPTION: one TAP line.
tap() {
  tap_n=$((tap_n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $tap_n - $2"
  else
    tap_failed=$((tap_failed + 1))
    echo "not ok $tap_n - $2"
    if [ -s "$tmp/out" ]; then sed 's/^/#   out: /' "$tmp/out"; fi
    if [ -s "$tmp/err" ]; then sed 's/^/#   err: /' "$tmp/err"; fi
  fi
}

# is GOT WANT DESCRIPTION
is() {
  [ "$1" = "$2" ]
  st=$?
  tap $st "$3"
  [ $st -eq 0 ] || echo "#   got '$1', want '$2'"
}

# hguard "LAUNCHER OPTIONS" PROGRAM ARGS...: runs any program (a path) under
# the launcher; stdout in $tmp/out, stderr in $tmp/err, status in $rc.  The
# report goes to $tmp/report.PID.json unless the options name one.
hguard() {
  opts=$1 prog=$2
  shift 2
  case "$opts" in
    *--report*) ;;
    *) opts="$opts --report $tmp/report.%p.json" ;;
  esac
  # shellcheck disable=SC2086
  ${CMG_TEST_PREFIX:-} "$LAUNCHER" $opts -- "$prog" "$@" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ -n "${VERBOSE:-}" ]; then cat "$tmp/out" "$tmp/err" >&2; fi
}

# guard "LAUNCHER OPTIONS" APP SCRIPT...: hguard for tests/sim/APP.
guard() {
  opts=$1 app=$2
  shift 2
  hguard "$opts" "$SIM/$app" "$@"
}

# Another user, for what permissions do (which never stop root).
# other_user PROGRAM...: as root with setpriv, copies in $tmp/bin of the
# launcher, the library, the simulated driver and the PROGRAMs (paths),
# which user nobody can reach where the build tree is not (a clone in a
# mode-700 directory); status 0 when that user can read them all.
other_user() {
  [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 || return 1
  chmod 711 "$tmp" && mkdir -p "$tmp/bin" && chmod 755 "$tmp/bin" &&
    cp "$LAUNCHER" "$CUMEMGUARD_LIBRARY" "$@" "$tmp/bin/" &&
    cp -L "$SIM/.libs/libcuda.so.1" "$SIM/.libs/libnvidia-ml.so.1" \
      "$tmp/bin/" && chmod a+rX "$tmp/bin"/* || return 1
  for _f in "$tmp"/bin/*; do
    as_nobody test -r "$_f" || return 1
  done
}

# as_nobody COMMAND...: COMMAND as user nobody, with the copies' library
# and driver.
as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env CUMEMGUARD_LIBRARY="$tmp/bin/libcumemguard.so" \
    LD_LIBRARY_PATH="$tmp/bin" "$@"
}

# until_ok COMMAND...: runs COMMAND every 10 ms until it succeeds, for up
# to 60 s (a loaded machine); the status says whether it did.
until_ok() {
  _waited=0
  until "$@"; do
    [ $_waited -lt 6000 ] || return 1
    sleep 0.01
    _waited=$((_waited + 1))
  done
}

# has_line FILE PATTERN: a line of FILE matches (no FILE yet: no).
has_line() {
  grep -q -- "$2" "$1" 2>/dev/null
}

# catches PID SIGNUM: process PID has a handler for signal SIGNUM (SigCgt
# in /proc/PID/status; signals up to 32 are all a test sends).
catches() {
  _mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
  _mask=${_mask#????????}
  [ -n "$_mask" ] && [ $(((0x$_mask >> ($2 - 1)) & 1)) -eq 1 ]
}

# until_line FILE PATTERN: waits for a line of FILE to match.
until_line() {
  until_ok has_line "$1" "$2"
}

# until_exists FILE: waits for FILE to exist.
until_exists() {
  until_ok test -e "$1"
}

# until_caught PID SIGNUM: waits for process PID to catch signal SIGNUM, so
# that a test never sends a dump signal before the interposer has set its
# handler up, which would kill the program instead.
until_caught() {
  until_ok catches "$1" "$2"
}

# noise: stderr lines other than the report's one-line summary.
noise() {
  grep -v '^cumemguard: report ' "$tmp/err" | wc -l
}

# report: the path of the one report in $tmp.
report() {
  ls "$tmp"/report.*.json 2>/dev/null | head -n 1
}

# validate FILE...: checks reports against the schema, a TAP line each.  A
# copy of each is checked when the test ends (done_testing), all of them in
# one validate-report: its Python and jsonschema take 0.2 s to start, which
# once per report came to a tenth of `make check`.
validate() {
  mkdir -p "$tmp/valid"
  for f in "$@"; do
    _v=$tmp/valid/$(printf %04d "$(ls "$tmp/valid" | grep -c '[.]name$')")
    basename "$f" >"$_v.name"
    cp "$f" "$_v.json" 2>"$_v.err" || rm -f "$_v.json"
  done
}

# validate_pending: the TAP lines of the reports validate kept; a report
# passes only on validate-report's own word that it is valid.
validate_pending() {
  [ -d "$tmp/valid" ] || return 0
  "$srcdir/scripts/validate-report" -v "$srcdir/docs/report-schema.json" \
    "$tmp"/valid/*.json >"$tmp/valid/out" 2>&1
  for _name in "$tmp"/valid/*.name; do
    _v=${_name%.name}
    grep -qxF "$_v.json: valid" "$tmp/valid/out"
    _st=$?
    tap_n=$((tap_n + 1))
    if [ $_st -eq 0 ]; then
      echo "ok $tap_n - $(cat "$_name") is valid against the schema"
      continue
    fi
    tap_failed=$((tap_failed + 1))
    echo "not ok $tap_n - $(cat "$_name") is valid against the schema"
    if [ -e "$_v.json" ]; then
      grep -F "$_v.json: " "$tmp/valid/out" || cat "$tmp/valid/out"
    else
      cat "$_v.err"
    fi | sed 's/^/#   /'
  done
  rm -rf "$tmp/valid"
}

# bare APP SCRIPT...: the same program without the interposer.
bare() {
  app=$1
  shift
  "$SIM/$app" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# val N KEY: the value of KEY=... on line N of $tmp/out (one awk: the tests
# call it thousands of times).
val() {
  awk -v n="$1" -v k="$2=" 'NR == n {
    for (i = 1; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit }
    exit }' "$tmp/out"
}

# at OP KEY [N]: the value of KEY=... on the Nth line (1 unless given) of
# $tmp/out whose first word is OP, so that a check does not move when a
# step is put before it.
at() {
  awk -v op="$1" -v k="$2=" -v n="${3:-1}" '$1 == op && ++seen == n {
    for (i = 2; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit }
    exit }' "$tmp/out"
}

# count PATTERN FILE: lines matching the fixed string.
count() {
  grep -cF -- "$1" "$2"
}

done_testing() {
  validate_pending
  echo "1..$tap_n"
  [ "$tap_failed" -eq 0 ]
}

# q FILE EXPR: evaluates a Python expression over the JSON report `r` (-S:
# the standard library only, a fifth quicker to start);
# fn(stack_id) is the list of function names of a stack, innermost first.
q() {
  "$PYTHON3" -S - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stacks = {s["id"]: s for s in r["stacks"]}
def fn(sid):
    return [r["frames"][f]["function"] for f in stacks[sid]["frames"]] if sid else []
print(eval(sys.argv[2]))
PY
}

# Where pyenv keeps its CPythons: the Python tests run under each of them
# present beside Debian's.
PYENV=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}/versions

# each_python FUNCTION: FUNCTION NAME PYTHON under Debian's python3.11 and
# pyenv's 3.11.7, 3.12.1 and 3.13.0, each that is installed; one line for
# each that is not.
each_python() {
  _one_python "$1" debian-3.11 /usr/bin/python3.11
  for _py_v in 3.11.7 3.12.1 3.13.0; do
    _one_python "$1" "$_py_v" "$PYENV/$_py_v/bin/python3"
  done
}
_one_python() {
  if [ -x "$3" ]; then
    "$1" "$2" "$3"
  else
    echo "# skip $2: $3 is not installed"
  fi
}
