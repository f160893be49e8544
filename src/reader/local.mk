# cumemguard-report: reads, explains, compares and draws the JSON reports
# (src/reader/, a header beside each file); its tests (tests/reader/), and
# check-tool-asan, which runs them against a build of the tool with
# AddressSanitizer and UBSan.
bin_PROGRAMS += cumemguard-report
# Its modules below the commands (load, model, show, run), which the
# reader's unit tests link too (tests/unit/local.mk), and its commands.
TOOL_MODULES_C = \
	src/reader/load/fields.c \
	src/reader/load/jsonfile.c \
	src/reader/load/read.c \
	src/reader/load/read_devices.c \
	src/reader/load/read_series.c \
	src/reader/load/read_stacks.c \
	src/reader/load/utf8_text.c \
	src/reader/model/code.c \
	src/reader/model/debuginfo.c \
	src/reader/model/delta.c \
	src/reader/model/frame_class.c \
	src/reader/model/index.c \
	src/reader/model/intern.c \
	src/reader/model/leak_class.c \
	src/reader/model/names.c \
	src/reader/model/pool_blocks.c \
	src/reader/model/supp.c \
	src/reader/model/symbolize.c \
	src/reader/model/user_first.c \
	src/reader/model/view.c \
	src/reader/show/diff_json.c \
	src/reader/show/diff_text.c \
	src/reader/show/frame_name.c \
	src/reader/show/group_text.c \
	src/reader/show/json_once.c \
	src/reader/show/one_line.c \
	src/reader/show/output.c \
	src/reader/show/summary_devices.c \
	src/reader/show/summary_held.c \
	src/reader/show/summary_json.c \
	src/reader/show/summary_text.c \
	src/reader/show/xml.c \
	src/reader/run/run.c
TOOL_C = $(TOOL_MODULES_C) \
	src/reader/main.c \
	src/reader/cmd/check.c \
	src/reader/cmd/diff.c \
	src/reader/cmd/flame.c \
	src/reader/cmd/html.c \
	src/reader/cmd/plot.c \
	src/reader/cmd/pprof.c \
	src/reader/cmd/summary.c \
	src/reader/cmd/timeline_trace.c
TOOL_H = \
	src/reader/tool.h \
	src/reader/load/fields.h \
	src/reader/load/jsonfile.h \
	src/reader/load/model.h \
	src/reader/load/read.h \
	src/reader/load/read_devices.h \
	src/reader/load/read_series.h \
	src/reader/load/read_stacks.h \
	src/reader/load/utf8_text.h \
	src/reader/model/code.h \
	src/reader/model/debuginfo.h \
	src/reader/model/delta.h \
	src/reader/model/frame_class.h \
	src/reader/model/index.h \
	src/reader/model/intern.h \
	src/reader/model/leak_class.h \
	src/reader/model/names.h \
	src/reader/model/pool_blocks.h \
	src/reader/model/supp.h \
	src/reader/model/symbolize.h \
	src/reader/model/user_first.h \
	src/reader/model/view.h \
	src/reader/show/diff_json.h \
	src/reader/show/diff_text.h \
	src/reader/show/frame_name.h \
	src/reader/show/group_text.h \
	src/reader/show/json_once.h \
	src/reader/show/one_line.h \
	src/reader/show/output.h \
	src/reader/show/summary_devices.h \
	src/reader/show/summary_held.h \
	src/reader/show/summary_json.h \
	src/reader/show/summary_text.h \
	src/reader/show/xml.h \
	src/reader/run/run.h \
	src/reader/cmd/check.h \
	src/reader/cmd/diff.h \
	src/reader/cmd/flame.h \
	src/reader/cmd/html.h \
	src/reader/cmd/plot.h \
	src/reader/cmd/pprof.h \
	src/reader/cmd/summary.h \
	src/reader/cmd/timeline_trace.h
cumemguard_report_SOURCES = $(TOOL_H) $(TOOL_C)
# pprof's protocol buffer code, generated from profile.proto in the build
# tree (so a read-only source tree, as in distcheck, builds too).
PROFILE_PB = src/reader/profile.pb-c.c src/reader/profile.pb-c.h
nodist_cumemguard_report_SOURCES = $(PROFILE_PB) src/reader/page_html.h
BUILT_SOURCES = $(PROFILE_PB) src/reader/page_html.h
# BUILT_SOURCES makes them for all and check; these, for a build of the
# tool alone (make cumemguard-report), where no dependency is known yet.
src/reader/cmd/cumemguard_report-html.$(OBJEXT): src/reader/page_html.h
src/reader/cmd/cumemguard_report-pprof.$(OBJEXT): src/reader/profile.pb-c.h
CLEANFILES += $(PROFILE_PB) src/reader/page_html.h
# The html command's page, carried in the tool as C strings: page.html is
# its markup, and includes its style (page.css) and its script: the data
# and how the page words it (page-data.js); the tooltip, the header, the
# moments and the table of what was live (page-live.js); memory over time,
# the flame graph, the denials, the comparison and the start (page-draw.js).
PAGE_FILES = src/reader/page.html src/reader/page.css \
	src/reader/page-data.js src/reader/page-live.js src/reader/page-draw.js
EXTRA_DIST += src/reader/profile.proto $(PAGE_FILES) src/reader/embed.awk
src/reader/page_html.h: $(srcdir)/src/reader/page.html \
	$(srcdir)/src/reader/page.css $(srcdir)/src/reader/page-data.js \
	$(srcdir)/src/reader/page-live.js $(srcdir)/src/reader/page-draw.js \
	$(srcdir)/src/reader/embed.awk
	@$(MKDIR_P) src/reader
	$(AM_V_GEN)$(AWK) -f $(srcdir)/src/reader/embed.awk \
	  $(srcdir)/src/reader/page.html >$@.tmp && mv -f $@.tmp $@
