#!/bin/sh
# CUDA graphs under the cap.  A graph's memory nodes, built explicitly or
# by stream capture, take memory when the graph is uploaded or launched:
# that is where the limit applies, the growth of the device's graph memory
# pool counted at the driver's own figure.  Capture allocates nothing and
# is never refused or reported as a leak; launches reuse the pool; a trim
# gives it back; a destroyed graph's live allocations keep their part; an
# invalidated capture leaves nothing; groups, teardown, on_exceed=warn, the
# runtime's labels, and a driver that cannot report its pool.
. "$srcdir/tests/lib/defs.sh"
M=1048576
R=$tmp/r.json
export CMG_SIM_DEVICES=4G,4G

# graph_mem FIELD: FIELD of the last graph_mem line.
graph_mem() {
  grep '^graph_mem ' "$tmp/out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# live_of N: the live bytes the cmg line N reports.
live_of() {
  val "$1" live
}

# ---- a graph built with memory nodes ----------------------------------------

EXPLICIT="graph graph_alloc 0 0 768M graph_alloc 0 0 768M instantiate 0 0 \
  stream launch 0 1 cmg 0 info stats 0"
# shellcheck disable=SC2086
bare app_driver $EXPLICIT
is "$(val 6 rc)/$(val 9 used)" 0/$((1536 * M)) \
  "without the library, the launch takes 1.5 GiB"
# shellcheck disable=SC2086
guard "--limit 1G --report $R" app_driver $EXPLICIT
is "$(val 4 rc)" 0 "instantiation takes nothing, and is not refused"
is "$(val 6 rc)" 2 "a launch that would pass the limit fails as out of memory"
is "$(count 'denied cuGraphLaunch of 1.5 GiB (1610612736 bytes) on device 0: 0 B in use, limit 1.0 GiB' "$tmp/err")" 1 \
  "with one denial line"
is "$(live_of 7)/$(val 7 denials)/$(val 9 used)" 0/1/0 \
  "nothing was taken, on either side"
is "$(val 8 free)" $((1024 * M)) "cuMemGetInfo still shows the whole limit free"
validate "$R"
is "$(q $R '[(d["api"], d["requested_bytes"]) for d in r["denials"]]')" \
  "[('cuGraphLaunch', 1610612736)]" "the report has the denial"
is "$(q $R 'r["devices"][0]["graph_memory"]["denied"]')" 1 \
  "and the device's graph memory counts it"

# The pool is what the driver reserved: after a launch, cuMemGetInfo, the
# ledger and the report agree with the driver's graph memory attributes.
guard "--limit 2G --report $R" app_driver graph graph_alloc 0 0 768M \
  graph_alloc 0 0 768M instantiate 0 0 stream launch 0 1 cmg 0 info graph_mem 0 \
  launch 0 1 cmg 0
is "$(val 6 rc)/$(live_of 7)" 0/$((1536 * M)) "under a limit it fits, it is counted"
is "$(val 8 free)" $((512 * M)) "cuMemGetInfo says what is left"
is "$(graph_mem reserved)" $((1536 * M)) "the driver's pool holds the same"
is "$(val 10 rc)/$(count denied "$tmp/err")/$(live_of 11)" 1/0/$((1536 * M)) \
  "a relaunch before its allocations are freed fails in the driver, not as a denial"
validate "$R"
is "$(q $R '[(l["kind"], l["api"], l["bytes"], l["device"]) for l in r["leaks"]]')" \
  "[('graph', 'cuGraphLaunch', 1610612736, 0)]" \
  "the report lists the pool's memory as kind graph, with the launch's api"
is "$(q $R '[r["devices"][0]["graph_memory"][k] for k in ("reserved_bytes", "used_bytes", "source", "launches")]')" \
  "[1610612736, 1610612736, 'driver', 1]" "and the driver's figures"
is "$(q $R 'r["summary"]["live_bytes"]')" $((1536 * M)) \
  "summary.live_bytes counts it as device memory"
"$top_builddir/cumemguard-report" "$R" >"$tmp/summary" 2>&1
is "$(grep -c '^Held by the CUDA graph memory pool of device 0 at exit: 1.5 GiB' "$tmp/summary")/$(grep -c '^Leaked' "$tmp/summary")" \
  1/0 "cumemguard-report shows it as held by the pool, not as a leak"

# ---- stream capture ---------------------------------------------------------

CAPTURE="stream capture 1 global async_on 1 768M async_on 1 768M cmg 0 \
  capture_end 1 instantiate 0 0 launch 0 1 cmg 0"
# shellcheck disable=SC2086
guard "--limit 1G --report $R" app_driver $CAPTURE
is "$(val 3 rc)/$(val 4 rc)" 0/0 "allocations on a capturing stream are not refused"
is "$(live_of 5)" 0 "nor counted: capture allocates nothing"
is "$(val 8 rc)/$(live_of 9)" 2/0 "the captured graph's launch is capped"
is "$(count 'denied cuGraphLaunch of 1.5 GiB' "$tmp/err")" 1 "and says so once"
is "$(q $R 'len(r["leaks"])')" 0 "nothing captured is reported as a leak"
# shellcheck disable=SC2086
guard "--limit 2G --report $R" app_rt_shared $CAPTURE free_async 0 \
  free_async_on 1 1 cmg 0
is "$(val 8 rc)/$(live_of 9)" 0/$((1536 * M)) \
  "under a limit it fits, the launch takes the pool's growth"
is "$(val 10 rc)/$(val 11 rc)/$(live_of 12)" 0/0/$((1536 * M)) \
  "freeing the graph's allocations leaves their memory in the pool"
is "$(q $R '[(l["kind"], l["api"]) for l in r["leaks"]]')" \
  "[('graph', 'cudaGraphLaunch')]" \
  "the runtime's launch labels the growth; no captured allocation is a leak"
is "$(q $R 'r["summary"]["untracked_frees"]')" 0 \
  "frees of graph allocations are known, not untracked"
guard "--limit 2G" app_rt_static $CAPTURE
is "$(val 8 rc)/$(live_of 9)" 0/$((1536 * M)) \
  "the static runtime's launch is counted at the driver"

# An invalidated capture leaves nothing behind.
guard "--limit 1G --report $R" app_driver stream capture 1 global \
  async_on 1 2G sync 1 capture_end 1 cmg 0 stats 0 alloc 1M cmg 0
is "$(val 3 rc)/$(val 4 rc)/$(val 5 rc)" 0/900/901 \
  "a capture invalidated by a synchronize ends without a graph"
is "$(live_of 6)/$(val 7 used)" 0/0 "and leaves nothing counted"
is "$(val 8 rc)/$(live_of 9)" 0/$M "later allocations count as usual"
is "$(q $R '[l["bytes"] for l in r["leaks"]]')" "[$M]" "the report has only those"

# cuMemAlloc during a global capture is the driver's refusal, not ours.
guard "--limit 1G" app_driver stream capture 1 global alloc 1M cmg 0
is "$(val 3 rc)/$(live_of 4)/$(count denied "$tmp/err")" 900/0/0 \
  "a synchronous allocation during a global capture fails in the driver"

# Several streams capture at once, one of them fed from another thread.
guard "--limit 1G" app_driver stream stream capture 1 relaxed capture 2 relaxed \
  async_on 1 256M async_thread 2 256M capture_end 1 capture_end 2 cmg 0 \
  instantiate 0 0 instantiate 1 0 launch 0 1 launch 1 2 cmg 0 \
  async 600M cmg 0
is "$(val 5 rc)/$(val 6 rc)/$(live_of 9)" 0/0/0 \
  "captures on two streams, one fed by another thread, take nothing"
is "$(val 12 rc)/$(val 13 rc)/$(live_of 14)" 0/0/$((512 * M)) \
  "their launches take what both graphs left allocated"
is "$(val 15 rc)/$(live_of 16)" 2/$((512 * M)) \
  "and the limit counts it against later allocations"

# ---- the pool over time -----------------------------------------------------

# A graph that allocates and frees inside itself, uploaded then launched
# many times, then a second graph that reuses its memory.
guard "--limit 2G --report $R" app_driver graph graph_alloc 0 0 512M \
  graph_free 0 0 instantiate 0 0 stream upload 0 1 cmg 0 \
  launch 0 1 launch 0 1 launch 0 1 launch 0 1 cmg 0 \
  graph graph_alloc 1 0 768M instantiate 1 auto launch 1 1 launch 1 1 cmg 0 \
  graph_mem 0
is "$(val 6 rc)/$(live_of 7)" 0/$((512 * M)) "an upload takes the graph's memory"
is "$(live_of 12)/$(val 12 allocs)" $((512 * M))/1 \
  "four launches take nothing more"
is "$(val 16 rc)/$(val 17 rc)/$(live_of 18)" 0/0/$((768 * M)) \
  "a second graph reuses the pool and takes only the difference"
is "$(graph_mem reserved)/$(graph_mem used)" $((768 * M))/$((768 * M)) \
  "as the driver counts it"
is "$(q $R 'sorted((l["api"], l["bytes"]) for l in r["leaks"])')" \
  "[('cuGraphLaunch', 268435456), ('cuGraphUpload', 536870912)]" \
  "each growth is an entry with the call that made it"

# Trim, and a graph destroyed while its memory is still in use.
guard "--limit 2G --report $R" app_driver graph graph_alloc 0 0 768M \
  instantiate 0 0 stream launch 0 1 exec_destroy 0 graph_trim 0 cmg 0 \
  free 0 cmg 0 graph_trim 0 cmg 0 graph_mem 0
is "$(val 6 rc)/$(val 7 rc)/$(live_of 8)" 0/0/$((768 * M)) \
  "a destroyed graph's live allocation keeps its memory through a trim"
is "$(val 9 rc)/$(live_of 10)" 0/$((768 * M)) \
  "freed, it stays in the pool"
is "$(val 11 rc)/$(live_of 12)/$(val 12 frees)" 0/0/1 "a trim gives it back"
is "$(graph_mem reserved)" 0 "as the driver says"
is "$(q $R '(r["devices"][0]["graph_memory"]["trims"], len(r["leaks"]))')" \
  "(2, 0)" "the report counts the trims and holds nothing"

# A trim gives back part of a growth, newest first.
guard "--limit 2G" app_driver graph graph_alloc 0 0 256M instantiate 0 0 \
  graph graph_alloc 1 0 512M graph_free 1 1 instantiate 1 0 stream \
  launch 0 1 launch 1 1 cmg 0 graph_trim 0 cmg 0
is "$(live_of 11)/$(val 11 allocs)" $((768 * M))/2 \
  "a second graph grows the pool past what the first left allocated"
is "$(live_of 13)/$(val 13 allocs)/$(val 13 frees)" $((256 * M))/2/1 \
  "a trim takes back the newest growth, down to what is still allocated"

# Teardown: the pool dies with the context that grew it.
guard "--limit 2G --report $R" app_driver graph graph_alloc 0 0 768M \
  instantiate 0 0 stream launch 0 1 cmg 0 reset cmg 0 stats 0
is "$(live_of 6)/$(live_of 8)/$(val 9 used)" $((768 * M))/0/0 \
  "a primary context reset releases the graph memory pool"
is "$(q $R '[(l["kind"], l["bytes"]) for l in r["released"]]')" \
  "[('graph', 805306368)]" "and the report lists it as released by teardown"

# ---- policies ---------------------------------------------------------------

guard "--limit 1G --on-exceed warn --report $R" app_driver graph \
  graph_alloc 0 0 768M graph_alloc 0 0 768M instantiate 0 0 stream launch 0 1 cmg 0
is "$(val 6 rc)/$(live_of 7)" 0/$((1536 * M)) "on_exceed=warn lets the launch through"
is "$(q $R '[(e["kind"], e["api"]) for e in r["events"]]')" \
  "[('warn', 'cuGraphLaunch')]" "and records it"

G=grp$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
guard "--group $G --group-limit 1G" app_driver graph graph_alloc 0 0 768M \
  graph_alloc 0 0 768M instantiate 0 0 stream launch 0 1 cmg 0
is "$(val 6 rc)/$(live_of 7)" 2/0 "a group's cap refuses a graph's launch"
is "$(count "denied cuGraphLaunch of 1.5 GiB (1610612736 bytes) on device 0: group '$G' has 0 B in use, group limit 1.0 GiB" "$tmp/err")" 1 \
  "naming the group"

# ---- a driver that cannot report its pool ----------------------------------

CMG_SIM_NO_GRAPH_MEM_ATTR=1 guard "--limit 2G --report $R" app_driver graph \
  graph_alloc 0 0 512M graph_free 0 0 instantiate 0 0 stream upload 0 1 cmg 0 \
  graph graph_alloc 1 0 768M instantiate 1 0 launch 1 1 cmg 0 free 1 \
  graph_trim 0 cmg 0
is "$(live_of 7)/$(live_of 12)/$(live_of 15)" \
  $((512 * M))/$((768 * M))/0 "without the driver's figures, the estimate counts the pool"
is "$(q $R '(r["devices"][0]["graph_memory"]["source"], r["devices"][0]["graph_memory"]["reserved_high_bytes"])')" \
  "('estimate', 805306368)" "and the report says it is an estimate"

done_testing
