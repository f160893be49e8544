# Integration tests: programs on the simulated CUDA, through the launcher.
INTEGRATION_LONG = tests/integration/t-report-property.sh
INTEGRATION_SHORT = \
	tests/integration/t-launcher.sh \
	tests/integration/t-paths.sh \
	tests/integration/t-getproc.sh \
	tests/integration/t-limits.sh \
	tests/integration/t-config.sh \
	tests/integration/t-threads.sh \
	tests/integration/t-thread-names.sh \
	tests/integration/t-fork.sh \
	tests/integration/t-install.sh \
	tests/integration/t-install-deps.sh \
	tests/integration/t-rtld-next.sh \
	tests/integration/t-report.sh \
	tests/integration/t-hook-frames.sh \
	tests/integration/t-stack-mode.sh \
	tests/integration/t-report-process.sh \
	tests/integration/t-report-large.sh \
	tests/integration/t-growth.sh \
	tests/integration/t-no-pools.sh \
	tests/integration/t-coverage.sh \
	tests/integration/t-group.sh \
	tests/integration/t-status.sh \
	tests/integration/t-group-safety.sh \
	tests/integration/t-meminfo.sh \
	tests/integration/t-cdi.sh \
	tests/integration/t-metrics.sh \
	tests/integration/t-python-frames.sh \
	tests/integration/t-python-names.sh \
	tests/integration/t-python-memo.sh \
	tests/integration/t-deaths.sh \
	tests/integration/t-graphs.sh \
	tests/integration/t-footprint.sh \
	tests/integration/t-context-cap.sh \
	tests/integration/t-gpu-keys.sh \
	tests/integration/t-hami.sh \
	tests/integration/t-options-doc.sh \
	tests/integration/t-serving.sh
INTEGRATION_TESTS = $(INTEGRATION_LONG) $(INTEGRATION_SHORT)
TESTS += $(INTEGRATION_SHORT)
EXTRA_DIST += $(INTEGRATION_TESTS)
EXTRA_DIST += tests/integration/pyframes.py tests/integration/pychurn.py \
	tests/integration/pynames.py tests/integration/pymemo.py \
	tests/integration/reportprop.py \
	tests/integration/waitstatus.py
# t-python-frames.sh's two native paths under the same Python frames.
check_LTLIBRARIES += tests/integration/libcmgtpaths.la
tests_integration_libcmgtpaths_la_SOURCES = tests/integration/twopaths.c
tests_integration_libcmgtpaths_la_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
tests_integration_libcmgtpaths_la_LDFLAGS = -module -avoid-version -rpath /nowhere
# t-cdi.sh builds the CDI reference library's checker; Go's build cache
# is kept in the build tree between runs.
EXTRA_DIST += tests/cdi/cdicheck.go
clean-local: clean-cdi-go
clean-cdi-go:
	-chmod -R u+w tests/cdi/go-cache 2>/dev/null; rm -rf tests/cdi/go-cache
.PHONY: clean-cdi-go
