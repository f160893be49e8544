# Simulated CUDA for machines without a GPU: a driver (libcuda.so.1), a
# runtime (libcudart.so.13 and libcudart_static.a) that reaches it the way
# NVIDIA's does, and one script-driven test program per path into CUDA.
# See tests/sim/README.md.  Nothing here is installed.

# The simulated libraries export CUDA's names, so they must not inherit
# -fvisibility=hidden from AM_CFLAGS; the programs export their own
# symbols (-rdynamic) so that stack traces through them have names.
SIM_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-fno-strict-aliasing

check_LTLIBRARIES += tests/sim/libcuda.la tests/sim/libcudart.la

# -Bsymbolic, like the real driver: its own function addresses (handed
# out by cuGetProcAddress) can never resolve to an LD_PRELOAD library.
tests_sim_libcuda_la_SOURCES = \
	tests/sim/libcuda.c \
	tests/sim/libcuda.h \
	tests/sim/devmem.c \
	tests/sim/contexts.c \
	tests/sim/procaddr.c \
	tests/sim/visible.c \
	tests/sim/vmm.c \
	tests/sim/pools.c \
	tests/sim/arrays.c \
	tests/sim/hostmem.c \
	tests/sim/ipc.c \
	tests/sim/streams.c \
	tests/sim/graphs.c \
	tests/sim/graphs.h \
	tests/sim/graphexec.c \
	tests/sim/arena.c \
	tests/sim/arena.h
tests_sim_libcuda_la_CFLAGS = $(SIM_CFLAGS)
tests_sim_libcuda_la_LDFLAGS = -version-info 1:0:0 -rpath /nowhere \
	-Wl,-Bsymbolic
tests_sim_libcuda_la_LIBADD = -lpthread

SIM_CUDART_SOURCES = tests/sim/cudart.c tests/sim/cudart.h \
	tests/sim/cudart_mem.c tests/sim/cudart_graph.c
tests_sim_libcudart_la_SOURCES = $(SIM_CUDART_SOURCES)
tests_sim_libcudart_la_CFLAGS = $(SIM_CFLAGS)
tests_sim_libcudart_la_LDFLAGS = -version-info 13:0:0 -rpath /nowhere
tests_sim_libcudart_la_LIBADD = -ldl -lpthread

# NVML, which numbers physical devices and reads the driver's accounting
# (libnvidia-ml.so.1; -Bsymbolic like the driver).
check_LTLIBRARIES += tests/sim/libnvidia-ml.la
tests_sim_libnvidia_ml_la_SOURCES = tests/sim/nvml.c tests/sim/nvml_abi.h
tests_sim_libnvidia_ml_la_CFLAGS = $(SIM_CFLAGS)
tests_sim_libnvidia_ml_la_LDFLAGS = -version-info 1:0:0 -rpath /nowhere \
	-Wl,-Bsymbolic
tests_sim_libnvidia_ml_la_LIBADD = -ldl -lpthread

# The same runtime as a plain archive, as nvcc links cudart by default.
check_LIBRARIES += tests/sim/libcudart_static.a
tests_sim_libcudart_static_a_SOURCES = $(SIM_CUDART_SOURCES)
tests_sim_libcudart_static_a_CFLAGS = $(SIM_CFLAGS)

SIM_APPS = \
	tests/sim/app_driver \
	tests/sim/app_dlsym \
	tests/sim/app_getproc \
	tests/sim/app_rt_shared \
	tests/sim/app_rt_static
check_PROGRAMS += $(SIM_APPS)

SIM_APP_COMMON = tests/sim/app.c tests/sim/app_inspect.c tests/sim/app_parse.c \
	tests/sim/app_ops.c tests/sim/app_signals.c \
	tests/sim/app_graph.c tests/sim/app_nvml.c tests/sim/app_lib.c \
	tests/sim/app.h tests/sim/app_int.h tests/sim/nvml_abi.h
# The optional operations over a table of driver entry points.
SIM_APP_DRVOPS = tests/sim/app_drvops.c tests/sim/app_drvgraph.c \
	tests/sim/app_drv.h
