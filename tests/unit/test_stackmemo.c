/*
 * Each thread's memo of its last walk, on walks made up here: frames whose
 * steps read words of arrays of this file, so that the outer part of a
 * stack "changes" when a word does.  A recall that returned frames whose
 * words no longer hold would put wrong callers in every report, and one
 * that read words the walk would not read could fault; so the recall is
 * checked to stop at the first word that differs (a page it must not touch
 * lies beyond it), to refuse what does not fit, and to leave the memo as it
 * was when it refuses.  After a partial recall the memo is rebuilt from
 * three parts: they are checked in place, with their words, by recalling
 * the whole stack again.  One memo a thread, never seen by another; one
 * given back at exit is taken over by the next thread; a signal's walk
 * finds its thread's memo busy; and in a forked child only the calling
 * thread keeps one.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/stacks/stackmemo.h"
#include "../tap.h"

#define MAX CMG__MEMO_MAX
#define IPS 1024
#define SENTINEL ((uintptr_t)0x5e5e5e5e)

/* The words each frame's step outward reads: two per frame. */
typedef uintptr_t words_t[MAX + 8][2];

static words_t main_words;
static uintptr_t ips[IPS];

/* Frame s (0 the outermost) of the stack named tag: its step reads its two
 * words, but the outermost's, which takes no step. */
static struct cmg__memo_frame
frame_of(words_t w, unsigned s, unsigned tag)
{
  uintptr_t sp = 0x7ff000000000u - (uintptr_t)s * 0x100;
  struct cmg__memo_frame f = { .ra = 0x400000u + tag * 0x10000u + s * 0x10,
                               .sp = sp,
                               .rbp = sp + 0x40 + tag };
  if (s > 0) {
    f.a1 = (uintptr_t)&w[s][0];
    f.v1 = w[s][0];
    f.a2 = (uintptr_t)&w[s][1];
    f.v2 = w[s][1];
  }
  return f;
}

static void
fill_words(words_t w, uintptr_t seed)
{
  for (unsigned s = 0; s < MAX + 8; s++) {
    w[s][0] = seed + 2 * s;
    w[s][1] = seed + 2 * s + 1;
  }
}

/* Remembered frame s has f's state and reads. */
static bool
holds(const struct cmg__memo *m, unsigned s, struct cmg__memo_frame f)
{
  const struct cmg__memo_reads *r = &m->reads[s];
  return cmg__memo_ra(m, s) == f.ra && m->sp[s] == f.sp && m->rbp[s] == f.rbp &&
         r->a1 == f.a1 && r->v1 == f.v1 && r->a2 == f.a2 && r->v2 == f.v2;
}

/* Frames [0, n) of the memo are frames [0, n) of stack tag. */
static bool
holds_stack(const struct cmg__memo *m, words_t w, unsigned n, unsigned tag)
{
  for (unsigned s = 0; s < n; s++)
    if (!holds(m, s, frame_of(w, s, tag)))
      return false;
  return true;
}

/* A walk of stack tag that reached its end: n frames, innermost first. */
static void
walk_whole(struct cmg__memo *m, words_t w, unsigned n, unsigned tag)
{
  for (unsigned i = 0; i < n; i++)
    m->walk[i] = frame_of(w, n - 1 - i, tag);
  cmg__memo_keep(m, n, NULL);
}

/* ips[at..at + len) are the return addresses of remembered frames from..,
 * outward. */
static bool
ips_are(const struct cmg__memo *m, unsigned at, unsigned from, unsigned len)
{
  for (unsigned i = 0; i < len; i++)
    if (ips[at + i] != cmg__memo_ra(m, from - i))
      return false;
  return true;
}

static void
clear_ips(void)
{
  for (unsigned i = 0; i < IPS; i++)
    ips[i] = SENTINEL;
}

static struct cmg__memo *volatile in_handler;

static void
on_signal(int sig)
{
  in_handler = cmg__memo_enter();
  cmg__memo_leave(in_handler);
}

static void
test_enter(struct cmg__memo *m)
{
  ok(m != NULL, "the first walk of a thread gets a memo");
  is_int(m->n, 0, "holding no frame");
  is_u64(cmg__memo_recalls(), 0, "no recall yet");
  ok(m->busy, "marked busy");
  ok(cmg__memo_enter() == NULL, "a second walk of the thread gets none");
  signal(SIGUSR1, on_signal);
  in_handler = m;
  raise(SIGUSR1);
  ok(in_handler == NULL, "nor does a signal's walk interrupting the first");
  cmg__memo_leave(m);
  ok(!m->busy, "leaving frees it");
  raise(SIGUSR1);
  ok(in_handler == m, "then a signal's walk gets it");
  cmg__memo_leave(NULL);
  ok(cmg__memo_enter() == m, "the thread's next walk gets the same memo");
}

