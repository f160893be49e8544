/*
 * Python frames in native stacks, without the GIL and without calling the
 * Python C API.  An allocation hook runs inside the frameworks' allocator
 * locks, often with the GIL released (ctypes and extensions release it
 * around CUDA calls): taking the GIL there can deadlock (PyTorch documents
 * GIL -> allocator lock in one thread, allocator lock -> GIL in another),
 * and in 3.11 any C-API call that allocates may run the garbage collector.
 * So the interpreter's memory is read instead.
 *
 * Only the calling thread's own frame chain is read.  It cannot change
 * while this thread is inside a C call, and each of its frames holds a
 * reference to its code object, so everything read is alive.  The thread's
 * state comes from the runtime's TSS key (the one PyGILState uses, set for
 * every thread that ever ran Python and kept while the GIL is released),
 * read from _PyRuntime at the version's offset and looked up with
 * pthread_getspecific; in 3.11, where the TSS keeps the main interpreter's
 * state, a sub-interpreter's state that this thread runs is taken instead
 * (running_state, pyread.c).  Even so every read is checked: pointers
 * must be aligned user-space addresses, code objects must have
 * &PyCode_Type as their type, offsets must fall inside the code, the walk
 * is bounded and stops at a frame that points to itself.  A wrong Python
 * stack is acceptable; a fault is not.
 *
 * The thread's innermost frame, and what a frame's site is named from,
 * are read by pyread.c.  The offsets come from pylayout.c; for 3.11 and
 * 3.12, whose headers fix them, the walk takes them as constants (walk),
 * and each frame is read without first loading the offsets of its fields.
 *
 * Memo: a loop's allocations share the outer part of their Python stack,
 * and naming a frame's site (cmg__py_where_of, then the site table) costs
 * more than the rest of its walk.  The thread's memo (stackmemo.h) keeps,
 * for each place of its last whole chain counted from the outermost frame,
 * what that frame's site was named from and the site; a frame found at its
 * place as its entry says takes the entry's site (recalled).
 *
 * Splice: since 3.11 one C frame of _PyEval_EvalFrameDefault runs several
 * Python frames.  In 3.11 the last of them has is_entry set; from 3.12 the
 * eval loop pushes a shim frame owned by the C stack below them.  Each
 * native return address inside _PyEval_EvalFrameDefault (its range from the
 * dynamic symbol table) takes the next such group.  Python frames left
 * over (an eval function not recognised, or a native stack cut at
 * stack_depth) are appended, never dropped.
 *
 * Again: the thread's memo also keeps its last splice's input, the native
 * words and the Python words in their groups, and the stack the caller
 * interned its output as.  A splice is a function of that input alone (the
 * eval loop's range and the room for words are fixed), so a capture whose
 * input is equal word for word takes that stack, and is neither spliced
 * nor interned again.  The memo stays held until the caller has the stack,
 * so that a signal's capture in between cannot make it another's.
 *
 * Proven once: a code object is proven to be the one an entry was named
 * from by reading its fields, once a walk.  Nested modules run one
 * wrapper's code object at every level; each entry of it shares the proof
 * of the one inward of it (share_proof), so only the innermost is read.
 *
 * As before: the Python words and their groups are a function of each
 * frame's flags and site.  A walk whose every frame is as its place in the
 * memo records (the same flags; a shim, or recalled) therefore gives the
 * groups of the walk that made those records, when the memo's splice
 * holds that walk's groups (walked).  They are then not built again, and
 * only the native words are compared.
 */
#include "config.h"

#include <string.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/python/pyframes.h"
#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/python/pyread.h"
#include "runtime/stacks/stackmemo.h"

/* Python frames kept per capture, at most.  Of a deeper chain the
 * innermost PY_MAX - PY_OUTER and the outermost PY_OUTER are kept (the
 * program's entry and its loop are the user's), with a cut between. */
