#!/usr/bin/env python3
"""Every report the library writes is one its reader reads: random runs.

Each case runs one simulated-CUDA program (tests/sim) under the launcher
with a random script over every kind of memory the library counts (device,
pitch, managed, stream-ordered and pool, arrays, VMM on a device and at a
host location, page-locked host memory, IPC and external memory), freed
and left live, on two devices, with random limits that refuse some of it,
sometimes in a group, and with dumps on request and by signal.  Every
report it leaves (the one at exit and each dump) must pass
scripts/validate-report, and every reader command must take it:

  summary, summary --json, folded, flame, diff, merge, check, timeline,
  pprof, plot.

usage: reportprop.py OUTDIR CASES SEED
Prints TAP ("ok N - ..."), one line per case; a failing case prints its
command line.  Environment: LAUNCHER, SIM (tests/sim of the build tree), READER
(cumemguard-report), VALIDATE (scripts/validate-report), SCHEMA, and
CMG_PROPERTY_JOBS, how many cases run at once (2: most of a case is waiting
on its processes, and a test beside it in `make -j2 check` often sleeps).
"""
import importlib.machinery
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import threading
import types

M = 1 << 20

# Operations by kind: (name, argument maker, the free operation's name).
# Sizes stay small so that two 64 MiB devices hold most scripts.
def size(rng):
    return "%dK" % rng.choice((4, 64, 512, 1024, 2048, 4096, 8192))

ALLOCS_DRIVER = [
    ("alloc", lambda r: [size(r)], "free"),
    ("pitch", lambda r: [str(r.choice((256, 1000, 4096))),
                         str(r.choice((1, 16, 300)))], "free"),
    ("async", lambda r: [size(r)], "free_async"),
    ("site", lambda r: [str(r.randint(1, 3)), size(r)], "free"),
    ("deep", lambda r: [str(r.randint(1, 60)), size(r)], "free"),
    ("vmm", lambda r: ["2M"], "vmm_free"),
    ("vmm_host", lambda r: ["2M"], "vmm_free"),
    ("array", lambda r: [str(r.choice((64, 1024))), str(r.choice((0, 64))),
                         r.choice(("u8", "f16", "f32")),
                         str(r.choice((1, 2, 4)))], "array_free"),
    ("mipmap", lambda r: ["256", "256", "3"], "mipmap_free"),
    ("host", lambda r: [size(r)], "host_free"),
    ("hostalloc", lambda r: [size(r)], "host_free"),
    ("ext_import", lambda r: [size(r)], "ext_destroy"),
]
ALLOCS_RUNTIME = ALLOCS_DRIVER + [
    ("managed", lambda r: [size(r)], "free"),
    ("malloc3d", lambda r: ["512", "4", "2"], "free"),
    ("malloc_array", lambda r: ["128", "16"], "array_free"),
]
PROGRAMS = {
    "app_driver": ALLOCS_DRIVER,
    "app_rt_shared": ALLOCS_RUNTIME,
    "app_rt_static": ALLOCS_RUNTIME,
}


def script(rng, dumpdir):
    """A random script, and how many dumps it asks for by itself."""
    prog = rng.choice(sorted(PROGRAMS))
    kinds = PROGRAMS[prog]
    words, live, index, pools, dumps = [], [], 0, 0, 0
    for _ in range(rng.randint(4, 40)):
        roll = rng.random()
        if roll < 0.55:
            name, args, free = rng.choice(kinds)
            words += [name] + args(rng)
            live.append((index, free))
            index += 1
        elif roll < 0.75 and live:
            i, free = live.pop(rng.randrange(len(live)))
            words += [free, str(i)]
        elif roll < 0.80 and live:
            i, _ = rng.choice(live)
            words += ["ipc_open", str(i)]
            live.append((index, "ipc_close"))
            index += 1
        elif roll < 0.85:
            if pools == 0 or rng.random() < 0.3:
                words += ["pool_create", str(rng.randint(0, 1))]
                pools += 1
            words += ["pool_alloc", str(rng.randrange(pools)), size(rng)]
            live.append((index, "free_async"))
            index += 1
        elif roll < 0.90:
            words += ["device", str(rng.randint(0, 1))]
        elif roll < 0.95:
            words += ["dump", os.path.join(dumpdir, "dump%d.json" % dumps)]
            dumps += 1
        else:
            words += ["kill", "USR1", "sleep", "20"]
            dumps += 1
    if rng.random() < 0.2 and live:
        words += ["many", str(rng.randint(1, 300)), "4K"]
    return prog, words, dumps


def options(rng, group):
    opts = ["--dump-signal", "USR1",
            "--stack-depth", str(rng.choice((0, 4, 32, 64)))]
    if rng.random() < 0.7:
        opts += ["--limit", rng.choice(("4M", "16M", "40M", "50%"))]
    if rng.random() < 0.3:
        opts += ["--host-limit", rng.choice(("1M", "8M"))]
    if rng.random() < 0.2:
        opts += ["--max-alloc", "3M"]
    if rng.random() < 0.25:
        opts += ["--group", group, "--group-limit", rng.choice(("8M", "30M"))]
    if rng.random() < 0.2:
        opts += ["--on-exceed", "warn"]
    if rng.random() < 0.15:
        opts += ["--soft-limit", "2M"]
    return opts


