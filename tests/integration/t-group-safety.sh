#!/bin/sh
# The group segment is untrusted input: a corrupt, foreign or incompatible
# one is one clear line and the process fails closed (it runs, but no
# device allocation succeeds), never a crash; another user can neither
# read the segment nor make a user's group use one of theirs.
. "$srcdir/tests/lib/defs.sh"
G=safe$$
UID_=$(id -u)
SHM=/dev/shm/cumemguard.$UID_
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"* /dev/shm/cumemguard.65534."$G"*' EXIT

# refused GROUP WHAT TEXT: a member of GROUP is refused with TEXT.
refused() {
  guard "--group $1 --group-limit 8M" app_driver alloc 1M alloc 1K
  is "$rc/$(val 1 rc)/$(val 2 rc)" 0/2/2 \
    "$2: the program runs, no allocation succeeds"
  is "$(count "group=$1: " "$tmp/err")/$(count "$3" "$tmp/err")" 1/1 \
    "$2: one line saying why"
}

# member GROUP: a member that stays, so that the segment exists.  Its
# start is waited for as long as it takes a loaded machine (up to a minute;
# under check-sanitize the launcher is an ASan build), and a member that
# never allocated is said, not silently poked around.
member() {
  # Emptied here, not by the background job's own redirection, which may
  # come after until_line has already seen the last member's rc=0.
  : >"$tmp/m.out"
  "$LAUNCHER" --group "$1" --group-limit 8M --report "$tmp/m.%p.json" -- \
    "$SIM/app_driver" alloc 1M sleep 30000 >"$tmp/m.out" 2>&1 &
  mpid=$!
  until_line "$tmp/m.out" 'rc=0' ||
    echo "# member of $1 did not allocate within a minute: $(cat "$tmp/m.out")"
}

# poke FILE OFFSET HEX: overwrites bytes of FILE in place.
poke() {
  "$PYTHON3" - "$@" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    f.write(bytes.fromhex(sys.argv[3]))
PY
}

# ---- corrupt and incompatible segments --------------------------------------

member "$G-magic"
poke "$SHM.$G-magic" 0 deadbeefdeadbeef
refused "$G-magic" "a segment with garbage in its magic" \
  "$SHM.$G-magic is not a cumemguard group segment (bad magic); remove it once no member of the group runs"
kill $mpid
wait

member "$G-version"
poke "$SHM.$G-version" 8 63000000
refused "$G-version" "a segment of another layout version" \
  "$SHM.$G-version was made by an incompatible cumemguard (layout 99,"
kill $mpid
wait

head -c 65536 /dev/urandom >"$SHM.$G-garbage"
chmod 600 "$SHM.$G-garbage"
refused "$G-garbage" "a file of random bytes" \
  "$SHM.$G-garbage is not a cumemguard group segment (65536 bytes, bad magic)"

# Overwritten while a member runs: its next allocation fails closed.
: >"$tmp/out"  # before the job starts, as in member()
"$LAUNCHER" --group "$G-live" --group-limit 8M --report "$tmp/l.%p.json" \
  -- "$SIM/app_driver" alloc 1M sleep 500 alloc 1M alloc 1M \
  >"$tmp/out" 2>"$tmp/err" &
lpid=$!
until_line "$tmp/out" 'rc=0'
poke "$SHM.$G-live" 0 0102030405060708
wait $lpid
rc=$?
is "$rc/$(val 1 rc)/$(val 3 rc)/$(val 4 rc)" 0/0/2/2 \
  "a segment overwritten under a running member: it fails closed"
is "$(count "was overwritten (bad magic); no device allocation will succeed" "$tmp/err")" 1 \
  "with one line"

"$LAUNCHER" status "$G-garbage" >"$tmp/out" 2>"$tmp/err"
is "$?/$(wc -l <"$tmp/err")" 2/1 "status of a corrupt group: exit 2, one line"
"$LAUNCHER" status >"$tmp/out" 2>"$tmp/err"
is "$?/$(grep -c "^group '$G-garbage': .* is not a cumemguard group segment" "$tmp/out")" \
  0/1 "the list of every group shows a corrupt one with its error"

# ---- a registry of another layout -------------------------------------------

