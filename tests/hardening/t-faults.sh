#!/bin/sh
# The simulated driver fails on purpose (tests/sim/README.md): after N
# granted allocations every allocation fails with a chosen code (out of
# memory 2, not initialized 3, deinitialized 4 as at process exit, and a
# code the driver does not have), frees fail likewise, the driver has no
# device at all or a broken configuration.  Through every path into the
# driver, the program must see exactly what it sees without the interposer
# (same lines, same codes, same exit status), the ledger must agree with the
# driver's own accounts, a driver's refusal is not a denial, and the report
# is valid.
. "$srcdir/tests/hardening/defs.sh"

APPS="app_driver app_dlsym app_getproc app_rt_shared app_rt_static"
CODES="2 3 4 999" FREE_CODES="4 1"
# Under valgrind: each path into the driver once, each code once.
[ -z "$SLOW" ] || APPS="app_driver app_getproc app_rt_shared" CODES=4 \
  FREE_CODES=4

# Two allocations succeed; then every family the driver counts fails.
S="alloc 1M alloc 2M pitch 1000 100 async 1M managed 1M pool_alloc default 1M
   vmm 2M array 64 64 alloc 4M free 0 cmg 0 stats 0 exit 7"

for code in $CODES; do
  for app in $APPS; do
    export CMG_SIM_FAIL_ALLOC_AFTER=2:$code
    # shellcheck disable=SC2086
    bare $app $S
    cp "$tmp/out" "$tmp/bare"
    bare_rc=$rc
    rm -f "$tmp"/report.*.json
    # shellcheck disable=SC2086
    guard "--limit 1GiB" $app $S
    unset CMG_SIM_FAIL_ALLOC_AFTER
    is "$rc" "$bare_rc" "$app, allocations fail with $code: exit status unchanged"
    same_output "$tmp/bare" "$tmp/out"
    tap $? "$app, allocations fail with $code: every call returns what it returns without the interposer"
    is "$(val 11 live)/$(val 11 allocs)/$(val 11 frees)/$(val 11 denials)" \
      "$((2 * M))/2/1/0" \
      "$app, fail $code: the ledger holds the one live allocation, no denial"
    is "$(val 11 live)" "$(val 12 used)" \
      "$app, fail $code: the ledger's live bytes are the driver's"
    is "$(noise)" 0 "$app, fail $code: nothing said but the report line"
    r=$(report)
    if [ -n "$r" ]; then
      validate "$r"
      is "$(q "$r" '(r["summary"]["live_bytes"], len(r["denials"]), r["devices"][0]["allocations"])')" \
        "($((2 * M)), 0, 2)" "$app, fail $code: the report's totals"
    else
      tap 1 "$app, fail $code: a report is written"
    fi
  done
done

# The first allocation of the process fails (N=0): the device is set up by
# a call that never succeeds; the report says nothing is live.
for app in app_driver app_rt_static; do
  export CMG_SIM_FAIL_ALLOC_AFTER=0:3
  rm -f "$tmp"/report.*.json
  guard "--limit 1GiB" $app alloc 1M cmg 0
  unset CMG_SIM_FAIL_ALLOC_AFTER
  is "$rc/$(val 1 rc)" 0/3 "$app: the very first allocation fails with 3, unchanged"
  is "$(val 2 live)/$(val 2 allocs)/$(val 2 denials)" 0/0/0 "$app: nothing recorded"
  r=$(report)
  if [ -n "$r" ]; then validate "$r"; else tap 1 "$app: a report is written"; fi
done

# Frees fail after the first one: as at exit, when the driver is already
# deinitialized (4), or with an error (1).  The failed frees' memory stays
# recorded (the driver still holds it), and the report lists it.
F="alloc 1M alloc 2M async 4M free 0 free 1 free_async 2 cmg 0 stats 0 exit 5"
for code in $FREE_CODES; do
  for app in $APPS; do
    export CMG_SIM_FAIL_FREE_AFTER=1:$code
    # shellcheck disable=SC2086
    bare $app $F
    cp "$tmp/out" "$tmp/bare"
    bare_rc=$rc
    rm -f "$tmp"/report.*.json
    # shellcheck disable=SC2086
    guard "--limit 1GiB" $app $F
    unset CMG_SIM_FAIL_FREE_AFTER
    is "$rc" "$bare_rc" "$app, frees fail with $code: exit status unchanged"
    same_output "$tmp/bare" "$tmp/out"
    tap $? "$app, frees fail with $code: every call returns what it returns without the interposer"
    is "$(val 7 live)/$(val 7 live_allocs)/$(val 7 frees)" "$((6 * M))/2/1" \
      "$app, frees fail with $code: the memory of the failed frees stays recorded"
    is "$(val 7 live)" "$(val 8 used)" "$app, frees fail with $code: the ledger's live bytes are the driver's"
    r=$(report)
    if [ -n "$r" ]; then
      validate "$r"
      is "$(q "$r" '(r["summary"]["live_bytes"], r["summary"]["live_allocations"])')" \
        "($((6 * M)), 2)" "$app, frees fail with $code: the report lists them as live"
    else
      tap 1 "$app, frees fail with $code: a report is written"
    fi
  done
done

# Memory whose free failed still counts against the limit.
export CMG_SIM_FAIL_FREE_AFTER=0:4
guard "--limit 8M" app_rt_static alloc 6M free 0 alloc 4M cmg 0
unset CMG_SIM_FAIL_FREE_AFTER
is "$(val 2 rc)/$(val 3 rc)/$(val 4 denials)" 4/2/1 \
  "a free refused as deinitialized leaves the memory under the cap"

# The driver refuses an allocation the limit allows (the device is full):
# its reservation is given back, so the same bytes fit later.
for app in $APPS; do
  CMG_SIM_DEVICES=64M
  export CMG_SIM_DEVICES
  guard "--limit 100M" $app alloc 40M alloc 40M pitch 40000 1024 free 0 \
    alloc 64M cmg 0 stats 0
  unset CMG_SIM_DEVICES
  is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)/$(val 5 rc)" 0/2/2/0 \
    "$app: the driver's out-of-memory passes through; 64M fits after the free"
  is "$(val 6 live)/$(val 6 allocs)/$(val 6 denials)" "$((64 * M))/2/0" \
    "$app: the failed reservations were given back"
  is "$(val 6 live)" "$(val 7 used)" "$app: the ledger's live bytes are the driver's"
done

# No device (cuInit 100), and a configuration the driver cannot read
# (cuInit 1): the program sees the driver's answer, nothing is recorded, and
# no report is due.
for devs in "" "bogus"; do
  for app in app_driver app_rt_shared; do
    CMG_SIM_DEVICES=$devs
    export CMG_SIM_DEVICES
    bare $app alloc 1M info exit 3
    cp "$tmp/out" "$tmp/bare"
    cp "$tmp/err" "$tmp/bare.err"
    rm -f "$tmp"/report.*.json
    guard "--limit 1GiB" $app alloc 1M info exit 3
    unset CMG_SIM_DEVICES
    is "$rc" 3 "$app, CMG_SIM_DEVICES='$devs': exit status unchanged"
    same_output "$tmp/bare" "$tmp/out"
    tap $? "$app, CMG_SIM_DEVICES='$devs': the driver's own answers ($(val 1 rc))"
    cmp -s "$tmp/bare.err" "$tmp/err"
    tap $? "$app, CMG_SIM_DEVICES='$devs': nothing added on stderr"
    is "$(report)" "" "$app, CMG_SIM_DEVICES='$devs': no report"
  done
done

done_testing
