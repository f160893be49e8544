"""Allocates simulated device memory through ctypes from known Python
lines, for tests/integration/t-python-frames.sh: each allocating line is marked
with a comment "# site NAME", which the test looks up to know the line."""
import ctypes
import sys
import threading

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20


def alloc(size):
    p = ctypes.c_void_p()
    rc = rt.cudaMalloc(ctypes.byref(p), size)  # site alloc
    assert rc == 0, rc
    return p.value


def leak_one():
    return alloc(1 * MiB)  # site leak_one


def freed():
    rt.cudaFree(alloc(2 * MiB))  # site freed


class Model:
    def build(self):
        return alloc(3 * MiB)  # site Model.build


def outer():
    return inner()  # site outer


def inner():
    return alloc(4 * MiB)  # site inner


def in_thread():
    alloc(5 * MiB)  # site in_thread


def main():
    keep = [leak_one(), Model().build(), outer()]  # site main
    freed()
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    return keep


def down(n):
    return alloc(MiB) if n == 0 else down(n - 1)


def via_c(n):
    """Each level calls the next through map(), a C function, so each adds
    an eval-loop frame and the C frames around it to the native stack."""
    return alloc(6 * MiB) if n == 0 else next(map(via_c, [n - 1]))


def two_paths(lib):
    """Allocates through two native paths of one depth in turn, from one
    Python instruction: 1 MiB through path a, 2 MiB through path b."""
    paths = ctypes.CDLL(lib)
    fn = ctypes.cast(rt.cudaMalloc, ctypes.c_void_p).value
    for i in range(6):
        how = paths.cmgt_path_b if i % 2 else paths.cmgt_path_a
        assert how(ctypes.c_void_p(fn), ctypes.c_size_t((1 + i % 2) * MiB)) == 0


if __name__ == "__main__":
    if sys.argv[1:] == ["deep"]:
        down(200)
    elif sys.argv[1:] == ["via-c"]:
        via_c(30)
    elif sys.argv[1:2] == ["two-paths"]:
        two_paths(sys.argv[2])
    else:
        main()  # site module
    sys.exit(0)
