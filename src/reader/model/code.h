/*
 * code.c: whose code a frame is, the user's or a library's, so that each
 * stack can be read from the user's own line first: Python files under
 * site-packages or dist-packages or in the interpreter's standard library,
 * and native code in the C and C++ runtimes, the CUDA libraries, the
 * frameworks' shared objects and whatever was installed as a package, are
 * libraries'; the interpreter's own frames are a class of their own;
 * everything else is the user's.  --user GLOB and --library GLOB add rules
 * of the user's, which come first.
 */
#ifndef CMG_READER_MODEL_CODE_H
#define CMG_READER_MODEL_CODE_H

#include <stdbool.h>

enum cmg__code {
  CMG__CODE_USER,
  CMG__CODE_LIBRARY,
  CMG__CODE_INTERP, /* the Python interpreter (python3.12, libpython) */
};

/* Adds a rule: a module or Python file whose path matches glob (fnmatch,
 * '*' also matching '/') is the user's code, or a library's.  The rules
 * are tried in the order given, before the built-in ones.  Returns 0 or
 * -ENOMEM. */
int cmg__code_rule(const char *glob, bool user);

/* Whose code a native frame of module path (NULL when unknown) is, or a
 * Python frame's of source file (NULL when unknown). */
enum cmg__code cmg__code_of(const char *path, bool python);

/* A Python file's path as a person names it: from the package down for a
 * library's ("torch/nn/modules/linear.py"), else its base name. */
const char *cmg__code_short_path(const char *file);

void cmg__code_end(void);

#endif /* CMG_READER_MODEL_CODE_H */