# The registry caps nothing, so one of another layout (an older cumemguard's,
# left by a killed process) is replaced once none of its processes runs, and
# kept while one does.  In a /dev/shm of its own: the real one holds the
# registry of the tests running beside this one.
if [ "$UID_" -eq 0 ] && unshare -m true 2>/dev/null; then
  LAUNCHER=$LAUNCHER SIM=$SIM T=$tmp REG=$SHM.@solo unshare -m sh -c '
    mount -t tmpfs tmpfs /dev/shm || exit 1
    wait_rc0() {
      i=0
      until grep -q "rc=0" "$1" 2>/dev/null || [ $i -ge 600 ]; do
        sleep 0.1
        i=$((i + 1))
      done
    }
    layout() { od -An -tu4 -j8 -N4 "$REG" | tr -d " "; }
    "$LAUNCHER" --report "$T/r.%p.json" -- "$SIM/app_driver" alloc 1M \
      sleep 30000 >"$T/old.out" 2>&1 &
    old=$!
    wait_rc0 "$T/old.out"
    "$PYTHON3" -c "import sys; f = open(sys.argv[1], \"r+b\"); f.seek(8); f.write(bytes([99, 0, 0, 0]))" "$REG"
    "$LAUNCHER" --report "$T/r.%p.json" -- "$SIM/app_driver" alloc 1M \
      >"$T/live.out" 2>"$T/live.err"
    echo "$?/$(grep -c "rc=0" "$T/live.out")/$(grep -c "@solo\|layout" "$T/live.err")/$(layout)" >"$T/live.res"
    kill -9 $old
    wait $old
    "$LAUNCHER" --report "$T/r.%p.json" -- "$SIM/app_driver" alloc 2M \
      sleep 30000 >"$T/new.out" 2>&1 &
    new=$!
    wait_rc0 "$T/new.out"
    echo "$(layout) $new" >"$T/dead.res"
    "$LAUNCHER" status >"$T/status.out" 2>&1
    kill $new
    wait $new
  '
  is "$(cat "$tmp/live.res")" 0/1/0/99 \
    "a registry of another layout with a process running: kept, and a new process runs, silently"
  read -r layout new <"$tmp/dead.res"
  [ "$layout" != 99 ] &&
    awk '/^not in a group/ { on = 1; next } /^[^ ]/ { on = 0 } on' "$tmp/status.out" |
    grep -q "^ *$new  *app_driver  *0  *2.0 MiB  *2.0 MiB$"
  tap $? "once its processes are gone it is replaced, and status shows the new process"
else
  echo "ok $((tap_n += 1)) # SKIP a /dev/shm of its own needs root and unshare -m"
  echo "ok $((tap_n += 1)) # SKIP a /dev/shm of its own needs root and unshare -m"
fi

# ---- foreign segments --------------------------------------------------------

: >"$SHM.$G-mode"
chmod 644 "$SHM.$G-mode"
refused "$G-mode" "a segment other users can read" \
  "$SHM.$G-mode has mode 0644, which lets other users reach it; refusing it"

if [ "$UID_" -ne 0 ]; then
  echo "ok $((tap_n += 1)) # SKIP not root: cannot make a segment another user owns"
  echo "ok $((tap_n += 1)) # SKIP not root"
  echo "ok $((tap_n += 1)) # SKIP not root"
  echo "ok $((tap_n += 1)) # SKIP not root"
  echo "ok $((tap_n += 1)) # SKIP not root"
  done_testing
  exit
fi

: >"$SHM.$G-owner"
chmod 600 "$SHM.$G-owner"
chown 65534 "$SHM.$G-owner"
refused "$G-owner" "a segment another user made" \
  "$SHM.$G-owner belongs to uid 65534, not to this user (uid 0); refusing to share a cap through it"

# ---- another user ------------------------------------------------------------

if ! command -v setpriv >/dev/null 2>&1; then
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  done_testing
  exit
fi
mkdir -p "$tmp/pub" && chmod 1777 "$tmp/pub"
reach=yes
other_user "$SIM/app_driver" || reach=

member "$G-mine"
as_nobody cat "$SHM.$G-mine" >/dev/null 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && grep -q 'Permission denied' "$tmp/err"
tap $? "another user cannot read the segment"
if [ -z "$reach" ]; then
  kill $mpid
  wait
  echo "ok $((tap_n += 1)) # SKIP user nobody cannot reach copies in $tmp"
  echo "ok $((tap_n += 1)) # SKIP user nobody cannot reach copies in $tmp"
  done_testing
  exit
fi
as_nobody "$tmp/bin/cumemguard" status >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 0 ] && ! grep -q "$G-mine" "$tmp/out"
tap $? "nor does it see the group in its status"
kill $mpid
wait

# A segment squatted under another user's name is refused.
: >"/dev/shm/cumemguard.65534.$G-squat"
chmod 600 "/dev/shm/cumemguard.65534.$G-squat"
as_nobody "$tmp/bin/cumemguard" --group "$G-squat" --group-limit 8M \
  --report "$tmp/pub/r.%p.json" -- "$tmp/bin/app_driver" alloc 1M \
  >"$tmp/out" 2>"$tmp/err"
is "$(val 1 rc)/$(count "group=$G-squat: cannot open /dev/shm/cumemguard.65534.$G-squat: Permission denied" "$tmp/err")" \
  2/1 "a user cannot open a segment another user made in its name: it fails closed"

done_testing
