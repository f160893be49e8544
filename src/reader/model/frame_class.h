/*
 * frame_class.c: which frames are the CUDA libraries' and which the C
 * start-up code's, and the runtime entry a stack says the program called.
 */
#ifndef CMG_READER_MODEL_FRAME_CLASS_H
#define CMG_READER_MODEL_FRAME_CLASS_H

#include <stdint.h>

struct cmg__index;

/* Frame classes, for hiding frames that say nothing about the program. */
#define CMG__FRAME_CLASS_CUDA 1u    /* inside the CUDA runtime or driver */
#define CMG__FRAME_CLASS_STARTUP 2u /* C start-up and thread start */

/* The classes of a native frame of module (its base name, NULL when
 * unknown) and function (NULL when unknown): a mask of the above. */
unsigned cmg__frame_class_of(const char *module, const char *fn);

/* The API a group's stack says the program called: the runtime entry
 * (cudaMalloc) of a statically linked runtime, whose driver call (api,
 * cuMemAlloc_v2) is what the library saw, or api itself. */
const char *cmg__frame_class_runtime_entry(const struct cmg__index *ix,
                                           uint32_t stack, const char *api);

#endif /* CMG_READER_MODEL_FRAME_CLASS_H */