#define PY_MAX 128
#define PY_OUTER 32
#define PY_INNER (PY_MAX - PY_OUTER)
_Static_assert(PY_MAX <= CMG__MEMO_PY_MAX, "a memo holds every frame kept");
/* Frame objects followed per capture, at most: a chain corrupted under our
 * feet (no GIL is held) may loop. */
#define PY_STEPS 4096
#define NONE CMG__PY_NONE
#define L cmg__py_layout

/* ---- the thread's last walk, remembered ------------------------------ */

/* The functions below take the offsets as o: cmg__py_layout, or for 3.11
 * and 3.12 a constant copy of their row (walk). */

/* Whether a frame's entry byte lies just before its owner byte (3.11),
 * so that one load reads both. */
static inline bool
adjacent_flags(const struct cmg__py_layout *o)
{
  return o->fr_is_entry != NONE && o->fr_owner == o->fr_is_entry + 1;
}

/* Frame f's owner and entry bytes, with a bit that no memo entry which
 * cannot be checked has.  Where they are adjacent, in the order of their
 * load: the entry byte low, the owner's above it. */
static inline uint32_t
frame_flags(const struct cmg__py_layout *o, uintptr_t f)
{
  if (adjacent_flags(o))
    return 1u << 16 | *(const uint16_t *)(f + o->fr_is_entry);
  uint32_t flags = 1u << 16 | *(const unsigned char *)(f + o->fr_owner);
  if (o->fr_is_entry != NONE)
    flags |= (uint32_t) * (const unsigned char *)(f + o->fr_is_entry) << 8;
  return flags;
}

/* A frame the C stack owns: 3.12's and 3.13's shim at each eval entry. */
static inline bool
shim_flags(const struct cmg__py_layout *o, uint32_t flags)
{
  return o->fr_is_entry == NONE && (flags & 0xff) == CMG__PY_OWNED_BY_CSTACK;
}

/* The last Python frame that an eval-loop C frame runs (3.11). */
static inline bool
entry_flags(const struct cmg__py_layout *o, uint32_t flags)
{
  if (o->fr_is_entry == NONE)
    return false;
  return (adjacent_flags(o) ? flags & 0xff : flags >> 8 & 0xff) != 0;
}

/* The tag of a qualified name: its hash word, or its bytes' hash where
 * Python has none (a module's "<module>", often). */
static inline uint64_t
qualname_tag(uintptr_t s)
{
  if (cmg__likely(*(const int64_t *)(s + 24) != -1))
    return cmg__py_hash_word(s);
  return cmg__py_str_hash(&L.objects, s, true);
}

/* Whether the code object at code has the fields w was named from: every
 * one that its site was named from, as the site table takes them
 * (pyline.c), each read from the object itself, alive while a frame
 * running it is, never through w's.  Equal addresses are not enough, as a
 * code object freed and another made at its address shows.  From 3.12 the
 * code's serial number stands for its location table's length and its
 * names' hashes, which are not read. */
static inline __attribute__((always_inline)) bool
code_as_named(const struct cmg__py_layout *o, const struct cmg__py_where *w,
              uintptr_t code)
{
  if (cmg__py_word_at(code, 8) != L.code_type)
    return false;
  uintptr_t qualname = cmg__py_word_at(code, o->co_qualname),
            filename = cmg__py_word_at(code, o->co_filename),
            linetable = cmg__py_word_at(code, o->co_linetable);
  /* One branch for the fields read from the code object; the objects they
   * point to are read only once they are found equal. */
  uint64_t d =
      (qualname ^ w->qualname) | (filename ^ w->filename) |
      (linetable ^ w->linetable) |
      (uint32_t)(*(const int *)(code + o->co_firstlineno) ^ w->firstlineno) |
      (uint64_t)(*(const int64_t *)(code + 16) ^ w->units);
  if (o->co_version != NONE)
    return (d | (*(const uint32_t *)(code + o->co_version) ^ w->tag[0])) == 0;
  if (d != 0)
    return false;
  d = (uint64_t)(*(const int64_t *)(linetable + 16) ^ w->table_len) |
      (cmg__py_hash_word(filename) ^ w->tag[1]);
  return d == 0 && qualname_tag(qualname) == w->tag[0];
}

