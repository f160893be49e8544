# The real-GPU suite (scripts/gpu-suite, scripts/gpu-bundle; how to run it
# and record results: docs/GPU-VALIDATION.md).  Nothing here needs a GPU:
# make check only checks that the suite runs nothing without one, that its
# dry run on the simulated CUDA passes, and that the bundle builds.

GPU_SUITE_FILES = \
	tests/gpu/build.sh \
	tests/gpu/cmg_alloc.cu \
	tests/gpu/cmgcase.py \
	tests/gpu/ctypes_cudart.py \
	tests/gpu/cupy_pool.py \
	tests/gpu/jax_prealloc.py \
	tests/gpu/overhead_jax.py \
	tests/gpu/overhead_torch.py \
	tests/gpu/report_query.py \
	tests/gpu/torch_hold.py \
	tests/gpu/torch_oom.py \
	tests/gpu/torch_pools.py \
	tests/gpu/torch_train.py
EXTRA_DIST += $(GPU_SUITE_FILES) scripts/gpu-suite scripts/gpu-bundle \
	docs/GPU-VALIDATION.md tests/gpu/t-suite-nogpu.sh
TESTS += tests/gpu/t-suite-nogpu.sh

# --enable-gpu-tests: the nvcc test programs are built by `make` too (nvcc
# from NVCC, else the --with-cuda toolkit, else PATH); the suite finds them
# in tests/gpu of the build tree.  No GPU is needed to build them.
if GPU_TESTS
GPU_TEST_BINS = tests/gpu/cmg_alloc_static tests/gpu/cmg_alloc_shared
noinst_DATA = $(GPU_TEST_BINS)
CLEANFILES += $(GPU_TEST_BINS)

tests/gpu/cmg_alloc_static: $(srcdir)/tests/gpu/cmg_alloc.cu $(srcdir)/tests/gpu/build.sh
	$(AM_V_GEN)cuda=`echo '$(CUDA_CPPFLAGS)' | $(SED) -n 's|^ *-I\(.*\)/include *$$|\1|p'`; \
	if test -z "$(NVCC)" && test -x "$$cuda/bin/nvcc"; then NVCC="$$cuda/bin/nvcc"; \
	else NVCC="$(NVCC)"; fi; export NVCC; \
	$(SHELL) $(srcdir)/tests/gpu/build.sh $(srcdir)/tests/gpu tests/gpu
tests/gpu/cmg_alloc_shared: tests/gpu/cmg_alloc_static
endif
