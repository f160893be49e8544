"""Allocations whose Python stacks change from one to the next while their
outer part stays, as a training loop's do, each leaked with a size of its
own; prints, per allocation, its size and Python's own view of its stack
(qualified name, file, line per frame, innermost first) as one JSON line.
A report must give each allocation exactly these Python frames.

  pymemo.py N     N rounds of: calls from two lines of an outer frame in
                  turn; inner chains of changing depth and functions;
                  a generator's frame resumed from two places; and every
                  tenth round a thread, the threads started one after
                  another; one instruction calling a function through a
                  ctypes callback and through a Python function in turn
                  (from 3.12 a shim frame at the place of a function
                  frame); the same instruction calling cudaMalloc itself
                  and a Python function that allocates in turn (a chain
                  that ends where the other goes on); then 4N functions of one name and shape made
                  and freed in turn, half of them allocating, whose code
                  objects take each other's addresses with first lines and
                  files that differ, the same code object at two places
                  of the stack two times in three, and the innermost
                  frame, calling cudaMalloc itself, the third
The last line is ["reused", K]: K allocations of those functions whose code
object lay where the one before's had.
"""
import ctypes
import gc
import json
import sys
import threading

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
PAGE = 4096
seen = []
lock = threading.Lock()


def stack(f):
    out = []
    while f is not None:
        out.append([f.f_code.co_qualname, f.f_code.co_filename, f.f_lineno])
        f = f.f_back
    return out


def alloc():
    with lock:
        size = (len(seen) + 1) * PAGE
        p = ctypes.c_void_p()
        here = stack(sys._getframe()); rc = rt.cudaMalloc(ctypes.byref(p), size)
        assert rc == 0, rc
        seen.append((size, here))


def leaf_a(depth):
    if depth > 0:
        return leaf_b(depth - 1)
    alloc()


def leaf_b(depth):
    if depth > 0:
        return leaf_a(depth - 1)
    alloc()


def one_call(via, *args):
    here = stack(sys._getframe()); via(*args)
    return here


def reached():
    alloc()


def through():
    reached()


def py_via():
    alloc()


def ctypes_or_python(i):
    size = (len(seen) + 1) * PAGE
    p = ctypes.c_void_p()
    args = (rt.cudaMalloc, ctypes.byref(p), size) if i % 2 else (py_via,)
    here = one_call(*args)
    if i % 2:
        assert p.value
        seen.append((size, here))


def gen():
    while True:
        alloc()
        yield
        alloc()
        yield


SHAPE = "%sdef f(run, args):\n    return run(*args)\n"
code_at = []


def made(j):
    # One name, one shape: what differs is the first line and the file.
    # Made and freed in turn, every other one's code object takes the
    # address of the one two before, and only those allocate: the memo
    # then holds, at the frame's place, a code object at the same address,
    # at the same instruction.  Two in a row call themselves once (the same
    # code object at two places) before alloc(); the third calls cudaMalloc
    # itself, where its frame is the innermost.
    lines = j // 2 % 3
    name = "<made%d>" % (j // 6 % 2)
    scope = {}
    exec(compile(SHAPE % ("\n" * lines), name, "exec"), scope)
    f = scope["f"]
    if j % 2:
        f(lambda: None, ())
    elif lines < 2:
        code_at.append(id(f.__code__))
        f(f, (alloc, ()))
    else:
        code_at.append(id(f.__code__))
        size = (len(seen) + 1) * PAGE
        p = ctypes.c_void_p()
        here = [["f", name, lines + 2]] + stack(sys._getframe()); rc = f(rt.cudaMalloc, (ctypes.byref(p), size))
        assert rc == 0, rc
        seen.append((size, here))
    del scope, f
    gc.collect()


def step(i, g):
    if i % 2:
        leaf_a(i % 7)
    else:
        leaf_b((i * 3) % 5)
    next(g)


def in_thread(i):
    for k in range(3):
        leaf_a((i + k) % 4)


def main(n):
    g = gen()
    for i in range(n):
        if i % 3:
            step(i, g)
        else:
            step(i, g)
        if i % 10 == 0:
            t = threading.Thread(target=in_thread, args=(i,))
            t.start()
            t.join()
    callback = ctypes.CFUNCTYPE(None)(reached)
    for i in range(n):
        one_call(callback if i % 2 else through)
    for i in range(n):
        ctypes_or_python(i)
    for j in range(4 * n):
        made(j)
    for size, here in seen:
        print(json.dumps([size, here]))
    reused = sum(a == b for a, b in zip(code_at, code_at[1:]))
    print(json.dumps(["reused", reused]))


main(int(sys.argv[1]))