/* Entry e, proven in walk now, shares the proof of the nearest entry
 * inward of it before end that this walk proved of the same code object,
 * or keeps its own.  Both proven in one walk at one address, they were
 * proven of one live object: their fields are alike.  A walk goes
 * outward, so that entry is proven first; nested modules' wrappers are
 * one code object at every level, and only the innermost is then read
 * from the interpreter. */
static CMG__COLD void
share_proof(struct cmg__memo_py *e, const struct cmg__memo_py *end,
            uint64_t now)
{
  e->share = e;
  e->share_gen = e->gen;
  for (const struct cmg__memo_py *s = e + 1; s < end; s++)
    if (s->proven == now && s->where.code == e->where.code) {
      e->share = s;
      e->share_gen = s->gen;
      return;
    }
}

/* Whether frame f is as the memo's entry e, before end in walk now, was
 * made from: the same state (flags) at the same instruction of the same
 * code object.  The code object is proven once a walk: by e's own fields
 * (code_as_named), or by the entry e shares a proof with, when that entry
 * has been proven in this walk and not named again since it was proven of
 * the object e was. */
static inline __attribute__((always_inline)) bool
recalled(const struct cmg__py_layout *o, struct cmg__memo_py *e,
         const struct cmg__memo_py *end, uint64_t now, uintptr_t f,
         uint32_t flags)
{
  uintptr_t code = cmg__py_word_at(f, o->fr_code);
  if (code != e->where.code || flags != e->flags ||
      cmg__py_word_at(f, o->fr_instr) != e->instr)
    return false;
  const struct cmg__memo_py *s = e->share;
  if (s->proven != now || s->gen != e->share_gen) {
    if (!code_as_named(o, &e->where, code))
      return false;
    /* The entry shared with did not prove it (named again, a shim now,
     * or past the chain's end): look for another. */
    if (cmg__unlikely(s != e))
      share_proof(e, end, now);
  }
  e->proven = now;
  return true;
}

/* The site of frame f, whose flags are given, at its place in the memo,
 * entry e, in walk now of the places before end: recalled from e, else
 * named (0 for a frame without one, CMG__PY_NO_ROOM for one the table has
 * no room to name) and kept in e.  e then records f (its flags are f's)
 * unless f could not be named or kept. */
static inline __attribute__((always_inline)) uint32_t
site_at(const struct cmg__py_layout *o, struct cmg__memo_py *e,
        const struct cmg__memo_py *end, uint64_t now, uintptr_t f,
        uint32_t flags)
{
  if (shim_flags(o, flags)) {
    e->flags = flags;
    return 0;
  }
  if (cmg__likely(recalled(o, e, end, now, f, flags)))
    return e->site;
  e->flags = 0;
  e->gen++;
  if (!cmg__py_where_of(f, &e->where))
    return 0;
  uint32_t site = cmg__py_site(&L.objects, &e->where);
  /* Code objects made after their numbers ran out are all numbered 0. */
  if (site != CMG__PY_NO_ROOM &&
      (o->co_version == NONE || e->where.tag[0] != 0)) {
    e->instr = cmg__py_word_at(f, o->fr_instr);
    e->flags = flags;
    e->site = site;
    e->proven = now;
    share_proof(e, end, now);
  }
  return site;
}

/* The site of frame f without a memo. */
static uint32_t
site_of(uintptr_t f)
{
  struct cmg__py_where w;
  return cmg__py_where_of(f, &w) ? cmg__py_site(&L.objects, &w) : 0;
}

