#!/usr/bin/python3
"""Writes large reports for the tests of how the reader scales:

  make-large.py distinct OUT STACKS DEPTH   STACKS stacks of DEPTH frames
      each, no frame shared (C++ names that differ only at their end);
  make-large.py python OUT STACKS           a Python program's report: each
      stack a path through the interpreter and a framework's native code,
      shared between stacks, under 12 Python frames of its own;
  make-large.py refs OUT N [CUTS]           one stack of N references to one
      frame, and CUTS cuts at its end;
  make-large.py name OUT BYTES              one frame whose function's name
      is BYTES long.

Each is data/job-a.json with its stacks, frames, leaks and peaks replaced
(one leak group per stack), so that everything else is a real report's."""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def native(i, name):
    return {"address": "0x%x" % (0x555500000000 + 16 * i), "module": 0,
            "offset": "0x%x" % (16 * i), "function": name,
            "function_offset": 4}


def python(i, name, path, line):
    return {"address": "0x%x" % (0x8000000000000000 + i), "module": None,
            "offset": None, "function": name, "function_offset": None,
            "lang": "python", "file": path, "line": line}


def distinct(stacks, depth):
    frames, out = [], []
    for s in range(stacks):
        ids = []
        for k in range(depth):
            ids.append(len(frames))
            frames.append(native(len(frames), "ns::Block<float>::forward"
                                 "(int) #%d.%d" % (s, k)))
        out.append(ids)
    return frames, out


def python_program(stacks):
    rnd = random.Random(4242)
    frames = []
    shared = []
    for k in range(300):
        frames.append(native(len(frames), "at::native::op_%d(at::Tensor const&, "
                             "c10::optional<c10::ScalarType>)" % k))
        shared.append(len(frames) - 1)
    out = []
    for s in range(stacks):
        ids = [shared[k] for k in rnd.sample(range(300), 30)]
        for k in range(12):
            ids.append(len(frames))
            frames.append(python(len(frames), "Model%d.layer_%d" % (s % 97, k),
                                 "/opt/venv/lib/python3.12/site-packages/"
                                 "model/block_%d.py" % (s % 211), 10 + s + k))
        out.append(ids)
    return frames, out


def report(frames, stacks):
    r = json.load(open(os.path.join(HERE, "data", "job-a.json")))
    r["frames"] = frames
    r["stacks"] = [{"id": i + 1, "truncated": False, "frames": f}
                   for i, f in enumerate(stacks)]
    r["leaks"] = [{"stack": i + 1, "api": "cudaMalloc", "kind": "device",
                   "device": 0, "count": 1, "bytes": (1 << 20) * (i + 1)}
                  for i in range(len(stacks))]
    r["peaks"], r["denials"], r["released"] = [], [], []
    r["summary"]["live_allocations"] = len(stacks)
    return r


def main():
    mode, out = sys.argv[1], sys.argv[2]
    n = [int(a) for a in sys.argv[3:]]
    if mode == "distinct":
        r = report(*distinct(n[0], n[1]))
    elif mode == "python":
        r = report(*python_program(n[0]))
    elif mode == "refs":
        r = report([native(0, "at::native::empty_cuda(c10::ArrayRef<long>)")],
                   [[0] * n[0]])
        if len(n) > 1:
            r["stacks"][0]["cuts"] = [{"at": n[0], "frames": 1,
                                       "lang": "native"}] * n[1]
    elif mode == "name":
        r = report([native(0, "f" * n[0])], [[0]])
    else:
        sys.exit("make-large.py: unknown mode %r" % mode)
    with open(out, "w") as f:
        json.dump(r, f, separators=(",", ":"))


main()
