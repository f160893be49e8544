"""NVML as nvidia-smi reads it, through ctypes: libnvidia-ml.so.1 loaded with
dlopen and its functions found with dlsym, as nvidia-smi does.  No CUDA.

As a program it stands in for

    nvidia-smi --query-gpu=uuid,memory.total,memory.used,memory.free,memory.reserved --format=csv,noheader,nounits

where nvidia-smi is not the one to run (the suite's dry run, on the
simulated NVML): one line per GPU, the memory in MiB (whole MiB, rounded
down).  As a module it gives the same figures in bytes (gpus()) and a
device's list of processes (processes())."""
import ctypes
import sys

MiB = 1 << 20


class _Memory2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


# nvmlMemory_v2: the struct's size, version 2 in the top byte.
_MEMORY_V2 = ctypes.sizeof(_Memory2) | (2 << 24)


class _Process(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


_nvml = None


def _lib():
    global _nvml
    if _nvml is None:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        rc = lib.nvmlInit_v2()
        if rc != 0:
            raise OSError("nvmlInit_v2: %d" % rc)
        _nvml = lib
    return _nvml


def _handle(index):
    h = ctypes.c_void_p()
    rc = _lib().nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index),
                                              ctypes.byref(h))
    if rc != 0:
        raise OSError("nvmlDeviceGetHandleByIndex_v2(%d): %d" % (index, rc))
    return h


def gpus():
    """Each GPU: {uuid, total, used, free, reserved} in bytes (NVML's
    memory information, version 2, as nvidia-smi shows it)."""
    n = ctypes.c_uint()
    rc = _lib().nvmlDeviceGetCount_v2(ctypes.byref(n))
    if rc != 0:
        raise OSError("nvmlDeviceGetCount_v2: %d" % rc)
    out = []
    for i in range(n.value):
        h = _handle(i)
        uuid = ctypes.create_string_buffer(96)
        rc = _lib().nvmlDeviceGetUUID(h, uuid, ctypes.c_uint(96))
        m = _Memory2(version=_MEMORY_V2)
        rc = rc or _lib().nvmlDeviceGetMemoryInfo_v2(h, ctypes.byref(m))
        if rc != 0:
            raise OSError("NVML device %d: %d" % (i, rc))
        out.append({"uuid": uuid.value.decode(), "total": m.total,
                    "used": m.used, "free": m.free, "reserved": m.reserved})
    return out


def processes(index):
    """NVML's list of compute processes on GPU `index`: [(pid, bytes)]."""
    infos = (_Process * 64)()
    n = ctypes.c_uint(64)
    rc = _lib().nvmlDeviceGetComputeRunningProcesses_v3(_handle(index),
                                                         ctypes.byref(n),
                                                         infos)
    if rc != 0:
        raise OSError("nvmlDeviceGetComputeRunningProcesses_v3: %d" % rc)
    return [(infos[i].pid, infos[i].usedGpuMemory) for i in range(n.value)]


if __name__ == "__main__":
    for g in gpus():
        print("%s, %d, %d, %d, %d" % (g["uuid"], g["total"] // MiB,
                                      g["used"] // MiB, g["free"] // MiB,
                                      g["reserved"] // MiB))
    sys.exit(0)
