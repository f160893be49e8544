# cumemguard, the launcher: turns its flags into CUMEMGUARD_OPTIONS, puts
# the library in LD_PRELOAD and runs the program; `cumemguard status` shows
# the groups.
bin_PROGRAMS += cumemguard
cumemguard_SOURCES = \
	src/launcher/main.c \
	src/launcher/cdi.c src/launcher/cdi.h \
	src/launcher/library.c src/launcher/library.h \
	src/launcher/status.c src/launcher/status.h
cumemguard_LDADD = libcmg_ops.la libcmg_core.la
cumemguard_CPPFLAGS = $(AM_CPPFLAGS) -DCMG_LIBDIR='"$(libdir)"'
