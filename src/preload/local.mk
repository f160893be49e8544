# The preload library: once-init, the real functions, the accounting every
# wrapper shares, the reports' timing, and hooks/, one file per CUDA API
# family plus the resolvers that hand the wrappers out.
lib_LTLIBRARIES += libcumemguard.la
libcumemguard_la_SOURCES = \
	src/preload/account.c src/preload/account.h \
	src/preload/api.c \
	src/preload/context.c src/preload/context.h \
	src/preload/death.c src/preload/death.h \
	src/preload/device.c src/preload/device.h \
	src/preload/defer.c src/preload/defer.h \
	src/preload/dump.c src/preload/dump.h \
	src/preload/fn.h \
	src/preload/footprint.c src/preload/footprint.h \
	src/preload/forklock.c src/preload/forklock.h \
	src/preload/graph.c src/preload/graph.h \
	src/preload/hami.c src/preload/hami.h \
	src/preload/nvml_usage.c src/preload/nvml_usage.h \
	src/preload/real.c src/preload/real.h \
	src/preload/start.c src/preload/start.h \
	src/preload/state.c src/preload/state.h \
	src/preload/hooks/hooks.def \
	src/preload/hooks/hooks.h \
	src/preload/hooks/nvml_abi.h \
	src/preload/hooks/array.c \
	src/preload/hooks/context_api.c \
	src/preload/hooks/driver.c \
	src/preload/hooks/graph_api.c \
	src/preload/hooks/host.c \
	src/preload/hooks/nvml.c \
	src/preload/hooks/pipe.c \
	src/preload/hooks/pool.c \
	src/preload/hooks/resolvers.c \
	src/preload/hooks/runtime.c \
	src/preload/hooks/signal.c \
	src/preload/hooks/vmm.c
# Frame pointers: the wrappers stand between capture and the program's
# frames, and capture's fast walk goes through them (runtime/stacks/unwind.c).
libcumemguard_la_CFLAGS = $(AM_CFLAGS) $(LTO_CFLAGS) -fno-omit-frame-pointer
libcumemguard_la_LIBADD = libcmg_runtime.la
libcumemguard_la_LDFLAGS = -avoid-version -shared $(LTO_CFLAGS) \
	-Wl,--version-script=$(builddir)/src/preload/export.map \
	-Wl,-Bsymbolic-functions -Wl,-z,nodelete
EXTRA_libcumemguard_la_DEPENDENCIES = src/preload/export.map

# The version script is made from hooks.def, so the exports and the
# wrappers cannot drift apart.
src/preload/export.map: $(srcdir)/src/preload/export.map.in \
		$(srcdir)/src/preload/hooks/hooks.def
	$(AM_V_GEN)$(MKDIR_P) src/preload && \
	$(CPP) -P -x c -I$(srcdir)/src $(srcdir)/src/preload/export.map.in | \
	$(SED) -e '/^[[:space:]]*$$/d' > $@.tmp && mv $@.tmp $@
EXTRA_DIST += src/preload/export.map.in
CLEANFILES += src/preload/export.map
