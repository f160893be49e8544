# spank_cumemguard.so, the Slurm SPANK plugin (src/slurm/), built when
# configure finds <slurm/spank.h>; its man page; its tests.
if HAVE_SLURM
slurmplugindir = $(slurm_plugindir)
slurmplugin_LTLIBRARIES = src/slurm/spank_cumemguard.la
man8_MANS = man/spank_cumemguard.8
# Slurm's plugin directory holds plugins only, not libtool archives;
# without its archive, libtool's uninstall cannot name the plugin.
install-data-hook:
	rm -f $(DESTDIR)$(slurmplugindir)/spank_cumemguard.la
uninstall-hook:
	rm -f $(DESTDIR)$(slurmplugindir)/spank_cumemguard.so
endif
src_slurm_spank_cumemguard_la_SOURCES = src/slurm/spank_cumemguard.c
src_slurm_spank_cumemguard_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS) \
	-DCMG_LIBDIR='"$(libdir)"'
# Slurm finds the plugin by its symbols: default visibility, unlike the
# rest (the core it links keeps its own symbols hidden).
src_slurm_spank_cumemguard_la_CFLAGS = $(AM_CFLAGS) -fvisibility=default
# The core gives cmg__size_parse, cmg__config_parse and the group
# segment's checks, so the plugin reads options as the library does.
src_slurm_spank_cumemguard_la_LIBADD = libcmg_ops.la libcmg_core.la
src_slurm_spank_cumemguard_la_LDFLAGS = -module -avoid-version -shared
EXTRA_DIST += man/spank_cumemguard.8

# distcheck installs under its own prefix, never into Slurm's directory.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-slurm-plugindir='$${libdir}/slurm'

# t-status needs no Slurm: the status view of a group named as the plugin
# names it.  t-slurm starts a one-node Slurm and runs jobs through the
# plugin; it is listed whether or not the plugin was built, and says why
# it skips (no plugin, not root, no Slurm packages), so that a build
# without Slurm shows the gap instead of hiding it.
TESTS += tests/slurm/t-status.sh
SYSTEM_TESTS += tests/slurm/t-slurm.sh
EXTRA_DIST += tests/slurm/t-status.sh tests/slurm/t-slurm.sh
