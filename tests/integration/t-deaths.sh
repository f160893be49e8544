#!/bin/sh
# Reports on the deaths that can leave one: a process that a signal's
# default action kills (SIGTERM from a scheduler, SIGINT, CPython's re-raise
# of an uncaught KeyboardInterrupt, abort, a segfault) writes its report,
# then dies exactly as it would have: each death is compared with the same
# program's without the interposer, core dumps included.  A program's own
# handler runs as it would and no report is written from it; what
# sigaction says is what the program set.
. "$srcdir/tests/lib/defs.sh"
WAIT="$PYTHON3 $srcdir/tests/integration/waitstatus.py"
PYENV=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}/versions

# died NAME WANT SCRIPT...: app_driver SCRIPT dies the same way bare and
# under the launcher (WANT), and the report says how.
died() {
  name=$1 want=$2
  shift 2
  bare=$(cd "$tmp/bare" && $WAIT "$SIM/app_driver" "$@" 2>/dev/null | tail -n 1)
  rm -f "$tmp/r.json" "$tmp/guarded/core"*
  got=$(cd "$tmp/guarded" && $WAIT "$LAUNCHER" --report "$tmp/r.json" -- \
    "$SIM/app_driver" "$@" 2>/dev/null | tail -n 1)
  is "$got/$bare" "$want/$want" "$name: dies as it does without us ($want)"
  if [ -e "$tmp/r.json" ]; then
    "$top_builddir/cumemguard-report" "$tmp/r.json" >"$tmp/summary" 2>&1
    is "$?" 0 "$name: cumemguard-report reads the report"
  fi
}

mkdir -p "$tmp/bare" "$tmp/guarded"
# Core files where the machine writes them next to the program: then the
# core flag is compared too.  A launcher built with AddressSanitizer
# (check-sanitize) sets its core limit to 0, which the program inherits:
# there both sides run without core files.
if ldd "$LAUNCHER" 2>/dev/null | grep -q libasan; then
  ulimit -c 0 2>/dev/null || true
else
  ulimit -c unlimited 2>/dev/null || true
fi

died "SIGTERM, no handler" "signal SIGTERM nocore" alloc 1M kill TERM
validate "$tmp/r.json"
is "$(q "$tmp/r.json" '(r["process"]["reason"], r["process"]["end"], r["summary"]["live_bytes"])')" \
  "('killed', {'by': 'signal', 'signal': 15, 'name': 'SIGTERM'}, 1048576)" \
  "the report: killed by SIGTERM, the live memory in it"

died "SIGINT" "signal SIGINT nocore" alloc 1M kill INT
is "$(q "$tmp/r.json" 'r["process"]["end"]["name"]')" SIGINT "the report says SIGINT"

core=nocore
case "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" in
  core*) [ "$(ulimit -c)" = unlimited ] && core=core ;;
esac
# A library built with AddressSanitizer (check-sanitize) brings ASan's own
# handlers for crashes: those signals are then handled, not ours.
if ldd "$CUMEMGUARD_LIBRARY" 2>/dev/null | grep -q libasan; then
  tap_n=$((tap_n + 1))
  echo "ok $tap_n - # SKIP crashes: ASan's runtime handles SIGSEGV and SIGABRT"
else
  died "abort" "signal SIGABRT $core" alloc 1M crash abort
  is "$(q "$tmp/r.json" 'r["process"]["end"]["name"]')" SIGABRT "the report says SIGABRT"
  died "a segfault" "signal SIGSEGV $core" alloc 1M crash segv
  is "$(q "$tmp/r.json" '(r["process"]["end"]["name"], len(r["leaks"]))')" "('SIGSEGV', 1)" \
    "the report says SIGSEGV, and has the leak"
  if [ "$core" = core ]; then
    is "$(ls "$tmp/guarded" | grep -c '^core')" 1 "the crash left its core file"
  fi
fi

# The program's own handler: it runs, the process exits as it says, and
# no report comes from the signal (the handler's _exit skips the one at
# exit too, as it would any atexit handler).
died "SIGTERM, the program's handler" "exit 3" alloc 1M handle TERM kill TERM
is "$(test -e "$tmp/r.json" && echo yes || echo no)" no "no report from a signal the program handles"

# An external SIGTERM, as a scheduler sends it, while the program sleeps.
rm -f "$tmp/r.json"
"$LAUNCHER" --report "$tmp/r.json" -- "$SIM/app_driver" alloc 2M sleep 20000 \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q '^alloc' "$tmp/out" 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
kill -TERM $pid
wait $pid
rc=$?
is "$rc" 143 "kill -TERM from outside: status 143, as without us"
is "$(q "$tmp/r.json" '(r["process"]["end"]["name"], r["summary"]["live_bytes"])')" \
  "('SIGTERM', 2097152)" "and the report is there"

# What the program sees: the default it set, not our handler.
guard "--report $tmp/v.json" app_driver alloc 1M getsig TERM getsig INT handle INT \
  getsig INT sigdfl INT getsig INT
is "$(grep '^getsig\|^sigdfl' "$tmp/out" | tr '\n' ' ')" \
  "getsig sig=TERM rc=0 action=default getsig sig=INT rc=0 action=default getsig sig=INT rc=0 action=handler sigdfl sig=INT old=handler getsig sig=INT rc=0 action=default " \
  "sigaction and signal say what the program set"
