/*
 * Python frames spliced into native stacks, read from a real CPython: the
 * program loads Debian's shared libpython 3.11 (the test is skipped where
 * it is not installed), finds its layout as the library does at start-up,
 * and runs a script whose functions call back into cmgt_probe() through
 * ctypes, with the GIL released as ctypes releases it around a foreign
 * call, the place where the library reads Python frames.  The probe
 * splices its thread's frames into native stacks, its own real one and
 * made-up ones whose "eval frames" are addresses inside the eval loop, and
 * records what came out; main checks it.
 *
 * Checked: each eval-loop frame of a real stack gives way to the Python
 * frames it runs, innermost first, named with their functions and exact
 * lines; frames no eval frame took are appended, never dropped; a native
 * cut takes the frames of the eval frames it left out; the room for words
 * and the native budget, each ending the stack with a cut; the budget of
 * 128 Python frames at, one past and far past it, and a chain too long to
 * reach its end; the again path (the same input twice gives the stack the
 * caller interned, any change in native words, Python frames or the cut
 * flag does not, and a splice nested inside another does not disturb it);
 * a Python thread sees only its own frames; a C thread, and a thread
 * before Python started or after it returned, gets its native frames back
 * as they were.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/python/pyframes.h"
#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/stacks.h"
#include "runtime/stacks/unwind.h"
#include "py_harness.h"

/* What stacks.c gives a splice: stack_depth frames, a cut, and room. */
#define ROOM (CMG__STACK_DEPTH_MAX + 2)
#define LONG_N 300
#define OUT_MAX 320
#define CAPTURE 128

/* Each line a frame is checked at ends with a marker, "# at NAME".  The
 * probe's argument says what it is to do there.  down(n) runs n + 2 frames
 * with <module>: the budget's 128, one more, 200, and past the 4096
 * frames a walk follows. */
static const char script[] = "import ctypes, sys, threading\n"
                             "probe = ctypes.CDLL(None).cmgt_probe\n"
                             "sys.setrecursionlimit(10000)\n"
                             "def leaf(what):\n"
                             "    return probe(what)  # at leaf\n"
                             "def mid(what):\n"
                             "    return next(map(leaf, [what]))  # at mid\n"
                             "def top(what):\n"
                             "    return mid(what)  # at top\n"
                             "def down(n, what):\n"
                             "    if n == 0:\n"
                             "        return probe(what)  # at bottom\n"
                             "    return down(n - 1, what)  # at down\n"
                             "def again():\n"
                             "    probe(b'again')  # at again\n"
                             "def loop():\n"
                             "    for _ in range(2):\n"
                             "        probe(b'loop')  # at loop\n"
                             "def in_thread():\n"
                             "    probe(b'thread')  # at thread\n"
                             "top(b'splice')  # at run-top\n"
                             "down(126, b'fit')  # at run-fit\n"
                             "down(127, b'over')  # at run-over\n"
                             "down(198, b'deep')  # at run-deep\n"
                             "down(4198, b'deeper')  # at run-deeper\n"
                             "again()  # at run-again\n"
                             "loop()  # at run-loop1\n"
                             "loop()  # at run-loop2\n"
                             "t = threading.Thread(target=in_thread)\n"
                             "t.start()\n"
                             "t.join()\n";

/* One splice's result. */
struct take {
  unsigned m;
  bool cut;  /* as the splice left it */
  bool held; /* it held the thread's memo */
  uint32_t id;
  uintptr_t out[OUT_MAX];
};

enum {
  T_REAL,
  T_APPEND,
  T_TWO,
  T_ONE,
  T_THREE,
  T_CUT_FIRST,
  T_CUT_LAST,
  T_ROOM_NATIVE,
  T_ROOM_PY,
  T_ROOM_GROUP,
  T_LONG,
  T_CUT_IN,
  T_FIT,
  T_OVER,
  T_DEEP,
  T_DEEPER,
  T_AGAIN,
  T_LOOP = T_AGAIN + 10,
  T_PYTHREAD = T_LOOP + 4,
  T_CTHREAD,
  T_BEFORE = T_CTHREAD + 2,
  T_AFTER,
  T_COUNT
};