/* The frame outward of f, or 0 where the chain ends: at a frame that
 * points to itself, or a word that is no pointer. */
static inline uintptr_t
outer_of(const struct cmg__py_layout *o, uintptr_t f)
{
  uintptr_t prev = cmg__py_word_at(f, o->fr_previous);
  return prev != f && cmg__py_is_pointer(prev) ? prev : 0;
}

/* The thread's frame objects, innermost first, into fs (room for PY_MAX):
 * all of them when they fit, else the innermost PY_INNER and then the
 * outermost PY_OUTER in order.  *left is the code frames passed over
 * between the two, CMG__CUT_UNKNOWN when the chain did not end within
 * PY_STEPS (the outermost are then not known and not kept). */
static inline __attribute__((always_inline)) unsigned
chain(const struct cmg__py_layout *o, uintptr_t *fs, uint32_t *left)
{
  uintptr_t f = cmg__py_current_frame();
  unsigned n = 0;
  *left = 0;
  /* Two loops: the frames that fit, nearly always all of them, are each
   * stored without a test of where. */
  for (; f != 0 && n < PY_MAX; n++) {
    fs[n] = f;
    f = outer_of(o, f);
  }
  for (; f != 0 && n < PY_STEPS; n++) {
    uintptr_t *slot = &fs[PY_INNER + (n - PY_INNER) % PY_OUTER];
    *left += !shim_flags(o, frame_flags(o, *slot));
    *slot = f;
    f = outer_of(o, f);
  }
  if (f != 0) {
    *left = CMG__CUT_UNKNOWN;
    return PY_INNER;
  }
  if (n <= PY_MAX)
    return n;
  /* The ring's oldest entry is the outermost of the cut's neighbours. */
  uintptr_t ring[PY_OUTER];
  unsigned first = (n - PY_INNER) % PY_OUTER;
  for (unsigned i = 0; i < PY_OUTER; i++)
    ring[i] = fs[PY_INNER + (first + i) % PY_OUTER];
  memcpy(fs + PY_INNER, ring, sizeof(ring));
  return PY_MAX;
}

/* The thread's Python frames as tagged words, innermost first, in groups:
 * the frames one eval-loop C frame runs, group k being words[ends[k - 1]
 * .. ends[k]).  words has room for PY_MAX + 1: each frame takes a word at
 * most, and chain()'s cut one more. */
struct groups {
  uintptr_t words[PY_MAX + 1];
  unsigned ends[PY_MAX + 1];
  unsigned n;
  unsigned frames; /* the walk's */
  bool recorded;   /* every frame recorded at its place in the memo */
  bool as_before;  /* not built: they are the memo's splice's (as_before) */
};

/* The words in g's groups. */
static inline unsigned
words_in(const struct groups *g)
{
  return g->n > 0 ? g->ends[g->n - 1] : 0;
}

/* Whether the word before words[w] is in a group not yet closed. */
static inline bool
group_open(const struct groups *g, unsigned w)
{
  return w > 0 && (g->n == 0 || g->ends[g->n - 1] != w);
}

/* Closes the group that the word before words[w] is the last of. */
static inline void
close_group(struct groups *g, unsigned w)
{
  if (group_open(g, w))
    g->ends[g->n++] = w;
}

/* Appends a cut of `frames` Python frames at words[w], into the cut just
 * before it when its group goes on: one place, one count.  Returns the
 * next word's index. */
static unsigned
add_cut(struct groups *g, unsigned w, uint32_t frames)
{
  uintptr_t last = w > 0 ? g->words[w - 1] : 0;
  if (group_open(g, w) && cmg__is_cut(last) && cmg__cut_is_python(last)) {
    g->words[w - 1] =
        cmg__cut_word(true, (uint64_t)cmg__cut_frames(last) + frames);
    return w;
  }
  g->words[w] = cmg__cut_word(true, frames);
  return w + 1;
}

