"""Allocates simulated device memory through ctypes from Python code whose
names are not plain UTF-8, for tests/integration/t-python-names.sh.

  pynames.py names DIR [ARG]  one leak from each of: a file whose name is
                              not UTF-8 (1 MiB), a function whose qualified
                              name holds a lone surrogate (2 MiB), one whose
                              qualified name holds a NUL (3 MiB)
  pynames.py many N           N allocations (rounded up to a hundred),
                              each freed, from as many distinct lines, then
                              a leak (1 MiB) from one more
  pynames.py reuse N          N functions f000, f001, ... of one shape, each
                              made, called once (function i leaks i + 1
                              pages), deleted and collected in turn, so that
                              their code objects take each other's addresses
  pynames.py sub              a leak (1 MiB) from alloc < sub_leaf < sub_mid
                              in a sub-interpreter; exits 77 where there are
                              no sub-interpreters or no ctypes in them
  pynames.py init N           N leaks (1 MiB) from Derived.__init__, one
                              call site, in a loop that specializes the call
                              (the allocations of its first calls, which run
                              through other C frames, are freed)
"""
import ctypes
import os
import sys

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20


def alloc(size):
    p = ctypes.c_void_p()
    rc = rt.cudaMalloc(ctypes.byref(p), size)
    assert rc == 0, rc
    return p.value


def renamed(f, name):
    f.__code__ = f.__code__.replace(co_name=name, co_qualname=name)
    return f


def names(where):
    path = os.path.join(os.fsencode(where), b"mod\xff.py")
    src = "def in_file(alloc):\n    return alloc(1 << 20)\n"
    with open(path, "w") as out:
        out.write(src)
    scope = {}
    exec(compile(src, os.fsdecode(path), "exec"), scope)
    surrogate = renamed(lambda: alloc(2 * MiB), "bad\udcff")
    nul = renamed(lambda: alloc(3 * MiB), "a\x00b")
    return [scope["in_file"](alloc), surrogate(), nul()]


def many(n):
    # A hundred lines a function: a site's line is read from the start of
    # its function's location table, which a single huge function would
    # make slow.
    per = 100
    body = "    m(r, 256); f(p)\n" * per
    src = "".join("def f%d(m, r, p, f):\n%s" % (i, body)
                  for i in range((n + per - 1) // per))
    src += "def last(m, r):\n    m(r, 1 << 20)\n"
    scope = {}
    exec(src, scope)
    p = ctypes.c_void_p()
    for i in range((n + per - 1) // per):
        scope["f%d" % i](rt.cudaMalloc, ctypes.byref(p), p, rt.cudaFree)
    scope["last"](rt.cudaMalloc, ctypes.byref(p))


def reuse(n):
    import gc
    for i in range(n):
        # Same length names, same body: only the constant differs.
        src = "def f%03d(m, r):\n    m(r, %d)\n" % (i, (i + 1) * 4096)
        scope = {}
        exec(compile(src, "<reuse>", "exec"), scope)
        p = ctypes.c_void_p()
        scope["f%03d" % i](rt.cudaMalloc, ctypes.byref(p))
        del scope, src
        gc.collect()


SUB = """
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
def alloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), size) == 0
def sub_leaf():
    alloc(1 << 20)
def sub_mid():
    sub_leaf()
sub_mid()
"""


def sub():
    try:
        import _xxsubinterpreters as interpreters
    except ImportError:
        try:
            import _interpreters as interpreters
        except ImportError:
            sys.exit(77)
    # Legacy settings where there is a choice: ctypes is not made for an
    # isolated one.
    for how in ({"config": "legacy"}, {"isolated": False}, {}):
        try:
            interp = interpreters.create(**how)
            break
        except (TypeError, ValueError):
            pass
    try:
        ctypes_ok = "import ctypes\n"
        if hasattr(interpreters, "exec"):
            err = interpreters.exec(interp, ctypes_ok)
            if err is not None:
                sys.exit(77)
            err = interpreters.exec(interp, SUB)
            assert err is None, err
        else:
            try:
                interpreters.run_string(interp, ctypes_ok)
            except Exception:
                sys.exit(77)
            interpreters.run_string(interp, SUB)
    finally:
        interpreters.destroy(interp)


class Base:
    pass


class Derived(Base):
    def __init__(self):
        self.p = alloc(MiB)


def init(n):
    for i in range(n + 10):
        d = Derived()
        if i < 10:
            rt.cudaFree(d.p)


if __name__ == "__main__":
    if sys.argv[1] == "names":
        names(sys.argv[2])
    elif sys.argv[1] == "reuse":
        reuse(int(sys.argv[2]))
    elif sys.argv[1] == "sub":
        sub()
    elif sys.argv[1] == "init":
        init(int(sys.argv[2]))
    else:
        many(int(sys.argv[2]))
    sys.exit(0)
