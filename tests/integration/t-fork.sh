#!/bin/sh
# A forked child starts with an empty ledger (CUDA state does not survive
# fork) and the parent's accounts are untouched by what the child does.
. "$srcdir/tests/lib/defs.sh"
M=1048576

guard "--limit 1GiB" app_rt_static alloc 700M fork cmg 0 alloc 700M cmg 0 \
  endfork cmg 0 alloc 700M
is "$(val 1 rc)" 0 "parent allocates 700 MiB"
is "$(val 2 live)/$(val 2 allocs)" 0/0 "child starts with an empty ledger"
is "$(val 3 rc)" 0 "child has its own 1 GiB"
is "$(val 4 live)/$(val 4 allocs)" $((700 * M))/1 "child counts its own"
is "$(val 5 status)" 0 "child exits"
is "$(val 6 live)/$(val 6 allocs)" $((700 * M))/1 "parent's ledger untouched"
is "$(val 7 rc)" 2 "parent still capped"

done_testing