/* Frame f's word for its site, as its flags say, into g at *w. */
static inline void
add_frame(const struct cmg__py_layout *o, struct groups *g, unsigned *w,
          uint32_t site, uint32_t flags, bool *cut)
{
  if (shim_flags(o, flags)) {
    close_group(g, *w);
    return;
  }
  if (site == CMG__PY_NO_ROOM) {
    *w = add_cut(g, *w, 1);
    *cut = true;
  } else if (site != 0) {
    g->words[(*w)++] = CMG__PY_TAG | site;
  }
  /* A byte, not a bool: a torn frame may hold any value there. */
  if (entry_flags(o, flags))
    close_group(g, *w);
}

/* Whether walk now, of frames fs[0..m), gives the groups the memo's splice
 * holds.  Groups are a function of each frame's flags and site alone.  So
 * they do when those groups came from a walk of m frames that each place
 * recorded (walked), and each frame is as its place records: of the same
 * flags, and a shim or recalled.  Not one entry's flags or site is then
 * changed, only when its code object was last proven. */
static inline __attribute__((always_inline)) bool
as_before(const struct cmg__py_layout *o, const uintptr_t *fs, unsigned m,
          struct cmg__memo *memo, uint64_t now)
{
  if (memo->splice.walked != m + 1)
    return false;
  const struct cmg__memo_py *end = &memo->py[m];
  struct cmg__memo_py *e = &memo->py[m];
  for (unsigned i = 0; i < m; i++) {
    uint32_t flags = frame_flags(o, fs[i]);
    --e;
    /* The flags first, though recalled() compares them again: in this
     * order a framework-shaped pair ran 17 ns faster, at the same count
     * of instructions (docs/PERFORMANCE.md). */
    if (flags != e->flags ||
        !(shim_flags(o, flags) || recalled(o, e, end, now, fs[i], flags)))
      return false;
  }
  return true;
}

/* The thread's Python frames into g, with a cut word where chain() left
 * frames out or a site could not be named.  A whole chain's frames are
 * numbered from the outermost, which stays as long as the program's loop
 * runs, and each is looked for at its place in the thread's memo. */
static inline __attribute__((always_inline)) void
walk_as(const struct cmg__py_layout *o, struct groups *g, bool *cut,
        struct cmg__memo *held)
{
  uintptr_t fs[PY_MAX];
  uint32_t left;
  unsigned m = chain(o, fs, &left), w = 0;
  struct cmg__memo *memo = left == 0 ? held : NULL;
  g->n = 0;
  g->frames = m;
  g->recorded = false;
  /* Each walk that uses the memo numbers its proofs anew. */
  uint64_t now = memo != NULL ? ++memo->walks : 0;
  g->as_before = memo != NULL && as_before(o, fs, m, memo, now);
  if (g->as_before)
    return;
  if (memo != NULL) {
    struct cmg__memo_py *e = &memo->py[m];
    const struct cmg__memo_py *end = e;
    bool recorded = true;
    for (unsigned i = 0; i < m; i++) {
      uint32_t flags = frame_flags(o, fs[i]);
      add_frame(o, g, &w, site_at(o, --e, end, now, fs[i], flags), flags, cut);
      recorded &= e->flags == flags;
    }
    g->recorded = recorded;
  } else {
    for (unsigned i = 0; i < m; i++) {
      if (i == PY_INNER && left != 0)
        w = add_cut(g, w, left);
      uint32_t flags = frame_flags(o, fs[i]);
      add_frame(o, g, &w, shim_flags(o, flags) ? 0 : site_of(fs[i]), flags,
                cut);
    }
    if (left != 0 && m == PY_INNER)
      w = add_cut(g, w, left);
  }
  close_group(g, w);
  *cut |= left != 0;
}

static const struct cmg__py_layout as_311 = CMG__PY_LAYOUT_311,
                                   as_312 = CMG__PY_LAYOUT_312;

