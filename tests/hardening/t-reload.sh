#!/bin/sh
# The driver loaded late with dlopen(), unloaded with dlclose() and loaded
# again, several times, by name, by path, and through cuGetProcAddress.
# The interposer keeps pointers into the driver, so it keeps it loaded
# (without it, dlclose() really unloads it, and the next round starts from
# an empty driver); every round's allocations must work, and the ledger
# must agree with the driver's own count after every reload.
. "$srcdir/tests/hardening/defs.sh"

"$HARD/app_reload" 3 >"$tmp/out" 2>"$tmp/err"
is "$(cut -d' ' -f4,6 "$tmp/out" | tr '\n' ' ')" \
  "used=1048576 loaded=0 used=2097152 loaded=0 used=3145728 loaded=0 " \
  "without the interposer each round starts from a fresh driver"

for how in "libcuda.so.1" "$SIM/.libs/libcuda.so.1" "libcuda.so.1 getproc"; do
  rm -f "$tmp"/report.*.json
  # shellcheck disable=SC2086
  hguard "--limit 1GiB" "$HARD/app_reload" 4 $how
  is "$rc" 0 "dlopen $how: the program ends normally"
  is "$(grep -c 'alloc=0 free=0' "$tmp/out")" 4 "dlopen $how: every round allocates and frees"
  agree=$(awk '{ split($4, u, "="); split($5, l, "=");
                 if (u[2] != l[2]) bad++ } END { print bad + 0 }' "$tmp/out")
  is "$agree" 0 "dlopen $how: after each reload the ledger agrees with the driver"
  is "$(sed -n 4p "$tmp/out" | cut -d' ' -f5,6)" "live=$((10 * M)) loaded=1" \
    "dlopen $how: the kept blocks of all rounds are live; the driver stays loaded"
  r=$(report)
  validate "$r"
  is "$(q "$r" '(r["summary"]["live_allocations"], r["devices"][0]["allocations"], r["devices"][0]["frees"])')" \
    "(4, 8, 4)" "dlopen $how: the report counts every round"
done

done_testing
