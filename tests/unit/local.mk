# Unit tests: link the core, call cmg__ functions directly, no preload.
UNIT_TESTS = \
	tests/unit/test_config \
	tests/unit/test_group \
	tests/unit/test_jsonw \
	tests/unit/test_ledger \
	tests/unit/test_policy \
	tests/unit/test_stacks \
	tests/unit/test_tally \
	tests/unit/test_timeline
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
tests_unit_test_config_LDADD = $(UNIT_LDADD)
tests_unit_test_group_LDADD = $(UNIT_LDADD)
tests_unit_test_jsonw_LDADD = $(UNIT_LDADD)
tests_unit_test_ledger_LDADD = $(UNIT_LDADD)
tests_unit_test_policy_LDADD = $(UNIT_LDADD)
tests_unit_test_stacks_LDADD = $(UNIT_LDADD)
tests_unit_test_tally_LDADD = $(UNIT_LDADD)
tests_unit_test_timeline_LDADD = $(UNIT_LDADD)
tests_unit_test_stacks_LDFLAGS = -rdynamic