/* The walk, with the offsets as constants where the version fixes them:
 * walk_as, and what it calls per frame, are always inlined, so that each
 * copy folds its own. */
static void
walk(struct groups *g, bool *cut, struct cmg__memo *held)
{
  if (L.minor == 11)
    walk_as(&as_311, g, cut, held);
  else if (L.minor == 12)
    walk_as(&as_312, g, cut, held);
  else
    walk_as(&L, g, cut, held);
}

/* The eval loop's code: a return address R there (R - 1 - lo < span) is
 * the C frame of one group of Python frames. */
struct eval_range {
  uintptr_t lo, span;
};

static inline bool
is_eval(struct eval_range r, uintptr_t ip)
{
  return ip - 1 - r.lo < r.span;
}

/* Where splicing stands in g: groups taken, and the next word. */
struct taking {
  unsigned taken, next;
};

/* The next group of g, or as much of it as room allows, into out; the
 * group counts as taken only when whole. */
static inline unsigned
take_group(const struct groups *g, struct taking *t, uintptr_t *out,
           unsigned room)
{
  unsigned len = g->ends[t->taken] - t->next;
  if (len <= room)
    t->taken++;
  else
    len = room;
  memcpy(out, &g->words[t->next], len * sizeof(*out));
  t->next += len;
  return len;
}

/* Native words splice at most: stack_depth frames and a cut. */
#define NATIVE_MAX (CMG__STACK_DEPTH_MAX + 1)
_Static_assert(NATIVE_MAX <= CMG__MEMO_MAX, "a memo holds every native word");

/* The places in ips[0..n) of its cuts and eval-loop frames, where splicing
 * stops, into stop[0..k), and n at stop[k]; returns k.  No branch a word:
 * most words are neither, and the loop ran at a branch per test. */
static unsigned
stops_in(struct eval_range r, const uintptr_t *ips, unsigned n,
         unsigned short *stop)
{
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    stop[k] = (unsigned short)i;
    k += (unsigned)cmg__is_cut(ips[i]) | (unsigned)is_eval(r, ips[i]);
  }
  stop[k] = (unsigned short)n;
  return k;
}

/* Eval frames outward of the native cut, which the outermost groups
 * belong to. */
static unsigned
evals_past_cut(const uintptr_t *ips, const unsigned short *stop, unsigned k)
{
  unsigned s = 0, e = 0;
  while (s < k && !cmg__is_cut(ips[stop[s]]))
    s++;
  for (; s < k; s++)
    e += !cmg__is_cut(ips[stop[s]]);
  return e;
}

/* ---- the thread's last splice, remembered ---------------------------- */

/* Whether the native words ips[0..n), with cut as it stands, are s's. */
static bool
same_native(const struct cmg__memo_splice *s, const uintptr_t *ips, unsigned n,
            bool cut)
{
  return s->native_n == n && s->cut == cut &&
         memcmp(s->native, ips, n * sizeof(*ips)) == 0;
}

/* Whether a splice of the native words ips[0..n) and the Python words g,
 * with cut as it stands, is s's: then it gives the same words. */
static bool
same_splice(const struct cmg__memo_splice *s, const uintptr_t *ips, unsigned n,
            const struct groups *g, bool cut)
{
  unsigned np = words_in(g);
  return s->py_groups == g->n && same_native(s, ips, n, cut) &&
         memcmp(s->ends, g->ends, g->n * sizeof(*g->ends)) == 0 &&
         memcmp(s->py, g->words, np * sizeof(*g->words)) == 0;
}

/* Into g, not built (as_before), the groups it stands for: s's. */
static void
take_groups(struct groups *g, const struct cmg__memo_splice *s)
{
  g->n = s->py_groups;
  memcpy(g->ends, s->ends, g->n * sizeof(*g->ends));
  memcpy(g->words, s->py, words_in(g) * sizeof(*g->words));
  g->recorded = true;
  g->as_before = false;
}

