"""Allocates simulated device memory through ctypes from Python code whose
names are not plain UTF-8, for tests/integration/t-python-names.sh.

  pynames.py names DIR [ARG]  one leak from each of: a file whose name is
                              not UTF-8 (1 MiB), a function whose qualified
                              name holds a lone surrogate (2 MiB), one whose
                              qualified name holds a NUL (3 MiB)
  pynames.py many N           N allocations (rounded up to a hundred),
                              each freed, from as many distinct lines, then
                              a leak (1 MiB) from one more
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


if __name__ == "__main__":
    if sys.argv[1] == "names":
        names(sys.argv[2])
    else:
        many(int(sys.argv[2]))
    sys.exit(0)