static struct take takes[T_COUNT];
static uintptr_t real_ips[CAPTURE];
static unsigned real_n, loops;
static uint32_t stack_ids[2];
static volatile int captures = 2;
static char markers[64][16];

/* Made-up native frames, and return addresses inside the eval loop. */
static uintptr_t
nat(unsigned i)
{
  return 0x400000 + 0x1000 * (uintptr_t)i;
}

static uintptr_t
ev(unsigned i)
{
  return cmg__py_layout.eval_lo + 16 * (uintptr_t)(i + 1);
}

static bool
is_eval(uintptr_t ip)
{
  return ip > cmg__py_layout.eval_lo && ip <= cmg__py_layout.eval_hi;
}

/* A splice as stacks.c makes one, recorded; the memo is given back by
 * the caller, with the stack its words were interned as. */
static struct cmg__py_again
splice_to(struct take *t, const uintptr_t *ips, unsigned n, unsigned max,
          bool cut)
{
  struct cmg__py_again again;
  t->cut = cut;
  t->m = cmg__py_splice(ips, n, t->out, max, &t->cut, &again);
  t->id = again.id;
  t->held = again.memo != NULL;
  return again;
}

static void
take(struct take *t, const uintptr_t *ips, unsigned n, unsigned max, bool cut,
     uint32_t id)
{
  struct cmg__py_again again = splice_to(t, ips, n, max, cut);
  cmg__py_again_done(&again, id);
}

/* n0 e0 n1 e1 n2: two eval frames between native ones. */
static const uintptr_t *
two_evals(uintptr_t *s)
{
  uintptr_t w[] = { nat(0), ev(0), nat(1), ev(1), nat(2) };
  memcpy(s, w, sizeof(w));
  return s;
}

/* ---- the probe: what runs inside Python's call ----------------------- */

static __attribute__((noinline)) void
splice_real(void)
{
  int n = cmg__unwind(real_ips, CAPTURE);
  real_n = n > 0 ? (unsigned)n : 0;
  take(&takes[T_REAL], real_ips, real_n, OUT_MAX, false, 0);
  /* A loop the compiler cannot unroll: one call site, one return address. */
  for (int i = 0; i < captures; i++)
    stack_ids[i] = cmg__stacks_capture();
}

/* The made-up stacks, from the same Python frames as splice_real's. */
static void
splice_made_up(void)
{
  uintptr_t s[8], l[LONG_N];
  take(&takes[T_APPEND], (uintptr_t[]){ nat(0), nat(1), nat(2) }, 3, ROOM,
       false, 0);
  take(&takes[T_TWO], two_evals(s), 5, ROOM, false, 0);
  take(&takes[T_ONE], two_evals(s), 3, ROOM, false, 0);
  uintptr_t three[] = { nat(0), ev(0), nat(1), ev(1), nat(2), ev(2), nat(3) };
  take(&takes[T_THREE], three, 7, ROOM, false, 0);
  uintptr_t c = cmg__cut_word(false, 5);
  take(&takes[T_CUT_FIRST], (uintptr_t[]){ nat(0), c, nat(1), ev(1), nat(2) },
       5, ROOM, true, 0);
  take(&takes[T_CUT_LAST], (uintptr_t[]){ nat(0), ev(0), c, nat(1) }, 4, ROOM,
       true, 0);
  uintptr_t five[] = { nat(0), nat(1), nat(2), nat(3), nat(4) };
  take(&takes[T_ROOM_NATIVE], five, 5, 3, false, 0);
  take(&takes[T_ROOM_PY], five, 2, 4, false, 0);
  take(&takes[T_ROOM_GROUP], two_evals(s), 5, 6, false, 0);
  for (unsigned i = 0; i < LONG_N; i++)
    l[i] = nat(i);
  take(&takes[T_LONG], l, LONG_N, OUT_MAX, false, 0);
  take(&takes[T_CUT_IN], two_evals(s), 5, ROOM, true, 0);
}

