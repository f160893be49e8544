"""Evaluates Python expressions over a cumemguard report (docs/report-format.md)
for scripts/gpu-suite, one printed value per expression:

    report_query.py REPORT EXPR...

Names available to the expressions:
    r                 the report (parsed JSON)
    dev0              r["devices"] entry of ordinal 0 (None if absent)
    fns(sid)          function names of stack sid, innermost first ("" if unknown)
    mods(sid)         module base names of stack sid, innermost first
    has_fn(sid, name) stack sid has a frame in function `name`
    in_mod(sid, part) stack sid has a frame in a module whose base name
                      contains `part`
    leaks_with(name)  leak groups whose stack has a frame in function `name`
    leaks_in(part)    leak groups whose stack has a frame in a module
                      whose base name contains `part`
                      (both: the program's memory, not the driver's own
                      graph pools and contexts, kinds graph and context)
    has_python(sid)   stack sid has a Python frame
    threads(g)        the threads group g's allocations were made on
    thread_names(g)   their names, as each thread was named when it first
                      allocated (None for one the library could not name;
                      [] from reports written before names)
    off_main(g)       group g was made only on threads other than the
                      process's main thread
    silent_main(gs)   the groups of gs made on the main thread whose stacks
                      show no Python frame (what a Python program's
                      allocations must never be)
    total(groups)     sum of the groups' bytes
    count(groups)     sum of the groups' counts
"""
import json
import sys

r = json.load(open(sys.argv[1]))
_stacks = {s["id"]: s for s in r.get("stacks", [])}
dev0 = next((d for d in r.get("devices", []) if d.get("ordinal") == 0), None)


def _frames(sid):
    if sid is None or sid not in _stacks:
        return []
    return [r["frames"][i] for i in _stacks[sid]["frames"]]


def fns(sid):
    return [f.get("function") or "" for f in _frames(sid)]


def mods(sid):
    out = []
    for f in _frames(sid):
        m = f.get("module")
        out.append(r["modules"][m]["path"].rsplit("/", 1)[-1]
                   if m is not None else "")
    return out


def has_fn(sid, name):
    return name in fns(sid)


def in_mod(sid, part):
    return any(part in m for m in mods(sid))


def _programs():
    return [g for g in r.get("leaks", [])
            if g.get("kind") not in ("graph", "context")]


def leaks_with(name):
    return [g for g in _programs() if has_fn(g["stack"], name)]


def leaks_in(part):
    return [g for g in _programs() if in_mod(g["stack"], part)]


def has_python(sid):
    return any(f.get("lang") == "python" for f in _frames(sid))


def threads(g):
    return sorted({a["thread"] for a in g.get("allocations", [])})


def thread_names(g):
    return [t["name"] for t in g.get("threads", [])]


def off_main(g):
    return r["process"]["pid"] not in threads(g)


def silent_main(groups):
    return [g for g in groups if not off_main(g) and not has_python(g["stack"])]


def total(groups):
    return sum(g["bytes"] for g in groups)


def count(groups):
    return sum(g["count"] for g in groups)


for expr in sys.argv[2:]:
    try:
        print(eval(expr))
    except Exception as e:  # noqa: BLE001 - the suite shows what went wrong
        print("error:%s:%s" % (type(e).__name__, e))