is "$(q "$tmp/v.json" 'r["process"]["end"]')" "{'by': 'exit', 'status': 0}" \
  "an ordinary exit: the report says the status"
guard "--report $tmp/v.json" app_driver alloc 1M exit 5
is "$rc/$(q "$tmp/v.json" 'r["process"]["end"]')" "5/{'by': 'exit', 'status': 5}" \
  "exit 5: the status, in the report too"

# A handler set back to the default, then the signal: CPython's way.
died "SIGINT after signal(SIGINT, SIG_DFL)" "signal SIGINT nocore" \
  alloc 1M handle INT sigdfl INT kill INT
is "$(q "$tmp/r.json" 'r["process"]["end"]["name"]')" SIGINT "the report says SIGINT"

# A forked child that never used device memory dies at once, without a
# report; its parent's report is written at its exit.
start=$(date +%s)
guard "--report $tmp/f.%p.json" app_driver alloc 1M fork kill TERM endfork
end=$(date +%s)
is "$(grep '^fork' "$tmp/out")" "fork signal=15" "the child dies by SIGTERM"
is "$([ $((end - start)) -lt 5 ] && echo fast || echo slow)" fast \
  "without waiting for a report it has no thread for"
is "$(ls "$tmp" | grep -c '^f\..*\.json$')" 1 "one report: the parent's"

# signal_report=0: the signal's action is left alone; no report.
died "signal_report=0" "signal SIGTERM nocore" alloc 1M kill TERM
rm -f "$tmp/r.json"
got=$(CUMEMGUARD_OPTIONS=signal_report=0 $WAIT "$LAUNCHER" --report "$tmp/r.json" -- \
  "$SIM/app_driver" alloc 1M kill TERM 2>/dev/null | tail -n 1)
is "$got/$(test -e "$tmp/r.json" && echo report || echo none)" \
  "signal SIGTERM nocore/none" "signal_report=0: killed as before, no report"

# snapshot=TIME: a process killed outright leaves its last snapshot at the
# path its final report would have taken; one that exits replaces it.
rm -f "$tmp"/s.*.json
CUMEMGUARD_OPTIONS=snapshot=1s "$LAUNCHER" --report "$tmp/s.%p.%t.json" -- \
  "$SIM/app_driver" alloc 1M sleep 1500 alloc 2M sleep 30000 \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
# A snapshot taken after the second allocation, however slow the machine.
both() {
  for f in "$tmp"/s.*.json; do
    [ -s "$f" ] && [ "$(q "$f" 'r["summary"]["live_bytes"]' 2>/dev/null)" = 3145728 ]
  done
}
until_ok both
kill -KILL $pid
wait $pid
rc=$?
is "$rc" 137 "SIGKILL: status 137"
set -- "$tmp"/s.*.json
is "$#" 1 "one file, whatever the number of snapshots (%t read once)"
validate "$1"
is "$(q "$1" '(r["process"]["reason"], r["process"]["end"], r["summary"]["live_bytes"], r["options"]["snapshot"])')" \
  "('snapshot', None, 3145728, 1)" \
  "the last snapshot: both allocations, the process not yet ended"
tool=$top_builddir/cumemguard-report
is "$("$tool" "$1" | sed -n 3p | cut -d, -f1)" \
  "  written as a snapshot while the process ran" "the reader says it is a snapshot"

rm -f "$tmp"/s.*.json
CUMEMGUARD_OPTIONS=snapshot=1s "$LAUNCHER" --report "$tmp/s.%p.%t.json" -- \
  "$SIM/app_driver" alloc 1M sleep 2500 free 0 >"$tmp/out" 2>"$tmp/err"
set -- "$tmp"/s.*.json
is "$#/$(q "$1" '(r["process"]["reason"], r["summary"]["live_bytes"])')" \
  "1/('exit', 0)" "an exit replaces the snapshots with the final report"

# CPython: an uncaught KeyboardInterrupt ends the process by SIGINT.
cat >"$tmp/ctrlc.py" <<'EOF'
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
raise KeyboardInterrupt
EOF
for py in /usr/bin/python3.11 "$PYENV/3.11.7/bin/python3" \
  "$PYENV/3.12.1/bin/python3" "$PYENV/3.13.0/bin/python3"; do
  [ -x "$py" ] || continue
  v=$("$py" -c 'import platform; print(platform.python_version())')
  bare=$($WAIT "$py" "$tmp/ctrlc.py" 2>/dev/null)
  rm -f "$tmp/r.json"
  got=$($WAIT "$LAUNCHER" --report "$tmp/r.json" -- "$py" "$tmp/ctrlc.py" 2>/dev/null)
  is "$got/$bare" "signal SIGINT nocore/signal SIGINT nocore" \
    "Python $v, Ctrl-C: killed by SIGINT, as without us"
  is "$(q "$tmp/r.json" '(r["process"]["end"]["name"], r["summary"]["live_bytes"])')" \
    "('SIGINT', 1048576)" "Python $v: the report is written"
done

done_testing