def run(cmd, out, env=None):
    with open(out + ".out", "wb") as o, open(out + ".err", "wb") as e:
        p = subprocess.run(cmd, stdout=o, stderr=e, env=env, timeout=120)
    return p.returncode


def reader_checks(reader, reports, d):
    """Every reader command over the case's reports: (what, status) that
    failed.  check may say 1 (something leaked), nothing else may fail."""
    bad = []
    first = reports[0]
    cmds = {"merge": ["merge"] + reports,
            "merge --json": ["merge", "--json"] + reports,
            "diff": ["diff", first, reports[-1]],
            "diff --json": ["diff", "--json", first, reports[-1]]}
    for r in reports:
        b = os.path.basename(r)
        cmds.update({
            "summary " + b: [r],
            "summary --json " + b: ["--json", "--top", "0", r],
            "summary --all-frames " + b: ["--all-frames", r],
            "folded " + b: ["folded", r],
            "folded --weight peak " + b: ["folded", "--weight", "peak", r],
            "flame " + b: ["flame", "-o", os.path.join(d, b + ".svg"), r],
            "check " + b: ["check", r],
            "timeline " + b: ["timeline", "-o",
                              os.path.join(d, b + ".trace.json"), r],
            "pprof " + b: ["pprof", "-o", os.path.join(d, b + ".pb.gz"), r],
            "pprof --at peak " + b: ["pprof", "--at", "peak", "-o",
                                     os.path.join(d, b + ".peak.pb.gz"), r],
            "plot " + b: ["plot", "-o", os.path.join(d, b + ".plot.svg"), r],
        })
    for what, args in sorted(cmds.items()):
        st = run([reader] + args, os.path.join(d, "reader"))
        ok = st in (0, 1) if what.startswith("check ") else st == 0
        if not ok:
            err = open(os.path.join(d, "reader.err")).read().strip()
            bad.append("%s: status %d: %s" % (what, st, err[:200]))
        elif what.startswith("summary --json"):
            json.load(open(os.path.join(d, "reader.out")))
    return bad


def one(n, seed, outdir, env):
    rng = random.Random(seed * 1000003 + n)
    d = os.path.join(outdir, "case%d" % n)
    os.makedirs(d, exist_ok=True)
    prog, words, _ = script(rng, d)
    opts = options(rng, "prop%d-%d" % (os.getpid(), n))
    cmd = [env["LAUNCHER"]] + opts + [
        "--report", os.path.join(d, "exit.%p.json"), "--",
        os.path.join(env["SIM"], prog)] + words
    with open(os.path.join(d, "command"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    cenv = dict(os.environ, CMG_SIM_DEVICES="64M,32M")
    st = run(cmd, os.path.join(d, "prog"), cenv)
    problems = []
    if st != 0:
        problems.append("the program exited %d" % st)
    reports = sorted(os.path.join(d, f) for f in os.listdir(d)
                     if f.endswith(".json") and not f.endswith(".trace.json"))
    if not any(os.path.basename(r).startswith("exit.") for r in reports):
        problems.append("no report at exit")
    for r in reports:
        why = env["validate"](r)
        if why:
            problems.append("%s is not valid: %s" % (os.path.basename(r),
                                                     why[:300]))
    if reports:
        problems += reader_checks(env["READER"], reports, d)
    kinds = set()
    for r in reports:
        try:
            rep = json.load(open(r))
            kinds |= {g["kind"] for g in rep["leaks"]}
            if rep.get("denials"):
                kinds.add("denial")
            if rep.get("timeline", {}).get("freed"):
                kinds.add("freed")
        except (OSError, ValueError, KeyError):
            pass
    return problems, len(reports), kinds, d


def main():
    outdir, cases, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    env = {k: os.environ[k] for k in
           ("LAUNCHER", "SIM", "READER", "VALIDATE", "SCHEMA")}
    # The validator in this process: one compiled schema for every report
    # instead of a Python started per report.
    loader = importlib.machinery.SourceFileLoader("validate_report",
                                                  env["VALIDATE"])
    module = types.ModuleType(loader.name)
    loader.exec_module(module)
    check, lock = module.checker(json.load(open(env["SCHEMA"]))), threading.Lock()

    def validate(path):
        with lock:
            return check(path)
    env["validate"] = validate
    seen, failed = set(), 0
    jobs = int(os.environ.get("CMG_PROPERTY_JOBS") or 2)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda n: one(n, seed, outdir, env),
                                range(1, cases + 1)))
    for n, (problems, nrep, kinds, d) in enumerate(results, 1):
        seen |= kinds
        if problems:
            failed += 1
            print("not ok %d - case %d (seed %d): %d reports" %
                  (n, n, seed, nrep))
            for p in problems:
                print("#   " + p)
            print("#   command: " + open(os.path.join(d, "command")).read()
                  .strip())
        else:
            print("ok %d - case %d (seed %d): %d reports valid, every "
                  "reader command takes them" % (n, n, seed, nrep))
    # The cases together must have reached every kind, or they prove less
    # than they say.
    want = {"device", "array", "vmm", "vmm_host", "host", "import",
            "denial", "freed"}
    missing = sorted(want - seen)
    print("%s %d - the cases left every kind live at least once, were "
          "refused and freed%s" % ("not ok" if missing else "ok", cases + 1,
                                   ": never " + ", ".join(missing)
                                   if missing else ""))
    print("1..%d" % (cases + 1))
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