static void
test_keep(struct cmg__memo *m)
{
  walk_whole(m, main_words, 8, 1);
  is_int(m->n, 8, "a walk's frames become the memo");
  ok(holds_stack(m, main_words, 8, 1), "outermost first, reads with them");
  for (unsigned i = 0; i < 5; i++)
    m->walk[i] = frame_of(main_words, 4 - i, 2);
  struct cmg__memo_taken none = { 0 };
  cmg__memo_keep(m, 5, &none);
  is_int(m->n, 5, "nothing taken: the walk replaces the memo");
  ok(holds_stack(m, main_words, 5, 2), "frame by frame");
  walk_whole(m, main_words, MAX, 3);
  is_int(m->n, MAX, "a walk of the most frames is kept");
  ok(holds_stack(m, main_words, MAX, 3), "every one of them");
  cmg__memo_keep(m, MAX + 1, NULL);
  is_int(m->n, 0, "one longer is not");
  walk_whole(m, main_words, 4, 1);
  cmg__memo_keep(m, 0, NULL);
  is_int(m->n, 0, "nor is an empty walk");
}

/* A walk that called 2 new frames (stack 2) from frame j of stack 1. */
static unsigned
walk_in_from(struct cmg__memo *m, unsigned j)
{
  clear_ips();
  for (unsigned i = 0; i < 2; i++) {
    m->walk[i] = frame_of(main_words, j + 2 - i, 2);
    ips[i] = m->walk[i].ra;
  }
  ips[2] = cmg__memo_ra(m, j);
  return 3;
}

static void
test_recall(struct cmg__memo *m)
{
  walk_whole(m, main_words, 8, 1);
  unsigned at = 99, k = walk_in_from(m, 5);
  uint64_t before = m->recalls;
  is_int(cmg__memo_recall(m, 5, ips, (int)k, 64, &at), 8,
         "a recall gives the frames outward of the one met");
  ok(ips_are(m, 2, 5, 6), "frames 5..0 after the ones walked");
  ok(ips[1] == frame_of(main_words, 6, 2).ra, "which stay");
  ok(ips[8] == SENTINEL, "and nothing beyond");
  is_int(m->n, 8, "the memo now has the new inner part");
  ok(holds_stack(m, main_words, 6, 1), "the outer part as it was");
  ok(holds(m, 6, frame_of(main_words, 6, 2)) &&
         holds(m, 7, frame_of(main_words, 7, 2)),
     "the walked frames after it, innermost last");
  is_u64(m->recalls, before + 1, "the thread's recalls counted");
  is_u64(cmg__memo_recalls(), before + 1, "and in the sum");

  clear_ips();
  is_int(cmg__memo_recall(m, 7, ips, 1, 64, &at), 8,
         "the new inner frames' reads were kept: a recall from the innermost");
  ok(ips[0] == frame_of(main_words, 7, 2).ra && ips_are(m, 0, 7, 8),
     "gives the whole stack");

  /* The outermost frame's step reads nothing: its words are at 0. */
  clear_ips();
  m->walk[0] = frame_of(main_words, 1, 6);
  ips[0] = m->walk[0].ra;
  ips[1] = cmg__memo_ra(m, 0);
  is_int(cmg__memo_recall(m, 0, ips, 2, 64, &at), 2,
         "met at the outermost frame, nothing is read and it is recalled");
  ok(ips[1] == frame_of(main_words, 0, 1).ra && ips[2] == SENTINEL,
     "its return address alone");
  is_int(m->n, 2, "the memo is it and the frame walked");
  ok(holds(m, 1, frame_of(main_words, 1, 6)), "in its place");
}

