#!/bin/sh
# Where the report cannot go: a missing directory, a read-only one (a
# read-only file system; and permissions, as user nobody when root), a path
# that is a directory, a full disk (a 64 KiB tmpfs; one with no inode
# left), a file size limit.  Each time the program's exit status is its
# own, stderr has one line saying which report could not be written and
# why, and the final path holds no partial report (nor does a temporary
# file stay beside it).
. "$srcdir/tests/hardening/defs.sh"

# one_line WHAT PATH REASON: stderr is exactly the line about PATH.
one_line() {
  is "$(cat "$tmp/err")" "cumemguard: cannot write report $2: $3" \
    "$1: one line naming the report and the reason"
}

# in_fs "MOUNT OPTIONS" DIR LAUNCHER-OPTIONS PROG ARGS...: runs the program
# under the launcher in a private mount namespace where DIR is a fresh
# tmpfs mounted with the options, and lists DIR in $tmp/ls before the
# namespace (and the mount) goes away.  rc is the program's status; 99
# when the mount failed.
in_fs() {
  mopts=$1 dir=$2 lopts=$3 prog=$4
  shift 4
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  $NS sh -c '
    mopts=$1 dir=$2 ls=$3
    shift 3
    mount -t tmpfs -o "$mopts" tmpfs "$dir" || exit 99
    "$@"
    rc=$?
    ls -A "$dir" >"$ls"
    exit $rc' sh "$mopts" "$dir" "$tmp/ls" \
    ${CMG_TEST_PREFIX:-} "$LAUNCHER" $lopts -- "$prog" "$@" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ -n "${VERBOSE:-}" ]; then cat "$tmp/out" "$tmp/err" >&2; fi
}

# A directory that does not exist.
guard "--report $tmp/nodir/r.json" app_rt_static alloc 1M exit 3
is "$rc" 3 "missing directory: exit status unchanged"
one_line "missing directory" "$tmp/nodir/r.json" "No such file or directory"

# The same with leak_exitcode: memory is live at exit, so by
# docs/report-format.md the status is N even though the report failed.
guard "--report $tmp/nodir/r.json --leak-exitcode 42" app_rt_static \
  alloc 1M exit 3
tap "$([ "$rc" = 42 ]; echo $?)" \
  "missing directory, leak_exitcode=42 with memory live: status 42 (got $rc)"

# cmg_dump() to a missing directory: the call says why, the program goes on.
guard "--report $tmp/r.json" app_rt_static alloc 1M dump "$tmp/nodir/d.json" \
  alloc 1M exit 0
is "$(val 2 rc)/$(val 3 rc)/$rc" "-2/0/0" \
  "cmg_dump to a missing directory returns -ENOENT and the program goes on"
is "$(lines "cannot write report $tmp/nodir/d.json: No such file or directory")/$(noise)" \
  1/1 "cmg_dump to a missing directory: one line"
validate "$tmp/r.json"

# A report path that is a directory: the rename fails, the temporary file
# goes.
mkdir "$tmp/adir"
guard "--report $tmp/adir" app_rt_static alloc 1M exit 5
is "$rc" 5 "path is a directory: exit status unchanged"
one_line "path is a directory" "$tmp/adir" "Is a directory"
is "$(ls -A "$tmp" | grep -c '^adir\.tmp\.')" 0 \
  "path is a directory: no temporary file left"

# A working directory so deep that the report's path passes 1 KiB, and
# exactly as long as a temporary name cut to fit a 1 KiB buffer: the
# temporary file must still be the path plus its suffix, not a name that
# collides with the directory itself.
d=$tmp/deep
while [ ${#d} -lt 900 ]; do
  d=$d/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
done
d=$d/$(printf '%*s' $((1087 - ${#d} - 1)) '' | tr ' ' e)
mkdir -p "$d"
(
  cd "$d" || exit 1
  guard "--report r.json" app_rt_static alloc 1M exit 4
  echo "$rc" >"$tmp/deep.rc"
)
is "$(cat "$tmp/deep.rc")/$(lines 'cumemguard: report ')/$(noise)" 4/1/0 \
  "a ${#d}-byte working directory: exit status unchanged, the report line"
is "$(ls -A "$d")" "r.json" "a ${#d}-byte working directory: the report is there"
validate "$d/r.json"

# Permissions only stop a process that is not root: as root, the program
# runs as user nobody (copies of what it runs, which that user can reach).
mkdir "$tmp/ro"
chmod 555 "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
  guard "--report $tmp/ro/r.json" app_rt_static alloc 1M exit 6
elif other_user "$SIM/app_rt_static"; then
  as_nobody "$tmp/bin/cumemguard" --report "$tmp/ro/r.json" -- \
    "$tmp/bin/app_rt_static" alloc 1M exit 6 >"$tmp/out" 2>"$tmp/err"
  rc=$?
else
  rc=skip
fi
chmod 755 "$tmp/ro"
if [ "$rc" != skip ]; then
  is "$rc" 6 "read-only directory: exit status unchanged"
  one_line "read-only directory" "$tmp/ro/r.json" "Permission denied"
  is "$(ls -A "$tmp/ro")" "" "read-only directory: nothing written"
else
  skip_n 3 "running as root, and user nobody cannot run copies in $tmp"
fi

# A file size limit (as a quota would): writes fail with EFBIG once the
# report passes 8 KiB; SIGXFSZ is ignored so the write fails instead of
# killing the program.
mkdir "$tmp/fsize"
(
  trap '' XFSZ
  ulimit -f 16
  guard "--report $tmp/fsize/r.json" app_rt_static many 3000 512 exit 7
  echo "$rc" >"$tmp/fsize.rc"
)
is "$(cat "$tmp/fsize.rc")" 7 "file size limit: exit status unchanged"
one_line "file size limit" "$tmp/fsize/r.json" "File too large"
is "$(ls -A "$tmp/fsize")" "" "file size limit: no partial report, no temporary file"

# File systems of our own: read-only, full, out of inodes.
if [ -n "$NS" ]; then
  d=$tmp/mnt
  in_fs ro "$d" "--report $d/r.json" "$SIM/app_rt_static" alloc 1M exit 8
  is "$rc" 8 "read-only file system: exit status unchanged"
  one_line "read-only file system" "$d/r.json" "Read-only file system"

  in_fs size=64k "$d" "--report $d/r.json" "$SIM/app_rt_static" \
    many 3000 512 exit 9
  is "$rc" 9 "full disk: exit status unchanged"
  one_line "full disk" "$d/r.json" "No space left on device"
  is "$(cat "$tmp/ls")" "" "full disk: no partial report, no temporary file"

  # The same report fits in a larger one: the failure above was the disk.
  in_fs size=4m "$d" "--report $d/r.json" "$SIM/app_rt_static" \
    many 3000 512 exit 9
  is "$rc/$(cat "$tmp/ls")" "9/r.json" "the same report fits on a larger disk"

  in_fs size=64k,nr_inodes=1 "$d" "--report $d/r.json" "$SIM/app_rt_static" \
    alloc 1M exit 10
  is "$rc" 10 "no inode left: exit status unchanged"
  one_line "no inode left" "$d/r.json" "No space left on device"
else
  skip_n 9 "$NS_WHY"
fi

done_testing
