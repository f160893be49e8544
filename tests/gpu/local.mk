# The real-GPU suite (scripts/gpu-suite, scripts/gpu-bundle; how to run it
# and record results: docs/GPU-VALIDATION.md).  Nothing here needs a GPU:
# make check only checks that the suite runs nothing without one, that its
# dry run on the simulated CUDA (with the suite's own nvcc program built
# for it) passes, and that the bundle builds.

GPU_SUITE_FILES = \
	tests/gpu/build.sh \
	tests/gpu/cases.sh \
	tests/gpu/cmg_alloc.cu \
	tests/gpu/cmgcase.py \
	tests/gpu/ctypes_cudart.py \
	tests/gpu/cupy_pool.py \
	tests/gpu/jax_prealloc.py \
	tests/gpu/nvsmi.py \
	tests/gpu/overhead_jax.py \
	tests/gpu/overhead_torch.py \
	tests/gpu/report_query.py \
	tests/gpu/serve_sizing.py \
	tests/gpu/torch_hold.py \
	tests/gpu/torch_nccl.py \
	tests/gpu/torch_oom.py \
	tests/gpu/torch_pools.py \
	tests/gpu/torch_train.py
EXTRA_DIST += $(GPU_SUITE_FILES) scripts/gpu-suite scripts/gpu-bundle \
	docs/GPU-VALIDATION.md tests/gpu/t-suite-nogpu.sh tests/gpu/t-bundle.sh
GPU_LONG = tests/gpu/t-suite-nogpu.sh
TESTS += tests/gpu/t-bundle.sh

# nvcc for build.sh: NVCC, else the --with-cuda toolkit's, else (build.sh)
# CUDA_HOME's, PATH's or /usr/local/cuda's.
GPU_NVCC = cuda=`echo '$(CUDA_CPPFLAGS)' | \
	  $(SED) -n 's|^ *-I\(.*\)/include *$$|\1|p'`; \
	if test -z "$(NVCC)" && test -x "$$cuda/bin/nvcc"; then \
	  NVCC="$$cuda/bin/nvcc"; \
	else NVCC="$(NVCC)"; fi; export NVCC
GPU_PROGRAM_DEPS = $(srcdir)/tests/gpu/cmg_alloc.cu \
	$(srcdir)/tests/gpu/build.sh $(srcdir)/include/cumemguard.h

# The same program against the simulated runtime, which the suite's dry run
# runs (t-suite-nogpu.sh): make check needs nvcc, and fails without it
# rather than check the dry run on something else.  One architecture only.
GPU_SIM_BINS = tests/gpu/cmg_alloc_sim_static tests/gpu/cmg_alloc_sim_shared
check_DATA = $(GPU_SIM_BINS)
CLEANFILES += $(GPU_SIM_BINS)

tests/gpu/cmg_alloc_sim_static: $(GPU_PROGRAM_DEPS) \
		$(srcdir)/tests/sim/cudart.h tests/sim/libcudart_static.a \
		tests/sim/libcudart.la
	$(AM_V_GEN)$(GPU_NVCC); \
	$(SHELL) $(srcdir)/tests/gpu/build.sh --sim tests/sim $(srcdir)/tests/gpu \
	  tests/gpu
tests/gpu/cmg_alloc_sim_shared: tests/gpu/cmg_alloc_sim_static

# --enable-gpu-tests: the nvcc test programs are built by `make` too; the
# suite finds them in tests/gpu of the build tree.  No GPU is needed to
# build them.
if GPU_TESTS
GPU_TEST_BINS = tests/gpu/cmg_alloc_static tests/gpu/cmg_alloc_shared
noinst_DATA = $(GPU_TEST_BINS)
CLEANFILES += $(GPU_TEST_BINS)

tests/gpu/cmg_alloc_static: $(GPU_PROGRAM_DEPS)
	$(AM_V_GEN)$(GPU_NVCC); \
	$(SHELL) $(srcdir)/tests/gpu/build.sh $(srcdir)/tests/gpu tests/gpu
tests/gpu/cmg_alloc_shared: tests/gpu/cmg_alloc_static
endif