static void
test_recall_limits(struct cmg__memo *m)
{
  walk_whole(m, main_words, 8, 1);
  uint64_t before = m->recalls;
  unsigned at = 99, k = walk_in_from(m, 5);
  is_int(cmg__memo_recall(m, 5, ips, (int)k, 7, &at), 0,
         "refused when the frames would pass max");
  is_int(at, 5, "at is the frame met");
  ok(ips[2] == cmg__memo_ra(m, 5) && ips[3] == SENTINEL, "ips untouched");
  ok(m->n == 8 && holds_stack(m, main_words, 8, 1), "the memo untouched");
  is_u64(m->recalls, before, "no recall counted");
  is_int(cmg__memo_recall(m, 5, ips, (int)k, 8, &at), 8,
         "just max is recalled");

  walk_whole(m, main_words, 201, 4);
  clear_ips();
  for (unsigned i = 0; i < 72; i++)
    m->walk[i] = frame_of(main_words, 271 - i, 5);
  is_int(cmg__memo_recall(m, 200, ips, 73, IPS, &at), 0,
         "refused when the memo could not hold the frames");
  is_int(at, 200, "at is the frame met");
  is_int(m->n, 201, "the memo untouched");
  is_int(cmg__memo_recall(m, 200, ips, 72, IPS, &at), 272,
         "one frame fewer is recalled");
  is_int(m->n, MAX, "the memo is full");
  ok(holds(m, MAX - 1, frame_of(main_words, 271, 5)),
     "its innermost frame the walk's first");
}

static void
test_recall_differs(struct cmg__memo *m)
{
  walk_whole(m, main_words, 8, 1);
  uint64_t before = m->recalls;
  unsigned at = 99, k = walk_in_from(m, 6);
  struct cmg__memo_frame f3 = frame_of(main_words, 3, 1);
  main_words[3][1]++;
  is_int(cmg__memo_recall(m, 6, ips, (int)k, 64, &at), 0,
         "a second word that differs stops the recall");
  is_int(at, 3, "at the frame whose step read it");
  main_words[5][0]++;
  is_int(cmg__memo_recall(m, 6, ips, (int)k, 64, &at), 0,
         "so does a first word");
  is_int(at, 5, "the innermost of two is where the walk goes on");
  ok(ips[2] == cmg__memo_ra(m, 6) && ips[3] == SENTINEL, "ips untouched");
  ok(m->n == 8 && holds(m, 7, frame_of(main_words, 7, 1)) && holds(m, 3, f3),
     "the memo untouched");
  is_u64(cmg__memo_recalls(), before, "no recall counted");
  main_words[3][1]--;
  main_words[5][0]--;
  main_words[1][0]++;
  is_int(cmg__memo_recall(m, 6, ips, (int)k, 64, &at), 0,
         "the words of the step to the outermost frame count too");
  is_int(at, 1, "at the frame next to it");
  main_words[1][0]--;
  is_int(cmg__memo_recall(m, 6, ips, (int)k, 64, &at), 9,
         "the words back, it is recalled");

  /* Outward of a word that differs the walk reads nothing: neither must
   * the recall. */
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t *none =
      mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  walk_whole(m, main_words, 8, 1);
  m->reads[2] =
      (struct cmg__memo_reads){ (uintptr_t)none, 1, (uintptr_t)none, 1 };
  main_words[4][0]++;
  k = walk_in_from(m, 6);
  is_int(cmg__memo_recall(m, 6, ips, (int)k, 64, &at), 0,
         "a word that differs");
  is_int(at, 4, "stops the reads before an unreadable one");
  main_words[4][0]--;
  munmap(none, (size_t)page);
}

/* A recall from frame j of an n-frame stack 1, past 2 new inner frames,
 * that stopped at frame at, the walk going on from there to a new outer
 * part of outer frames (stack 3).  The memo becomes the new outer part,
 * frames at + 1..j taken from before, and the inner frames. */
