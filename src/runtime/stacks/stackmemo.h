/*
 * The outer part of a thread's stack, remembered from its last walk, so
 * that a walk that meets it again need not step through it frame by frame
 * (stackmemo.c); and beside it the thread's last Python frames, which
 * pyframes.c keeps and checks.
 */
#ifndef CMG_RUNTIME_STACKS_STACKMEMO_H
#define CMG_RUNTIME_STACKS_STACKMEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/python/pyline.h"

/* Frames a memo holds: capture's most (stacks.c) and a few more. */
#define CMG__MEMO_MAX 272

/* One frame of a walk: its state before the step outward (return
 * address, stack pointer, rbp) and the two words the step read to find
 * the next frame's (a2 = a1 when it read one; none for the last frame). */
struct cmg__memo_frame {
  uintptr_t ra, sp, rbp;
  uintptr_t a1, v1, a2, v2;
};

/* The words a remembered step read, and where. */
struct cmg__memo_reads {
  uintptr_t a1, v1, a2, v2;
};

/* Python frames a memo holds: pyframes.c's most. */
#define CMG__MEMO_PY_MAX 128

/* One Python frame of the thread's last walk (pyframes.c), by its place
 * counted from the outermost: its instruction, its owner and entry bytes
 * (flags, 0 for an entry that cannot be checked), what its site was named
 * from, and the site.  Proven: the walk (cmg__memo.walks) that last found
 * the fields of where's code object as where has them; gen changes with
 * where.  Share: an entry inward (or this one) whose where had the same
 * code object's fields when its gen was share_gen: while that holds, its
 * proof is this one's too. */
struct cmg__memo_py {
  uintptr_t instr;
  uint32_t flags, site;
  struct cmg__py_where where;
  uint64_t proven;
  const struct cmg__memo_py *share;
  uint32_t gen, share_gen;
};

/* What the thread's last capture spliced (pyframes.c): its native words,
 * its Python words and where their groups end, whether anything was cut,
 * and the stack the splice was interned as (0 while not known); walked,
 * when not 0, is 1 + the frames of the walk that gave those groups, each
 * of which the memo's py[] records at its place. */
struct cmg__memo_splice {
  uint32_t id;
  unsigned native_n, py_groups, walked;
  bool cut;
  uintptr_t native[CMG__MEMO_MAX];
  uintptr_t py[CMG__MEMO_PY_MAX + 1];
  unsigned ends[CMG__MEMO_PY_MAX + 1];
};

struct cmg__memo {
  struct cmg__memo *next; /* every memo ever made, for a new thread */
  _Atomic bool taken;
  bool busy; /* a walk of this thread uses it: a signal's walk may not */
  _Atomic uint64_t recalls; /* walks that recalled their outer part */
  unsigned n;     /* frames remembered, [0] the outermost, at the stack's end */
  uint64_t walks; /* Python walks that used py[], each numbered anew */
  /* Apart, so that a recall reads the return addresses and the words to
   * check in two runs of memory.  The return addresses run the other way,
   * outermost last (cmg__memo_ra): a capture lists frames innermost first,
   * and a recall then copies them in one run. */
  uintptr_t ra_out[CMG__MEMO_MAX], sp[CMG__MEMO_MAX], rbp[CMG__MEMO_MAX];
  struct cmg__memo_reads reads[CMG__MEMO_MAX];
  /* The walk under way, innermost first. */
  struct cmg__memo_frame walk[CMG__MEMO_MAX];
  struct cmg__memo_py py[CMG__MEMO_PY_MAX];
  struct cmg__memo_splice splice;
};

/* The return address of remembered frame i, [0] the outermost. */
static inline uintptr_t
cmg__memo_ra(const struct cmg__memo *m, unsigned i)
{
  return m->ra_out[CMG__MEMO_MAX - 1 - i];
}

/* The calling thread's memo, marked busy; NULL when it has none (no
 * memory, a thread exiting) or another walk of the thread is using it. */
struct cmg__memo *cmg__memo_enter(void);

static inline void
cmg__memo_leave(struct cmg__memo *m)
{
  if (m != NULL)
    m->busy = false;
}

/* A walk now at state (ra, sp, rbp) with k frames in ips, the last being
 * ra, whose remembered frame j has that state: when every word the
 * remembered steps outward of j read still holds, the walk from here would
 * give frames j..0: they go into ips[k - 1..], the memo takes the k - 1
 * frames walked before as its inner part, and the new count of frames in
 * ips is returned.  Else 0, the memo left as it was, and *at the
 * outermost frame whose state still holds (the first whose words differ;
 * j when none was checked). */
int cmg__memo_recall(struct cmg__memo *m, unsigned j, uintptr_t *ips, int k,
                     int max, unsigned *at);

/* After a recall that stopped at frame at: frames j..at into ips[k - 1..];
 * the walk goes on from frame at's state.  Returns the new count of
 * frames in ips, the last being frame at. */
int cmg__memo_resume(struct cmg__memo *m, unsigned j, unsigned at,
                     uintptr_t *ips, int k);

/* What a walk took from the memo by cmg__memo_resume(): frames j..at + 1,
 * frame at being ips[k - 1] (k = 0: nothing). */
struct cmg__memo_taken {
  unsigned j, at, k;
};

/* After a walk that reached the stack's end with k frames in ips, all in
 * m->walk but those taken (t, or NULL): they become the memo, the frames
 * taken moved, not copied again. */
void cmg__memo_keep(struct cmg__memo *m, unsigned k,
                    const struct cmg__memo_taken *t);

/* How many walks recalled their outer part (for the tests). */
uint64_t cmg__memo_recalls(void);

/* In a forked child: only the calling thread's memo is taken. */
void cmg__memo_after_fork(void);

#endif /* CMG_RUNTIME_STACKS_STACKMEMO_H */