static void
keep_splice(struct cmg__memo_splice *s, const uintptr_t *ips, unsigned n,
            const struct groups *g, bool cut)
{
  unsigned np = words_in(g);
  s->id = 0;
  s->native_n = n;
  s->py_groups = g->n;
  s->cut = cut;
  memcpy(s->native, ips, n * sizeof(*ips));
  memcpy(s->ends, g->ends, g->n * sizeof(*g->ends));
  memcpy(s->py, g->words, np * sizeof(*g->words));
}

/* A loop allocates again and again from the same native and Python
 * frames: their splice, and its interning, are then the last capture's.
 * True when they are (again->id set); else the splice about to be made
 * is remembered, to take its stack in cmg__py_again_done. */
static bool
spliced_before(struct cmg__py_again *again, struct cmg__memo *memo,
               const uintptr_t *ips, unsigned n, struct groups *g, bool cut)
{
  *again = (struct cmg__py_again){ NULL, 0 };
  if (memo == NULL)
    return false;
  struct cmg__memo_splice *s = &memo->splice;
  if (g->as_before) {
    if (s->id != 0 && n <= NATIVE_MAX && same_native(s, ips, n, cut)) {
      *again = (struct cmg__py_again){ memo, s->id };
      return true;
    }
    take_groups(g, s);
  }
  s->walked = 0;
  if (n > NATIVE_MAX) {
    cmg__memo_leave(memo);
    return false;
  }
  again->memo = memo;
  bool same = s->id != 0 && same_splice(s, ips, n, g, cut);
  if (!same)
    keep_splice(s, ips, n, g, cut);
  s->walked = g->recorded ? g->frames + 1 : 0;
  again->id = same ? s->id : 0;
  return same;
}

void
cmg__py_again_done(struct cmg__py_again *again, uint32_t id)
{
  if (again->memo == NULL)
    return;
  again->memo->splice.id = id;
  cmg__memo_leave(again->memo);
}

unsigned
cmg__py_splice(const uintptr_t *ips, unsigned n, uintptr_t *out, unsigned max,
               bool *cut, struct cmg__py_again *again)
{
  struct groups g; /* not zeroed: its words are written before read */
  struct cmg__memo *memo = cmg__memo_enter();
  walk(&g, cut, memo);
  if (spliced_before(again, memo, ips, n, &g, *cut))
    return 0;
  unsigned np = words_in(&g);
  const struct eval_range r = { L.eval_lo, L.eval_hi - L.eval_lo };
  unsigned short stop[NATIVE_MAX + 1];
  unsigned nn = n < NATIVE_MAX ? n : NATIVE_MAX;
  unsigned k = stops_in(r, ips, nn, stop);
  unsigned outer = evals_past_cut(ips, stop, k), o = 0, i = 0, s = 0;
  struct taking t = { 0, 0 };
  /* One word is kept back for the cut that ends a stack that did not fit. */
  max--;
  while (i < nn && o < max) {
    /* The native frames up to the next stop, in one copy. */
    unsigned len = stop[s] - i < max - o ? stop[s] - i : max - o;
    memcpy(out + o, ips + i, len * sizeof(*out));
    o += len;
    i += len;
    if (i == nn || o == max)
      break;
    uintptr_t ip = ips[i++];
    s++;
    if (cmg__is_cut(ip)) {
      out[o++] = ip;
      while (g.n - t.taken > outer && o < max)
        o += take_group(&g, &t, out + o, max - o);
    } else if (t.taken < g.n) {
      o += take_group(&g, &t, out + o, max - o);
    } else {
      out[o++] = ip;
    }
  }
  while (t.next < np && o < max)
    out[o++] = g.words[t.next++];
  if (i < n || t.next < np) {
    out[o++] = cmg__cut_word(i == n, CMG__CUT_UNKNOWN);
    *cut = true;
  }
  return o;
}
