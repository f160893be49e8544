/*
 * libunwind's pipe, guarded (unwind_pipe.c): every call into libunwind
 * that may step enters and leaves here, and the program's pipe2, mincore
 * and msync (hooks/pipe.c) tell the guard of the pipe libunwind makes and
 * ask it whether that pipe is still libunwind's.
 */
#ifndef CMG_RUNTIME_STACKS_UNWIND_PIPE_H
#define CMG_RUNTIME_STACKS_UNWIND_PIPE_H

#include <stdbool.h>

/* Around every call into libunwind that may step: false when libunwind
 * must not be called any more (the program put files where its pipe was),
 * the stack then ending with the frames proven so far. */
bool cmg__unwind_enter(void);
void cmg__unwind_leave(void);

/* Whether the calling thread is inside a call into libunwind, and the pipe
 * libunwind made there (from the program's pipe2, hooks/pipe.c). */
bool cmg__unwind_is_inside(void);
void cmg__unwind_note_pipe(const int fds[2]);

/* Inside a call into libunwind, before it uses its pipe (from the
 * program's mincore and msync, hooks/pipe.c): whether the pipe is its
 * still, or closed; false, said once, and libunwind never called again,
 * when the program has put another file there. */
bool cmg__unwind_pipe_ok(void);

#endif /* CMG_RUNTIME_STACKS_UNWIND_PIPE_H */
