"""For tests/integration/t-python-frames.sh: threads whose Python frames
change all the time (calls, returns, recursion, generators, exceptions)
while others allocate and free simulated device memory through ctypes.
Only the allocating thread's own frames are read; this checks that nothing
another thread does to its frames makes that unsafe."""
import ctypes
import sys
import threading

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
stop = threading.Event()


def recurse(n):
    if n == 0:
        return sum(i for i in range(20))
    try:
        if n % 7 == 0:
            raise ValueError(n)
        return recurse(n - 1)
    except ValueError:
        return recurse(n - 1)


def churn():
    while not stop.is_set():
        recurse(40)
        exec(compile("def f%d(): return %d" % (id(stop) & 7, 1), "<x>", "exec"),
             {})


def allocate(rounds, depth):
    if depth:
        return allocate(rounds, depth - 1)
    for i in range(rounds):
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), 4096 + i % 5) == 0
        assert rt.cudaFree(p) == 0


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
churners = [threading.Thread(target=churn) for _ in range(2)]
allocators = [threading.Thread(target=allocate, args=(rounds, d))
              for d in (0, 5, 30)]
for t in churners + allocators:
    t.start()
allocate(rounds, 3)
for t in allocators:
    t.join()
stop.set()
for t in churners:
    t.join()