static void
resume_case(struct cmg__memo *m, unsigned n, unsigned j, unsigned at,
            unsigned outer)
{
  static words_t w;
  fill_words(w, 0x1000);
  walk_whole(m, w, n, 1);
  clear_ips();
  for (unsigned i = 0; i < 2; i++) {
    m->walk[i] = frame_of(w, j + 2 - i, 2);
    ips[i] = m->walk[i].ra;
  }
  ips[2] = cmg__memo_ra(m, j);
  w[at][0] ^= 0xff;
  unsigned got_at = 99;
  is_int(cmg__memo_recall(m, j, ips, 3, 64, &got_at), 0, "%u/%u/%u: stopped", j,
         at, outer);
  is_int(got_at, at, "at %u", at);
  int k = cmg__memo_resume(m, j, at, ips, 3);
  is_int(k, 3 + j - at, "resumed with frames %u..%u", j, at);
  ok(ips_are(m, 2, j, j - at + 1) && ips[k] == SENTINEL,
     "their return addresses after the walked ones");
  ok(cmg__memo_ra(m, at) == ips[k - 1], "the last is frame at");

  /* Frame at steps anew, to outer - 1 frames of another outer part. */
  struct cmg__memo_frame f = frame_of(w, at, 1);
  f.v1 = w[at][0];
  unsigned total = (unsigned)k + outer - 1;
  m->walk[k - 1] = f;
  for (unsigned i = 0; i + 1 < outer; i++)
    m->walk[k + i] = frame_of(w, outer - 2 - i, 3);
  struct cmg__memo_taken t = { j, at, (unsigned)k };
  cmg__memo_keep(m, total, &t);
  is_int(m->n, total, "kept %u frames", total);
  ok(holds_stack(m, w, outer - 1, 3), "the new outer part outermost");
  ok(holds(m, outer - 1, f), "then frame at, with its new reads");
  bool middle = true;
  for (unsigned i = 0; i < j - at; i++)
    middle &= holds(m, outer + i, frame_of(w, at + 1 + i, 1));
  ok(middle, "then the frames taken from before, with their reads");
  ok(holds(m, total - 2, frame_of(w, j + 1, 2)) &&
         holds(m, total - 1, frame_of(w, j + 2, 2)),
     "then the inner part");

  clear_ips();
  is_int(cmg__memo_recall(m, total - 1, ips, 1, IPS, &got_at), (int)total,
         "every frame's words hold: the whole stack recalled");
  ok(ips_are(m, 0, total - 1, total), "frame by frame");
}

static void
test_resume(struct cmg__memo *m)
{
  resume_case(m, 8, 5, 3, 3);  /* the frames taken move inward */
  resume_case(m, 8, 5, 3, 4);  /* stay */
  resume_case(m, 12, 9, 2, 7); /* move outward, overlapping */
  walk_whole(m, main_words, 8, 1);
  struct cmg__memo_taken t = { 5, 3, 5 };
  cmg__memo_keep(m, MAX + 1, &t);
  is_int(m->n, 0, "a walk past the most frames is not kept");
}

#define THREADS 4
#define ROUNDS 2000

struct worker {
  unsigned tag;
  struct cmg__memo *memo;
  unsigned fresh_n, errors;
  uint64_t recalls;
  words_t words;
  uintptr_t ips[64];
};

static pthread_barrier_t all_in;

/* Its own stack, recalled from its own memo over and over. */
static void *
work(void *arg)
{
  struct worker *wk = arg;
  struct cmg__memo *m = cmg__memo_enter();
  wk->memo = m;
  if (m == NULL) {
    pthread_barrier_wait(&all_in);
    pthread_barrier_wait(&all_in);
    return NULL;
  }
  wk->fresh_n = m->n;
  fill_words(wk->words, wk->tag << 20);
  uint64_t before = m->recalls;
  pthread_barrier_wait(&all_in);
  for (unsigned r = 0; r < ROUNDS; r++) {
    unsigned n = 10 + r % 20, at;
    for (unsigned i = 0; i < n; i++)
      m->walk[i] = frame_of(wk->words, n - 1 - i, wk->tag);
    cmg__memo_keep(m, n, NULL);
    wk->ips[0] = cmg__memo_ra(m, n - 1);
    if (cmg__memo_recall(m, n - 1, wk->ips, 1, 64, &at) != (int)n)
      wk->errors++;
    for (unsigned s = 0; s < n; s++)
      if (wk->ips[n - 1 - s] != frame_of(wk->words, s, wk->tag).ra)
        wk->errors++;
  }
  wk->recalls = m->recalls - before;
  pthread_barrier_wait(&all_in);
  cmg__memo_leave(m);
  return NULL;
}

static struct worker workers[THREADS];

static void
test_threads(struct cmg__memo *mine)
{
  walk_whole(mine, main_words, 8, 1);
  uint64_t before = cmg__memo_recalls();
  pthread_t th[THREADS];
  pthread_barrier_init(&all_in, NULL, THREADS);
  for (unsigned i = 0; i < THREADS; i++) {
    workers[i].tag = 10 + i;
    pthread_create(&th[i], NULL, work, &workers[i]);
  }
  for (unsigned i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&all_in);
  bool distinct = true, fresh = true, right = true;
  for (unsigned i = 0; i < THREADS; i++) {
    distinct &= workers[i].memo != NULL && workers[i].memo != mine;
    for (unsigned j = 0; j < i; j++)
      distinct &= workers[i].memo != workers[j].memo;
    fresh &= workers[i].fresh_n == 0;
    right &= workers[i].errors == 0 && workers[i].recalls == ROUNDS;
  }
  ok(distinct, "threads alive together each have a memo of their own");
  ok(fresh, "holding nothing of another's walk");
  ok(right, "each recalled its own stack, %d times", ROUNDS);
  is_u64(cmg__memo_recalls() - before, THREADS * ROUNDS,
         "the sum counts every thread's recalls");
  ok(mine->n == 8 && holds_stack(mine, main_words, 8, 1),
     "this thread's memo untouched by theirs");
}

