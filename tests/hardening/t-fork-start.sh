#!/bin/sh
# fork() at once after the first allocation, while the dump thread (started
# by that allocation) may still be starting: the thread's start-up allocates
# before it runs any of our code, and an allocator without fork handlers
# (ASan's, so this test matters most under check-sanitize's library build)
# would be inherited locked by the child, which would then wait forever.
# Pairs of processes at once, to vary the timing; each must end, parent and
# child, with status 0 and two reports (the child's of its own allocation).
. "$srcdir/tests/hardening/defs.sh"

N=${CMG_HARD_FORKS:-60}
[ -z "$SLOW" ] || N=3

# one I: a process forking right after its first allocation; its status in
# $tmp/st.I (124 when it had to be stopped).
one() {
  # shellcheck disable=SC2086
  timeout 60 ${CMG_TEST_PREFIX:-} "$LAUNCHER" --report "$tmp/r.$1.%p.json" \
    -- "$SIM/app_rt_static" site 1 1M fork site 2 1M endfork \
    >"$tmp/out.$1" 2>"$tmp/err.$1"
  echo $? >"$tmp/st.$1"
}

i=0
while [ "$i" -lt "$N" ]; do
  one "a$i" &
  one "b$i"
  wait
  i=$((i + 1))
done
ended=$(cat "$tmp"/st.* | grep -c '^0$')
is "$ended" $((2 * N)) "every process forking as the dump thread starts ends"
is "$(cat "$tmp"/st.* | grep -c '^124$')" 0 "none had to be stopped"
children=$(grep -l '^fork status=0$' "$tmp"/out.* | wc -l)
is "$children" $((2 * N)) "every child ended with status 0"
is "$(ls "$tmp"/r.*.json | wc -l)" $((4 * N)) "parent and child write a report each"

done_testing
