# Integration tests: programs on the simulated CUDA, through the launcher.
INTEGRATION_TESTS = \
	tests/integration/t-launcher.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS)
