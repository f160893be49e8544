#!/bin/sh
# scripts/install-deps.sh, as the README's try-it command runs it: as root
# with no sudo (containers, CI), as a user with sudo, and as a user without
# it.  A stand-in package tool (CMG_APT) records who ran it, so nothing is
# installed; sudo, where present, is a stand-in too.
. "$srcdir/tests/lib/defs.sh"
# A copy in the temporary directory, which the other user can reach even
# when the source tree is in a private directory.
# It finds the browser tests' npm lock file beside it, as in the tree.
script=$tmp/scripts/install-deps.sh
mkdir -p "$tmp/scripts" "$tmp/tests/html"
cp "$srcdir/scripts/install-deps.sh" "$script"
cp "$srcdir/tests/html/package.json" "$srcdir/tests/html/package-lock.json" \
  "$tmp/tests/html/"
chmod 755 "$tmp/scripts" "$tmp/tests" "$tmp/tests/html"

# A PATH of just what the script uses, so that a machine's own sudo cannot
# leak into the cases that must not have one.
mkdir "$tmp/bin" "$tmp/sudo-bin"
for t in sh id env echo cmp dirname; do
  ln -s "$(command -v $t)" "$tmp/bin/$t"
done
cat >"$tmp/apt" <<EOF
#!/bin/sh
echo "uid=\$(id -u) sudo=\${CMG_SUDO:-no} \$1" >>"$tmp/apt.log"
EOF
cat >"$tmp/sudo-bin/sudo" <<EOF
#!/bin/sh
echo "sudo \$*" >>"$tmp/sudo.log"
CMG_SUDO=yes exec "\$@"
EOF
chmod 755 "$tmp/apt" "$tmp/sudo-bin/sudo"
chmod 711 "$tmp"
: >"$tmp/apt.log"
: >"$tmp/sudo.log"
chmod 666 "$tmp/apt.log" "$tmp/sudo.log"

# deps [as-user] PATH: runs the script; status in $rc.
deps() {
  if [ "$1" = as-user ]; then
    shift
    set -- setpriv --reuid=nobody --regid=nogroup --clear-groups \
      env PATH="$1" CMG_APT="$tmp/apt" sh "$script"
  else
    set -- env PATH="$1" CMG_APT="$tmp/apt" sh "$script"
  fi
  : >"$tmp/apt.log"
  : >"$tmp/sudo.log"
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

if [ "$(id -u)" -ne 0 ]; then
  echo "1..0 # SKIP not root: the cases need root and another user"
  exit 0
fi

deps "$tmp/bin"
is "$rc/$(cat "$tmp/apt.log" | tr '\n' ' ')" \
  "0/uid=0 sudo=no update uid=0 sudo=no install " \
  "root without sudo: installs directly"
is "$(tail -n 1 "$tmp/out")" "install-deps: done" "root: says it is done"

deps "$tmp/sudo-bin:$tmp/bin"
is "$rc/$(wc -l <"$tmp/sudo.log")" "0/0" "root with sudo: sudo is not used"

if ! command -v setpriv >/dev/null 2>&1; then
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  echo "ok $((tap_n += 1)) # SKIP setpriv (util-linux) is missing"
  done_testing
  exit
fi

deps as-user "$tmp/sudo-bin:$tmp/bin"
is "$rc/$(cat "$tmp/apt.log" | tr '\n' ' ')" \
  "0/uid=65534 sudo=yes update uid=65534 sudo=yes install " \
  "a user with sudo: the package tool runs through sudo"

deps as-user "$tmp/bin"
is "$rc/$(wc -l <"$tmp/apt.log")/$(wc -l <"$tmp/err")" "1/0/1" \
  "a user without sudo: exit 1, nothing run, one line"
grep -q 'needs root.*sudo is not installed.*run this script as root' "$tmp/err"
tap $? "that line says what to do"

done_testing
