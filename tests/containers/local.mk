# Containers for real: the spec's mounts, the portable folder's glibc floor
# and dependencies, and Podman with runc running programs of two root
# filesystems under the spec `cumemguard cdi` writes (docs/containers.md).
# The last two need root, the last Podman; each says so in one line and
# skips without.
CONTAINER_TESTS = \
	tests/containers/t-cdi-folder.sh \
	tests/containers/t-portable.sh \
	tests/containers/t-podman.sh
SYSTEM_TESTS += $(CONTAINER_TESTS)
EXTRA_DIST += $(CONTAINER_TESTS) tests/containers/defs.sh
AM_TESTS_ENVIRONMENT += PORTABLE_CACHE='$(PORTABLE_CACHE)'; export PORTABLE_CACHE;
# The tree distcheck builds uses this tree's Debian 11 root, and runs the
# container tests too where Podman is, so that a tarball that lacks a
# file they read fails there.
AM_DISTCHECK_CONFIGURE_FLAGS += PORTABLE_CACHE='$(PORTABLE_CACHE)' \
	CHECK_CONTAINERS=1
check-local: check-containers-too
# After the other tests, which must not share the machine with containers.
check-containers-too: check-TESTS
	@if test '$(CHECK_CONTAINERS)' != 1; then :; \
	elif command -v podman >/dev/null 2>&1; then \
	  $(MAKE) $(AM_MAKEFLAGS) check-TESTS TEST_SUITE_LOG=test-suite-containers.log \
	    TESTS='$(CONTAINER_TESTS) $(K8S_SYSTEM_TESTS)'; \
	else \
	  echo "check: the container tests are left out: podman is not installed"; \
	fi
.PHONY: check-containers-too
CLEANFILES += test-suite-containers.log \
	$(CONTAINER_TESTS:.sh=.log) $(CONTAINER_TESTS:.sh=.trs) \
	$(K8S_SYSTEM_TESTS:.sh=.log) $(K8S_SYSTEM_TESTS:.sh=.trs)
clean-portable: clean-portable-tests
clean-portable-tests:
	-rm -rf portable-sim portable.lock
.PHONY: clean-portable-tests