static pthread_key_t late_key;
static struct cmg__memo *late_memo, *late_got = (struct cmg__memo *)1;
static int late_rounds;

/* A destructor run after the memo's: the thread is exiting. */
static void
late_exit(void *p)
{
  if (atomic_load(&late_memo->taken) && ++late_rounds < 4) {
    pthread_setspecific(late_key, p);
    return;
  }
  late_got = cmg__memo_enter();
}

static void *
exiting(void *arg)
{
  late_memo = cmg__memo_enter();
  walk_whole(late_memo, main_words, 6, 1);
  cmg__memo_leave(late_memo);
  pthread_setspecific(late_key, arg);
  return NULL;
}

/* What a new thread's first walk finds. */
struct probe {
  struct cmg__memo *memo;
  unsigned n;
};

static void *
newcomer(void *arg)
{
  struct probe *p = arg;
  p->memo = cmg__memo_enter();
  p->n = p->memo != NULL ? p->memo->n : 99;
  cmg__memo_leave(p->memo);
  return NULL;
}

static void
test_takeover(void)
{
  pthread_key_create(&late_key, late_exit);
  pthread_t th;
  pthread_create(&th, NULL, exiting, &late_key);
  pthread_join(th, NULL);
  ok(late_memo != NULL && !atomic_load(&late_memo->taken),
     "a thread's memo is given back when it exits");
  ok(late_got == NULL, "a walk while it exits gets none");
  struct probe p = { NULL, 99 };
  pthread_create(&th, NULL, newcomer, &p);
  pthread_join(th, NULL);
  ok(p.memo == late_memo, "the next new thread takes it over");
  is_int(p.n, 0, "emptied of the old thread's frames");
  pthread_key_delete(late_key);
}

static pthread_barrier_t forking;
static struct cmg__memo *held;

static void *
holder(void *arg)
{
  held = cmg__memo_enter();
  cmg__memo_leave(held);
  pthread_barrier_wait(&forking); /* it has its memo */
  pthread_barrier_wait(&forking); /* the fork is done */
  return NULL;
}

/* In the child: bit 0 the other thread's memo free, 1 ours still taken,
 * 2 ours still ours, 3 a new thread gets one not ours. */
static int
child_after_fork(struct cmg__memo *mine)
{
  int bits = 0;
  cmg__memo_after_fork();
  bits |= !atomic_load(&held->taken) ? 1 : 0;
  bits |= atomic_load(&mine->taken) ? 2 : 0;
  struct cmg__memo *m = cmg__memo_enter();
  bits |= m == mine ? 4 : 0;
  cmg__memo_leave(m);
  struct probe p = { NULL, 99 };
  pthread_t th;
  if (pthread_create(&th, NULL, newcomer, &p) == 0 &&
      pthread_join(th, NULL) == 0)
    bits |= p.memo != NULL && p.memo != mine && p.n == 0 ? 8 : 0;
  return bits;
}

static void
test_fork(struct cmg__memo *mine)
{
  pthread_t th;
  pthread_barrier_init(&forking, NULL, 2);
  pthread_create(&th, NULL, holder, NULL);
  pthread_barrier_wait(&forking);
  bool held_taken = held != NULL && atomic_load(&held->taken);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0)
    _exit(child_after_fork(mine));
  pthread_barrier_wait(&forking);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&forking);
  int status = 0;
  waitpid(pid, &status, 0);
  int bits = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  ok(held_taken, "another thread held a memo at the fork");
  ok(bits & 1, "in the child it is free");
  ok(bits & 2, "the forking thread's is still taken");
  ok(bits & 4, "and still its own");
  ok(bits & 8, "a new thread of the child gets another");
}

int
main(void)
{
  fill_words(main_words, 0x100);
  struct cmg__memo *m = cmg__memo_enter();
  test_enter(m);
  if (m == NULL)
    return done_testing();
  test_keep(m);
  test_recall(m);
  test_recall_limits(m);
  test_recall_differs(m);
  test_resume(m);
  cmg__memo_leave(m);
  test_takeover();
  test_threads(m);
  test_fork(m);
  return done_testing();
}
