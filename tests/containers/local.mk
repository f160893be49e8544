# Containers for real: the spec's mounts, the portable folder's glibc floor
# and dependencies, and Podman with runc running programs of two root
# filesystems under the spec `cumemguard cdi` writes (README, "In
# containers").  The last two need root, the last Podman; each says so in
# one line and skips without.
CONTAINER_TESTS = \
	tests/containers/t-cdi-folder.sh \
	tests/containers/t-portable.sh \
	tests/containers/t-podman.sh
SYSTEM_TESTS += $(CONTAINER_TESTS)
EXTRA_DIST += $(CONTAINER_TESTS) tests/containers/defs.sh
AM_TESTS_ENVIRONMENT += PORTABLE_CACHE='$(PORTABLE_CACHE)'; export PORTABLE_CACHE;
# The tree distcheck builds uses this tree's Debian 11 root.
AM_DISTCHECK_CONFIGURE_FLAGS += PORTABLE_CACHE='$(PORTABLE_CACHE)'
clean-portable: clean-portable-tests
clean-portable-tests:
	-rm -rf portable-sim portable.lock
.PHONY: clean-portable-tests
