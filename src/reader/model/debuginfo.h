/*
 * debuginfo.c: a module's separate debug file, found where libdwfl
 * documents that it looks on this machine, and over the network only when
 * DEBUGINFOD_URLS asks for it.
 */
#ifndef CMG_READER_MODEL_DEBUGINFO_H
#define CMG_READER_MODEL_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/* libdwfl's find_debuginfo callback, with its debuginfo_path (path, NULL:
 * elfutils' own ":.debug:/usr/lib/debug").  Without DEBUGINFOD_URLS it
 * looks by build-id under each absolute directory, then by the module's
 * .gnu_debuglink name beside it, in each relative directory and under
 * each absolute one; with it, as dwfl_standard_find_debuginfo does, which
 * then asks debuginfod.  Returns an open descriptor and sets *found, or -1.
 */
int cmg__debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
                        Dwarf_Addr base, const char *file_name,
                        const char *debuglink, GElf_Word crc, char **found,
                        const char *path);

/* Whether DEBUGINFOD_URLS names a server: the reader then fetches from it
 * the debug files this machine lacks. */
_Bool cmg__debuginfo_network(void);

#endif /* CMG_READER_MODEL_DEBUGINFO_H */