/* The again path, step by step, on n0 e0 n1 e1 n2 and a copy with its
 * last word changed; each step's id given back is 40 + its index. */
static void
splice_again(void)
{
  uintptr_t s[5], o[5];
  struct take *t = &takes[T_AGAIN];
  two_evals(s);
  two_evals(o);
  o[4] = nat(9);
  take(&t[0], s, 5, ROOM, false, 40);
  take(&t[1], s, 5, ROOM, false, 41);
  take(&t[2], o, 5, ROOM, false, 42);
  take(&t[3], o, 5, ROOM, false, 43);
  take(&t[4], s, 5, ROOM, false, 0);
  take(&t[5], s, 5, ROOM, false, 45);
  take(&t[6], s, 5, ROOM, true, 46);
  /* A capture inside a capture, as a signal handler's would be. */
  struct cmg__py_again outer = splice_to(&t[7], s, 5, ROOM, false);
  take(&t[8], s, 5, ROOM, false, 99);
  cmg__py_again_done(&outer, 47);
  take(&t[9], s, 5, ROOM, false, 0);
}

static void *
c_thread(void *arg)
{
  uintptr_t s[5];
  take(&takes[T_CTHREAD], two_evals(s), 5, ROOM, false, 51);
  take(&takes[T_CTHREAD + 1], s, 5, ROOM, false, 52);
  return NULL;
}

static void
probe_splice(void)
{
  splice_real();
  splice_made_up();
  /* A thread that never ran Python, while this one is inside Python with
   * the GIL released: the runtime's last holder of it is this thread. */
  pthread_t th;
  pthread_create(&th, NULL, c_thread, NULL);
  pthread_join(th, NULL);
}

CMG__EXPORT int
cmgt_probe(const char *what)
{
  static const char *const deep[] = { "fit", "over", "deep", "deeper" };
  uintptr_t s[5];
  if (strcmp(what, "splice") == 0)
    probe_splice();
  for (unsigned i = 0; i < 4; i++)
    if (strcmp(what, deep[i]) == 0)
      take(&takes[T_FIT + i], two_evals(s), 3, ROOM, false, 0);
  if (strcmp(what, "again") == 0)
    splice_again();
  if (strcmp(what, "loop") == 0 && loops < 4) {
    take(&takes[T_LOOP + loops], two_evals(s), 5, ROOM, false, 60 + loops);
    loops++;
  }
  if (strcmp(what, "thread") == 0)
    take(&takes[T_PYTHREAD], two_evals(s), 5, ROOM, false, 0);
  return 0;
}

/* ---- rendering a stack as words a test can compare ------------------- */

static void
find_markers(void)
{
  unsigned line = 1;
  for (const char *p = script; *p != '\0'; p++) {
    if (strncmp(p, "# at ", 5) == 0 && line < 64)
      sscanf(p + 5, "%15s", markers[line]);
    line += *p == '\n';
  }
}

/* A Python frame as function@marker of its line in the script, or
 * function:line where no marker stands, or just its function for a frame
 * of another file (threading.py). */
static int
put_python(char *b, size_t cap, uintptr_t w)
{
  struct cmg__py_site_view v;
  if (!cmg__py_site_get(cmg__py_frame_site(w), &v))
    return snprintf(b, cap, "py?");
  if (strcmp(v.file, "<string>") != 0)
    return snprintf(b, cap, "%s", v.function);
  if (v.line > 0 && v.line < 64 && markers[v.line][0] != '\0')
    return snprintf(b, cap, "%s@%s", v.function, markers[v.line]);
  return snprintf(b, cap, "%s:%d", v.function, v.line);
}

