#!/bin/sh
# cumemguard status, read while it changes and for a group not there.
# Four members of one group race through random allocations and frees
# under its cap while `status --json` samples the group: in every sample
# the processes' bytes on a device add up to no more than the cap, as at
# any one moment (a member counts the group's bytes before its own, and
# gives back its own first).  A copy of the segment whose members hold
# more than the group is made again, and past a few tries their bytes are
# scaled to the group's, the group marked "scaled" (test_seg_find checks
# the copies at a far higher rate).  Asked for a group not made yet,
# --json still prints one JSON document, of no group, with the text view's
# line and status 2; for a group that cannot be read, the group with its
# error.
. "$srcdir/tests/lib/defs.sh"
M=1048576
G=st$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT

# ---- a group not made yet, and one that cannot be read ----------------------

"$LAUNCHER" status "$G-none" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
is "$rc/$(cat "$tmp/err")" \
  "2/cumemguard: group '$G-none': no such group for uid $(id -u) (no $SHM.$G-none)" \
  "--json for a group not made yet: status 2 and one line, as the text view"
is "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1])))' \
  "$tmp/out" 2>&1)" "{'uid': $(id -u), 'groups': []}" \
  "and one JSON document, of no group"
"$LAUNCHER" status "$G-none" >"$tmp/out" 2>"$tmp/err"
is "$?/$(wc -c <"$tmp/out" | tr -d ' ')/$(wc -l <"$tmp/err" | tr -d ' ')" 2/0/1 \
  "the text view: the line alone"
(umask 077 && printf 'not a segment' >"$SHM.$G-bad")
"$LAUNCHER" status "$G-bad" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
is "$rc/$(wc -l <"$tmp/err" | tr -d ' ')/$("$PYTHON3" -c '
import json, sys
g, = json.load(open(sys.argv[1]))["groups"]
print(sorted(g), g["error"] == open(sys.argv[2]).read().strip()[len("cumemguard: "):])
' "$tmp/out" "$tmp/err" 2>&1)" "2/1/['error', 'name', 'uid'] True" \
  "--json for a group that cannot be read: the group with the line's error"

# ---- sampled while its members change it -------------------------------------

# script SEED: 20000 random allocations of mixed sizes with frees of random
# live ones between them, with no pause.
script() {
  "$PYTHON3" - "$1" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]))
ops, live, n = [], [], 0
while n < 20000:
    if live and (len(live) > 40 or rnd.random() < 0.45):
        ops += ["free", str(live.pop(rnd.randrange(len(live))))]
    else:
        ops += ["alloc", rnd.choice(["4K", "64K", "1M", "3M", "7M"])]
        live.append(n)
        n += 1
print(" ".join(ops))
PY
}
for i in 1 2 3 4; do script $i >"$tmp/s$i"; done
rm -f "$tmp/samples"
(
  until [ -e "$tmp/stop" ]; do
    "$LAUNCHER" status "$G" --json >>"$tmp/samples" 2>/dev/null
  done
) &
sampler=$!
for i in 1 2 3 4; do
  # shellcheck disable=SC2046
  "$LAUNCHER" --group "$G" --group-limit 16M --report "$tmp/r$i.%p.json" -- \
    "$SIM/app_driver" $(cat "$tmp/s$i") >"$tmp/r$i.out" 2>"$tmp/r$i.err" &
  echo $! >"$tmp/r$i.pid"
done
for i in 1 2 3 4; do wait "$(cat "$tmp/r$i.pid")"; done
touch "$tmp/stop"
wait $sampler
"$PYTHON3" - "$tmp/samples" $((16 * M)) >"$tmp/check" <<'PY'
import json, sys
cap = int(sys.argv[2])
n = busy = over = scaled = 0
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    for g in json.loads(line)["groups"]:
        if "error" in g:
            continue
        n += 1
        scaled += g.get("scaled") is True
        live = {}
        for p in g["processes"]:
            for d in p["devices"]:
                live[d["device"]] = live.get(d["device"], 0) + d["live"]
        busy += len([p for p in g["processes"] if p["live"] > 0]) >= 2
        for dev, total in live.items():
            if total > cap:
                over += 1
                print("#", dev, total, file=sys.stderr)
print(n, busy, over, scaled)
PY
read -r samples busy over scaled <"$tmp/check"
echo "# $samples samples, $busy with two members holding memory, $scaled scaled"
is "$over" 0 "no sample's processes add up to more than the cap on a device"
[ "$busy" -ge 1 ]
tap $? "the samples saw the members at work together ($busy)"

done_testing
