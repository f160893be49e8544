# The core: what at least two programs share (the options, sizes, the log,
# the frameworks' pool switches, the group segment's layout and checks,
# signal names, the JSON writer of the report, the CDI spec and the status
# view).  No CUDA, no preload tricks, no libunwind, no cJSON, and
# no call to anything outside src/core/; linked into the preload library,
# the launcher, the report reader, the Slurm plugin and every unit test.
noinst_LTLIBRARIES += libcmg_core.la
libcmg_core_la_SOURCES = \
	src/core/args.c src/core/args.h \
	src/core/base.h \
	src/core/conf.c src/core/conf.h \
	src/core/conf_merge.c src/core/conf_merge.h \
	src/core/conf_report.c src/core/conf_report.h \
	src/core/conf_gpu.c src/core/conf_gpu.h \
	src/core/conf_table.c src/core/conf_table.h \
	src/core/jsonw.c src/core/jsonw.h \
	src/core/log.c src/core/log.h \
	src/core/nvml_abi.h \
	src/core/pools.c src/core/pools.h \
	src/core/segment.c src/core/segment.h \
	src/core/signals.c src/core/signals.h \
	src/core/size.c src/core/size.h \
	src/core/utf8.c src/core/utf8.h
libcmg_core_la_CFLAGS = $(AM_CFLAGS) $(LTO_CFLAGS)