static int
put_word(char *b, size_t cap, uintptr_t w)
{
  if (cmg__py_is_frame(w))
    return put_python(b, cap, w);
  if (cmg__is_cut(w)) {
    const char *kind = cmg__cut_is_python(w) ? "pycut" : "cut";
    if (cmg__cut_frames(w) == CMG__CUT_UNKNOWN)
      return snprintf(b, cap, "%s:?", kind);
    return snprintf(b, cap, "%s:%u", kind, cmg__cut_frames(w));
  }
  if (w >= nat(0) && w < nat(LONG_N) && (w - nat(0)) % 0x1000 == 0)
    return snprintf(b, cap, "n%u", (unsigned)((w - nat(0)) / 0x1000));
  for (unsigned i = 0; i < 3; i++)
    if (w == ev(i))
      return snprintf(b, cap, "e%u", i);
  return snprintf(b, cap, "c");
}

/* The words as tokens, a run of one token as "token*count"; with
 * `natives`, every run of frames of a real stack is one "c". */
static const char *
render(const uintptr_t *w, unsigned m, bool natives)
{
  static char out[4096];
  char prev[64] = "", tok[64];
  unsigned run = 0;
  size_t at = 0;
  out[0] = '\0';
  for (unsigned i = 0; i <= m && at < sizeof(out) - 64; i++) {
    if (i < m)
      put_word(tok, sizeof(tok), w[i]);
    if (i < m && strcmp(tok, prev) == 0) {
      run++;
      continue;
    }
    if (run > 1 && !(natives && strcmp(prev, "c") == 0))
      at += (size_t)snprintf(out + at, sizeof(out) - at, "*%u", run);
    if (i < m)
      at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s",
                             at > 0 ? " " : "", tok);
    strcpy(prev, tok);
    run = 1;
  }
  return out;
}

#define is_words(t, want, ...)                                                 \
  is_str(render((t)->out, (t)->m, false), want, __VA_ARGS__)

/* ---- the checks -------------------------------------------------------- */

static void
test_layout(void)
{
  struct cmg__py_status st;
  cmg__py_get_status(&st);
  ok(st.found, "the loaded libpython is found");
  ok(st.frames, "its frames are read");
  ok(strncmp(st.version, "3.11.", 5) == 0, "its version, %s", st.version);
  ok(atomic_load(&cmg__py_on), "captures add Python frames");
  is_int(cmg__py_layout.minor, 11, "the 3.11 layout");
  ok(cmg__py_layout.eval_hi > ev(2),
     "the eval loop's code found, larger than the made-up return addresses");
}

/* Python frames only where real_ips had eval-loop frames: every other
 * word is the native word of real_ips at its place, in order. */
static bool
spliced_at_evals(const struct take *t)
{
  unsigned j = 0;
  for (unsigned i = 0; i < real_n; i++) {
    if (is_eval(real_ips[i])) {
      if (j >= t->m || !cmg__py_is_frame(t->out[j]))
        return false;
      while (j < t->m && cmg__py_is_frame(t->out[j]))
        j++;
    } else if (j >= t->m || t->out[j++] != real_ips[i]) {
      return false;
    }
  }
  return j == t->m;
}

static void
test_real(void)
{
  const struct take *t = &takes[T_REAL];
  unsigned evals = 0, files = 0;
  for (unsigned i = 0; i < real_n; i++)
    evals += is_eval(real_ips[i]);
  is_int(evals, 2, "the native stack runs the eval loop twice, map() between");
  is_str(render(t->out, t->m, true),
         "c leaf@leaf c mid@mid top@top <module>@run-top c",
         "each eval frame gives way to its Python frames, innermost first");
  ok(spliced_at_evals(t), "at the eval frames' places, the natives kept");
  is_int(t->m, real_n - 2 + 4, "two eval frames out, four Python frames in");
  ok(!t->cut, "nothing cut");
  for (unsigned i = 0; i < t->m; i++) {
    struct cmg__py_site_view v;
    files += cmg__py_is_frame(t->out[i]) &&
             cmg__py_site_get(cmg__py_frame_site(t->out[i]), &v) &&
             strcmp(v.file, "<string>") == 0;
  }
  is_int(files, 4, "each named in the script's file");

  struct cmg__stack_view v;
  ok(stack_ids[0] != CMG__STACK_NONE && stack_ids[0] == stack_ids[1],
     "a capture through stacks.c, twice from one place: one stack");
  is_int(cmg__stacks_get(stack_ids[0], &v), 0, "that stack is kept");
  is_str(render(v.ips, v.depth, true),
         "c leaf@leaf c mid@mid top@top <module>@run-top c",
         "with the Python frames spliced in");
}

