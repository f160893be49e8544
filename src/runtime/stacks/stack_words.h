/*
 * What a word of a captured stack is: a native return address, a Python
 * frame (the site id of pyline.h under CMG__PY_TAG), or a cut: frames the
 * capture left out at that place, and how many.  No user-space return
 * address has either of the top two bits set.
 */
#ifndef CMG_RUNTIME_STACKS_STACK_WORDS_H
#define CMG_RUNTIME_STACKS_STACK_WORDS_H

#include <stdbool.h>
#include <stdint.h>

#define CMG__PY_TAG ((uintptr_t)1 << 63)
#define CMG__CUT_TAG ((uintptr_t)1 << 62)
/* Set in a cut of Python frames; clear in one of native frames. */
#define CMG__CUT_PYTHON ((uintptr_t)1 << 61)
/* The count of a cut whose end the capture did not reach. */
#define CMG__CUT_UNKNOWN 0xffffffffu

static inline bool
cmg__py_is_frame(uintptr_t word)
{
  return (word & CMG__PY_TAG) != 0;
}

static inline uint32_t
cmg__py_frame_site(uintptr_t word)
{
  return (uint32_t)(word & ~CMG__PY_TAG);
}

static inline uintptr_t
cmg__cut_word(bool python, uint64_t frames)
{
  uint32_t n = frames < CMG__CUT_UNKNOWN ? (uint32_t)frames : CMG__CUT_UNKNOWN;
  return CMG__CUT_TAG | (python ? CMG__CUT_PYTHON : 0) | n;
}

static inline bool
cmg__is_cut(uintptr_t word)
{
  return (word & (CMG__PY_TAG | CMG__CUT_TAG)) == CMG__CUT_TAG;
}

static inline bool
cmg__cut_is_python(uintptr_t word)
{
  return (word & CMG__CUT_PYTHON) != 0;
}

static inline uint32_t
cmg__cut_frames(uintptr_t word)
{
  return (uint32_t)word;
}

#endif /* CMG_RUNTIME_STACKS_STACK_WORDS_H */