src/reader/profile.pb-c.c: $(srcdir)/src/reader/profile.proto
	@$(MKDIR_P) src/reader
	$(AM_V_GEN)$(PROTOC_C) --proto_path=$(srcdir)/src/reader \
	  --c_out=src/reader $(srcdir)/src/reader/profile.proto
src/reader/profile.pb-c.h: src/reader/profile.pb-c.c
	@test -f $@ || { rm -f src/reader/profile.pb-c.c; \
	  $(MAKE) $(AM_MAKEFLAGS) src/reader/profile.pb-c.c; }
cumemguard_report_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/src
cumemguard_report_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(PROTOBUF_C_CFLAGS) \
	$(ZLIB_CFLAGS) $(DW_CFLAGS)
# The core gives cmg__size_parse (--min-bytes, --max-leak) and
# cmg__format_size, so sizes read and print as the launcher's do, and the
# JSON writer (core/jsonw.c) that writes the timeline's trace.
cumemguard_report_LDADD = libcmg_core.la $(CJSON_LIBS) $(PROTOBUF_C_LIBS) \
	$(ZLIB_LIBS) $(DW_LIBS) $(IBERTY_LIBS) -lm

# A C++ program for the symbolization tests: a template in a namespace, an
# inlined function and a lambda, built with -g and without -rdynamic, so
# that only .symtab and DWARF name them; and the same program stripped.
check_PROGRAMS += tests/reader/prog/symprog
tests_reader_prog_symprog_SOURCES = tests/reader/prog/symprog.cc
# Calls stay calls under the default -O2 (no sibling calls; the functions
# that must be frames are marked noinline in the source).
tests_reader_prog_symprog_CXXFLAGS = -g -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls
tests_reader_prog_symprog_LDFLAGS = -no-install
tests_reader_prog_symprog_LDADD = tests/sim/libcudart.la

# A native extension with a deep call path to the CUDA runtime, for the
# Python program of t-deep-stacks.sh to load from its site-packages.
check_LTLIBRARIES += tests/reader/prog/libdeepnat.la
tests_reader_prog_libdeepnat_la_SOURCES = tests/reader/prog/deepnat.c
tests_reader_prog_libdeepnat_la_CFLAGS = -g -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls
tests_reader_prog_libdeepnat_la_LDFLAGS = -module -avoid-version \
	-rpath /nowhere
tests_reader_prog_libdeepnat_la_LIBADD = tests/sim/libcudart.la

TOOL_TESTS = \
	tests/reader/t-summary.sh \
	tests/reader/t-diff.sh \
	tests/reader/t-merge.sh \
	tests/reader/t-flame.sh \
	tests/reader/t-check.sh \
	tests/reader/t-suppress.sh \
	tests/reader/t-pools.sh \
	tests/reader/t-broken.sh \
	tests/reader/t-timeline.sh \
	tests/reader/t-pprof.sh \
	tests/reader/t-plot.sh \
	tests/reader/t-python.sh \
	tests/reader/t-gpu-reports.sh \
	tests/reader/t-symbols.sh \
	tests/reader/t-user-first.sh \
	tests/reader/t-native-ext.sh \
	tests/reader/t-deep-stacks.sh \
	tests/reader/t-html-data.sh \
	tests/reader/t-scale.sh \
	tests/reader/t-limits.sh
TESTS += $(TOOL_TESTS)
EXTRA_DIST += $(TOOL_TESTS) \
	tests/reader/defs.sh \
	tests/reader/normalize.py \
	tests/reader/make-fixtures.py \
	tests/reader/make-large.py \
	tests/reader/data \
	tests/reader/golden \
	tests/reader/broken

# The tool and the core files it uses, built with AddressSanitizer and
# UBSan (cJSON's arena is off under ASan, so every node is its own block),
# then every tool test run against that build: the broken-input corpus,
# truncated reports, and the good ones, with leak checking on.
TOOL_ASAN = tests/reader/cumemguard-report-asan
TOOL_ASAN_FLAGS = -std=gnu11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
check-tool-asan: all $(check_LTLIBRARIES) $(check_LIBRARIES) $(check_PROGRAMS)
	@$(MKDIR_P) tests/reader
	$(AM_V_CC)$(CC) $(TOOL_ASAN_FLAGS) $(DEFS) -I$(top_builddir) \
	  -I$(top_builddir)/src $(AM_CPPFLAGS) $(CPPFLAGS) $(CJSON_CFLAGS) \
	  $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) $(DW_CFLAGS) -o $(TOOL_ASAN) \
	  `for f in $(TOOL_C) src/core/args.c src/core/jsonw.c src/core/log.c \
	    src/core/pools.c src/core/size.c src/core/utf8.c; do \
	    echo $(srcdir)/$$f; done` \
	  src/reader/profile.pb-c.c $(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) \
	  $(DW_LIBS) $(IBERTY_LIBS) -lm
	CMG_TOOL="$(abs_builddir)/$(TOOL_ASAN)" \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(MAKE) $(AM_MAKEFLAGS) check TESTS='$(TOOL_TESTS)'
.PHONY: check-tool-asan
CLEANFILES += $(TOOL_ASAN)

# The example of docs/reading-reports.md: the demo's report summarized,
# and drawn.
demo-report: demo cumemguard-report
	./cumemguard-report demo.json
	./cumemguard-report flame demo.json -o demo.svg
	./cumemguard-report plot demo.json -o demo-memory.svg
	./cumemguard-report html demo.json -o demo.html
	@echo 'demo.svg: the flame graph of demo.json; demo-memory.svg: its memory over time; demo.html: all of it on one page'
.PHONY: demo-report