static void
test_made_up(void)
{
  const struct take *t = takes;
  is_words(&t[T_APPEND], "n0 n1 n2 leaf@leaf mid@mid top@top <module>@run-top",
           "no eval frame: the Python frames appended");
  is_words(&t[T_TWO], "n0 leaf@leaf n1 mid@mid top@top <module>@run-top n2",
           "two eval frames: a group each");
  ok(!t[T_TWO].cut, "and nothing cut");
  is_words(&t[T_ONE], "n0 leaf@leaf n1 mid@mid top@top <module>@run-top",
           "one eval frame: the group it has no frame for appended");
  is_words(&t[T_THREE],
           "n0 leaf@leaf n1 mid@mid top@top <module>@run-top n2 e2 n3",
           "an eval frame past the groups stays");
  is_words(&t[T_CUT_FIRST],
           "n0 cut:5 leaf@leaf n1 mid@mid top@top <module>@run-top n2",
           "a cut takes the group of the eval frame it left out");
  is_words(&t[T_CUT_LAST],
           "n0 leaf@leaf cut:5 mid@mid top@top <module>@run-top n1",
           "a cut with no eval frame past it takes the rest");
  ok(t[T_CUT_FIRST].cut && t[T_CUT_LAST].cut, "the cut flag kept");
  is_words(&t[T_ROOM_NATIVE], "n0 n1 cut:?",
           "no room for the natives: a cut of unknown count ends them");
  ok(t[T_ROOM_NATIVE].cut, "and the stack is cut");
  is_words(&t[T_ROOM_PY], "n0 n1 leaf@leaf pycut:?",
           "no room for the Python frames: a Python cut ends them");
  ok(t[T_ROOM_PY].cut, "and the stack is cut");
  is_words(&t[T_ROOM_GROUP], "n0 leaf@leaf n1 mid@mid top@top cut:?",
           "a group cut short by the room: a native cut for what is left");
  is_int(t[T_LONG].m, CMG__STACK_DEPTH_MAX + 1 + 4 + 1,
         "300 natives, more than a capture has: 262 words");
  bool kept = true;
  for (unsigned i = 0; i <= CMG__STACK_DEPTH_MAX; i++)
    kept &= t[T_LONG].out[i] == nat(i);
  ok(kept, "the first stack_depth + 1 natives kept in order");
  is_str(render(t[T_LONG].out + CMG__STACK_DEPTH_MAX - 1, 7, false),
         "n255 n256 leaf@leaf mid@mid top@top <module>@run-top cut:?",
         "then the Python frames, and a native cut for the natives left out");
  ok(!t[T_LONG].held, "a stack past the budget does not hold the memo");
  ok(t[T_CUT_IN].cut, "a cut flag given stays set");
  is_words(&t[T_CUT_IN], "n0 leaf@leaf n1 mid@mid top@top <module>@run-top n2",
           "and the words are as without it");
}

static void
test_budget(void)
{
  const struct take *t = takes;
  is_words(&t[T_FIT], "n0 down@bottom down@down*126 <module>@run-fit n1",
           "128 Python frames: all kept");
  ok(!t[T_FIT].cut, "not cut");
  is_words(&t[T_OVER],
           "n0 down@bottom down@down*95 pycut:1 down@down*31 "
           "<module>@run-over n1",
           "129: the innermost 96 and outermost 32, one frame cut");
  ok(t[T_OVER].cut, "cut");
  is_words(&t[T_DEEP],
           "n0 down@bottom down@down*95 pycut:72 down@down*31 "
           "<module>@run-deep n1",
           "200: the cut counts the 72 left out");
  ok(t[T_DEEP].cut, "cut");
  is_words(&t[T_DEEPER], "n0 down@bottom down@down*95 pycut:? n1",
           "4200, past the walk's bound: the innermost 96, a cut of unknown "
           "count");
  ok(t[T_DEEPER].cut, "cut");
}

