# What the programs that start and watch guarded jobs share, and the
# library does not: the operator's status view (text, JSON, Prometheus),
# the finding of segments and the library's place in LD_PRELOAD.  Linked
# into the launcher and the Slurm plugin only, as jemalloc keeps jeprof out
# of the library it profiles.
noinst_LTLIBRARIES += libcmg_ops.la
libcmg_ops_la_SOURCES = \
	src/ops/cdi_spec.c src/ops/cdi_spec.h \
	src/ops/files.c src/ops/files.h \
	src/ops/group_status.c src/ops/group_status.h \
	src/ops/group_status_json.c src/ops/group_status_text.c \
	src/ops/group_view.h \
	src/ops/metrics.c src/ops/metrics.h \
	src/ops/preload_env.c src/ops/preload_env.h \
	src/ops/seg_find.c src/ops/seg_find.h
libcmg_ops_la_CFLAGS = $(AM_CFLAGS)
