/*
 * frames.c again, built without frame pointers: the call chain of a program
 * built with the compiler's default flags, for the stack-mode rows (the
 * rest of the benchmark keeps frame pointers, bench/local.mk).  Its
 * functions get names of their own.
 */
#pragma GCC optimize("omit-frame-pointer")

#define cmgb_at_depth cmgb_at_depth_nofp
#define cmgb_at_tree cmgb_at_tree_nofp
#define cmgb_empty_alloc cmgb_empty_alloc_nofp
#define cmgb_empty_free cmgb_empty_free_nofp
#include "frames.c"
