/*
 * symbolize.c: a report's native frames named from the files on this
 * machine, when they are the files the process ran (the same build-id):
 * functions from the symbol tables (.symtab as well as .dynsym),
 * demangled, and source file, line and inlined calls from DWARF.
 */
#ifndef CMG_READER_MODEL_SYMBOLIZE_H
#define CMG_READER_MODEL_SYMBOLIZE_H

struct cmg__model_report;

/* Names what it can of r's native frames, in place: each frame's function
 * (the full demangled name) and short name (without parameters), source
 * file and line, and before it the frames of the functions inlined there
 * (stacks grow by them).  Each module gets a note when its frames could
 * not be named (not on this machine, another build-id).  A module file is
 * opened and each distinct address looked up once per process, whatever
 * the number of reports.  Returns 0 or -ENOMEM. */
int cmg__symbolize_report(struct cmg__model_report *r);

/* Leaves every report's names as the report gave them
 * (--no-symbolize). */
void cmg__symbolize_off(void);

/* Where separate debug files are looked for, as elfutils' --debuginfo-path
 * reads it (CUMEMGUARD_DEBUGINFO_PATH); NULL keeps elfutils' default.  The
 * string must outlive the reading. */
void cmg__symbolize_debuginfo_path(const char *path);

/* Closes the module files and frees what cmg__symbolize_report cached. */
void cmg__symbolize_end(void);

#endif /* CMG_READER_MODEL_SYMBOLIZE_H */
