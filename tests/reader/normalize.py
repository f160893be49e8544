#!/usr/bin/python3
"""Filters a cumemguard-report summary of a tests/sim run down to what is the
same on every run and every compiler: usage  normalize.py TMPDIR SIMDIR.
Pids, times, the host and the temporary and build paths become words;
offsets become +0xN and source lines :N; numbered frames and one-line stacks keep only the
test program's cmgtest_ functions (which frames a compiler inlines or leaves
unnamed is not ours to pin down)."""
import re
import sys

tmp, sim = sys.argv[1], sys.argv[2]
n = 0
for line in sys.stdin:
    line = line.rstrip("\n").replace(tmp, "TMP").replace(sim, "SIM")
    line = re.sub(r"process \d+", "process PID", line)
    line = re.sub(r"written (.*), [0-9.]+ s after the process started, on .*",
                  r"written \1, T s after the process started, on HOST", line)
    line = re.sub(r", at [0-9.]+ s", ", at T s", line)
    line = re.sub(r"\+0x[0-9a-f]+", "+0xN", line)
    line = re.sub(r"(\.[a-z]+):\d+\b", r"\1:N", line)
    m = re.match(r"    #\d+ (.*)", line)
    if m:
        if "cmgtest_" in m.group(1):
            print("    #%d %s" % (n, m.group(1)))
            n += 1
        continue
    n = 0
    m = re.match(r"(.*(?::| from) )(\S.* < .*)$", line)
    if m:
        names = [w for w in m.group(2).split(" < ") if w.startswith("cmgtest_")]
        line = m.group(1) + " < ".join(names)
    print(line)