static void
test_again(void)
{
  const struct take *t = &takes[T_AGAIN];
  const char *s = "n0 again@again <module>@run-again n1 e1 n2";
  is_words(&t[0], s, "a new stack is spliced");
  ok(t[0].held && t[0].id == 0, "holding the memo, no stack known yet");
  is_int(t[1].m, 0, "the same input again: nothing written");
  is_int(t[1].id, 40, "the stack it was interned as");
  is_words(&t[2], "n0 again@again <module>@run-again n1 e1 n9",
           "one native word changed: spliced anew");
  is_int(t[2].id, 0, "no stack");
  ok(t[3].m == 0 && t[3].id == 42, "that input again: its own stack");
  is_words(&t[4], s, "the first input after another: spliced anew");
  ok(t[4].id == 0, "no stack");
  is_words(&t[5], s, "after a splice interned as no stack: spliced anew");
  is_words(&t[6], s, "the cut flag set: spliced anew");
  ok(t[6].id == 0 && t[6].cut, "no stack, the flag kept");
  is_words(&t[7], s, "cut flag clear again: spliced anew");
  is_words(&t[8], s, "a splice inside a splice: spliced");
  ok(!t[8].held && t[8].id == 0, "without the memo the outer one holds");
  ok(t[9].m == 0 && t[9].id == 47,
     "after them, the outer one's stack: the inner one changed nothing");

  const struct take *l = &takes[T_LOOP];
  is_words(&l[0], "n0 loop@loop <module>@run-loop1 n1 e1 n2",
           "a loop's first call: spliced");
  ok(l[1].m == 0 && l[1].id == 60, "its second: the first one's stack");
  is_words(&l[2], "n0 loop@loop <module>@run-loop2 n1 e1 n2",
           "the loop run from another line: spliced anew");
  ok(l[2].id == 0, "no stack");
  ok(l[3].m == 0 && l[3].id == 62, "its second call: that one's stack");
}

static void
test_threads(void)
{
  char py[256] = "";
  const struct take *t = &takes[T_PYTHREAD];
  for (unsigned i = 0; i < t->m; i++)
    if (cmg__py_is_frame(t->out[i]))
      snprintf(py + strlen(py), sizeof(py) - strlen(py), "%s%s",
               py[0] ? " " : "", render(&t->out[i], 1, false));
  is_str(py,
         "in_thread@thread Thread.run Thread._bootstrap_inner "
         "Thread._bootstrap",
         "a Python thread: its own frames, not the main thread's");
  ok(t->out[0] == nat(0) && cmg__py_is_frame(t->out[1]),
     "spliced at the eval frame");

  t = &takes[T_CTHREAD];
  is_words(&t[0], "n0 e0 n1 e1 n2",
           "a C thread: its native frames as they were, eval frames too");
  ok(!t[0].cut && t[0].id == 0, "nothing cut");
  ok(t[1].m == 0 && t[1].id == 51, "the again path serves it too");
  is_words(&takes[T_BEFORE], "n0 e0 n1 e1 n2",
           "before Python starts: the native frames as they were");
  is_words(&takes[T_AFTER], "n0 e0 n1 e1 n2",
           "after Python returned: the native frames as they were");
}

int
main(void)
{
  struct py_lib lib;
  if (!py_debian(&lib) || !py_load(&lib)) {
    printf("1..0 # SKIP no shared libpython 3.11 (%s)\n", PY_DEBIAN);
    return 0;
  }
  find_markers();
  cmg__stacks_configure(CMG__STACK_DEPTH_MAX);
  cmg__py_configure(true, true);
  test_layout();
  uintptr_t s[5];
  take(&takes[T_BEFORE], two_evals(s), 5, ROOM, false, 0);
  ok(py_run(&lib, script), "the script runs");
  take(&takes[T_AFTER], two_evals(s), 5, ROOM, false, 0);
  test_real();
  test_made_up();
  test_budget();
  test_again();
  test_threads();
  return done_testing();
}