# -no-install (no wrapper scripts) is spelled out rather than taken from
# TEST_LDFLAGS: automake -Werror rejects an _LDFLAGS variable that names
# no target, so that one may not survive.
SIM_APP_LINK = -no-install -rdynamic
# What the programs share is compiled once, not once per program.
check_LIBRARIES += tests/sim/libsimapp.a
tests_sim_libsimapp_a_SOURCES = $(SIM_APP_COMMON) $(SIM_APP_DRVOPS)
tests_sim_libsimapp_a_CFLAGS = $(SIM_CFLAGS)

tests_sim_app_driver_SOURCES = tests/sim/app_driver.c
tests_sim_app_driver_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_driver_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_driver_LDADD = tests/sim/libsimapp.a tests/sim/libcuda.la \
	tests/sim/libnvidia-ml.la -ldl -lpthread

# app_driver built with AddressSanitizer: the sanitizer runtime starts with
# the interposer already loaded (t-sanitized-program.sh).
if HAVE_ASAN
check_PROGRAMS += tests/sim/app_driver_asan
tests_sim_app_driver_asan_SOURCES = $(SIM_APP_COMMON) $(SIM_APP_DRVOPS) \
	tests/sim/app_driver.c
tests_sim_app_driver_asan_CFLAGS = $(SIM_CFLAGS) -fsanitize=address
tests_sim_app_driver_asan_LDFLAGS = $(SIM_APP_LINK) -fsanitize=address
tests_sim_app_driver_asan_LDADD = tests/sim/libcuda.la \
	tests/sim/libnvidia-ml.la -ldl -lpthread
endif

tests_sim_app_dlsym_SOURCES = tests/sim/app_drv.c tests/sim/app_dlsym.c
tests_sim_app_dlsym_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_dlsym_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_dlsym_LDADD = tests/sim/libsimapp.a -ldl -lpthread

tests_sim_app_getproc_SOURCES = tests/sim/app_drv.c tests/sim/app_getproc.c
tests_sim_app_getproc_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_getproc_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_getproc_LDADD = tests/sim/libsimapp.a -ldl -lpthread

tests_sim_app_rt_shared_SOURCES = tests/sim/app_rt.c
tests_sim_app_rt_shared_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_rt_shared_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_rt_shared_LDADD = tests/sim/libsimapp.a tests/sim/libcudart.la \
	-ldl -lpthread

tests_sim_app_rt_static_SOURCES = tests/sim/app_rt.c
tests_sim_app_rt_static_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_rt_static_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_rt_static_LDADD = tests/sim/libsimapp.a \
	tests/sim/libcudart_static.a -ldl -lpthread

EXTRA_DIST += tests/sim/README.md

# A naive interposer (cuMemCreate and cuGetProcAddress_v2, no dlsym hook)
# and the tests of the simulated CUDA itself.
check_LTLIBRARIES += tests/sim/libnaive.la
tests_sim_libnaive_la_SOURCES = tests/sim/naive.c
tests_sim_libnaive_la_CFLAGS = $(SIM_CFLAGS)
tests_sim_libnaive_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_sim_libnaive_la_LIBADD = -ldl
TESTS += tests/sim/t-sim.sh
EXTRA_DIST += tests/sim/t-sim.sh

# A second interposer for the RTLD_NEXT test, and its program.
check_LTLIBRARIES += tests/sim/libnexttest.la
tests_sim_libnexttest_la_SOURCES = tests/sim/libnexttest.c
tests_sim_libnexttest_la_CFLAGS = $(SIM_CFLAGS)
tests_sim_libnexttest_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_sim_libnexttest_la_LIBADD = -ldl
check_PROGRAMS += tests/sim/app_next
tests_sim_app_next_SOURCES = tests/sim/app_next.c
tests_sim_app_next_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_next_LDFLAGS = -no-install
tests_sim_app_next_LDADD = -ldl

# Allocations through functions named like a framework's pool, for the
# tests of --no-pools and the reader's pool hint.
check_PROGRAMS += tests/sim/app_pool
tests_sim_app_pool_SOURCES = tests/sim/app_pool.c
tests_sim_app_pool_CFLAGS = $(SIM_CFLAGS)
tests_sim_app_pool_LDFLAGS = $(SIM_APP_LINK)
tests_sim_app_pool_LDADD = tests/sim/libcudart.la
