/*
 * Python call sites.  A stack record holds words; a Python frame is stored
 * as a tagged word holding the id of its site here, so stacks stay arrays
 * of words that hash and compare as before.
 *
 * A site is named the first time a capture meets it: the code object is
 * alive then (the frame holds a reference to it), so its qualified name,
 * file name and location table can be read, and the line is decoded once.
 * Later captures only look it up by the whole cmg__py_where: a code
 * object freed and another allocated at its address differs in some field
 * (its strings' and table's addresses, its qualified and file names'
 * hashes, first line, sizes and, from 3.12, its serial co_version), so it
 * gets a site of its own instead of the stale name: in 3.11, without
 * co_version, a function of the same shape made in a loop often takes a
 * freed one's code object, strings and table addresses all at once, and
 * only the name's content tells them apart.
 *
 * A capture meets the same few dozen sites again and again, and hashing
 * every field of each, then probing a half-megabyte table, cost more than
 * the rest of the Python walk (TLB misses, mostly).  So a small table of
 * the sites met lately, indexed by code address and offset alone, is
 * looked at first; a site there is taken only when its whole where is
 * equal, and then it is the site the big table holds for that where: the
 * big one is keyed by a hash of all the fields, and holds one site per
 * where.
 *
 * Like stacks.c: found lock-free through an open-addressing table of atomic
 * pointers, inserted under one mutex, memory from mmap only (never malloc:
 * we run inside the program's allocator and CUDA calls).  The table has a
 * fixed size, mapped on first use; past MAX_SITES distinct sites a new one
 * gets no id, and its frame is left out of the stack, counted, and marked
 * there as a cut of one Python frame.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "runtime/table_memory.h"
#include "runtime/python/pyline.h"
#include "runtime/report/report_text.h"

#define SLOTS (1u << 16)
#define MAX_SITES (SLOTS / 2)
#define CHUNK (1u << 18)
#define FUNCTION_MAX 256
#define FILE_MAX 1024

struct site {
  struct cmg__py_where where;
  uint64_t hash;
  uint32_t id;
  int line;
  const char *function, *file;
};

/* The recent sites' table: small enough to stay in a few cache lines and
 * TLB entries. */
#define RECENT 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct site *) *slots; /* SLOTS of them, once mapped */
static struct site **by_id;           /* MAX_SITES, index id - 1 */
static _Atomic uint32_t nsites;
static _Atomic(struct site *) recent[RECENT];
static _Atomic uint64_t dropped;
static struct cmg__chunks chunks = { .size = CHUNK };

/* ---- reading the interpreter's objects ------------------------------- */

static size_t
put_utf8(char *dst, uint32_t c)
{
  if (c < 0x80) {
    dst[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    dst[0] = (char)(0xc0 | c >> 6);
    dst[1] = (char)(0x80 | (c & 63));
    return 2;
  }
  if (c < 0x10000) {
    dst[0] = (char)(0xe0 | c >> 12);
    dst[1] = (char)(0x80 | (c >> 6 & 63));
    dst[2] = (char)(0x80 | (c & 63));
    return 3;
  }
  dst[0] = (char)(0xf0 | c >> 18);
  dst[1] = (char)(0x80 | (c >> 12 & 63));
  dst[2] = (char)(0x80 | (c >> 6 & 63));
  dst[3] = (char)(0x80 | (c & 63));
  return 4;
}

/* Copies a str object into dst (cap bytes with the NUL, at most
 * FILE_MAX) as the report writes text (report_text.h): its characters as UTF-8,
 * a lone surrogate encoded like any other character (Python's
 * "surrogatepass") and so escaped byte by byte, as is a NUL; "?" for
 * anything but a compact string, the only kind code objects hold.  At most
 * cap characters are read.  The state word's bits (interned:2, kind:3,
 * compact:1, ascii:1) are the same in 3.11 to 3.13. */
static void
copy_str(const struct cmg__py_objects *o, uintptr_t s, char *dst, size_t cap)
{
  strcpy(dst, "?");
  if (s == 0 || cmg__py_word_at(s, 8) != o->unicode_type)
    return;
  int64_t len = *(const int64_t *)(s + 16);
  uint32_t state = *(const uint32_t *)(s + 32);
  unsigned kind = state >> 2 & 7;
  bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
  if (!compact || len < 0)
    return;
  if (ascii) {
    size_t n = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
    cmg__text_escape(dst, cap, (const char *)(s + o->ascii_size), n);
    return;
  }
  /* Escaping never shortens, so cap bytes of UTF-8 are enough. */
  char utf8[FILE_MAX];
  const unsigned char *data = (const unsigned char *)(s + o->compact_size);
  size_t n = 0;
  for (int64_t i = 0; i < len && n + 4 <= cap; i++) {
    uint32_t c = kind == 1   ? data[i]
                 : kind == 2 ? ((const uint16_t *)data)[i]
                 : kind == 4 ? ((const uint32_t *)data)[i]
                             : '?';
    n += put_utf8(utf8 + n, c > 0x10ffff ? '?' : c);
  }
  cmg__text_escape(dst, cap, utf8, n);
}

/* Bytes of a string's data that its hash reads from each end: enough to
 * tell apart the names a program makes in a loop (f001, f002) and file
 * names that share a long directory. */
#define STR_ENDS 32
/* A longer string's length is not trusted to find its end: only its first
 * bytes are read. */
#define STR_TAIL_MAX 4096

static inline uint64_t
mix_word(uint64_t h, uint64_t w)
{
  h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return h ^ h >> 29;
}

/* h with the n bytes at p mixed in, a word at a time, and the last few
 * bytes read one by one: never past the string's end, and no more words
 * than the string has (most names are a word or two). */
static uint64_t
mix_bytes(uint64_t h, const unsigned char *p, uint64_t n)
{
  uint64_t w;
  for (; n >= 8; n -= 8, p += 8) {
    memcpy(&w, p, 8);
    h = mix_word(h, w);
  }
  if (n == 0)
    return h;
  w = 0;
  for (unsigned i = 0; i < n; i++)
    w |= (uint64_t)p[i] << (8 * i);
  return mix_word(h, w);
}

/* The hash of str object s's length and first and last bytes. */
static __attribute__((noinline)) uint64_t
str_bytes_hash(const struct cmg__py_objects *o, uintptr_t s, int64_t len)
{
  uint32_t state = *(const uint32_t *)(s + 32);
  unsigned kind = state >> 2 & 7;
  bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
  if (!compact || len < 0 || (kind != 1 && kind != 2 && kind != 4))
    return 0;
  const unsigned char *data =
      (const unsigned char *)(s + (ascii ? o->ascii_size : o->compact_size));
  uint64_t n = (uint64_t)len * kind;
  uint64_t h =
      mix_bytes((uint64_t)len << 3 | kind, data, n < STR_ENDS ? n : STR_ENDS);
  if (n > STR_ENDS && n <= STR_TAIL_MAX)
    h = mix_bytes(h, data + n - STR_ENDS, STR_ENDS);
  return h;
}

uint64_t
cmg__py_str_hash(const struct cmg__py_objects *o, uintptr_t s, bool bytes)
{
  if (s == 0 || cmg__py_word_at(s, 8) != o->unicode_type)
    return 0;
  /* The string's own hash, where Python computed it (every interned name
   * has it): one load rather than its bytes. */
  if (*(const int64_t *)(s + 24) != -1 || !bytes)
    return cmg__py_hash_word(s);
  return str_bytes_hash(o, s, *(const int64_t *)(s + 16));
}

/* ---- location tables -------------------------------------------------- */

/* Unsigned varint of 6-bit groups, low first, bit 6 saying more follow. */
static uint32_t
varint(const unsigned char **p, const unsigned char *end)
{
  uint32_t v = 0;
  for (unsigned shift = 0; *p < end && shift < 32; shift += 6) {
    unsigned b = *(*p)++;
    v |= (uint32_t)(b & 63) << shift;
    if (!(b & 64))
      break;
  }
  return v;
}

static int
svarint(const unsigned char **p, const unsigned char *end)
{
  uint32_t v = varint(p, end);
  return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* Each entry starts with a byte with bit 7 set: bits 3-6 its form, bits
 * 0-2 the code units it covers less one.  Forms 0-9 keep the line, 10-12
 * add 0-2, 13 and 14 add a signed varint (14 then has three more varints
 * of columns), 15 marks instructions without a line. */
int
cmg__py_line(const unsigned char *table, size_t len, int firstlineno,
             uint32_t lasti)
{
  const unsigned char *p = table, *end = table + len;
  int line = firstlineno;
  uint32_t addr = 0;
  while (p < end) {
    unsigned b = *p++;
    if (!(b & 0x80))
      return 0;
    unsigned form = b >> 3 & 15, units = (b & 7) + 1;
    bool none = false;
    if (form == 15) {
      none = true;
    } else if (form == 14) {
      line += svarint(&p, end);
      for (int i = 0; i < 3; i++)
        varint(&p, end);
    } else if (form == 13) {
      line += svarint(&p, end);
    } else if (form >= 10) {
      line += (int)form - 10;
      p += 2;
    } else {
      p += 1;
    }
    if (lasti < addr + units)
      return none || line < 0 ? 0 : line;
    addr += units;
  }
  return 0;
}

static int
line_of(const struct cmg__py_objects *o, const struct cmg__py_where *w)
{
  if (w->linetable == 0 || cmg__py_word_at(w->linetable, 8) != o->bytes_type)
    return 0;
  int64_t len = *(const int64_t *)(w->linetable + 16);
  if (len <= 0)
    return 0;
  return cmg__py_line((const unsigned char *)(w->linetable + 32), (size_t)len,
                      w->firstlineno, w->lasti);
}

/* ---- the table -------------------------------------------------------- */

static inline uint64_t
mix(uint64_t h, uint64_t v)
{
  h = (h ^ v) * 0x87c37b91114253d5ull;
  return h ^ (h >> 31);
}

static uint64_t
hash_where(const struct cmg__py_where *w)
{
  uint64_t h = mix(mix(w->qualname, w->filename), w->linetable);
  h = mix(h, (uint64_t)w->units << 32 | (uint32_t)w->firstlineno);
  h = mix(mix(mix(h, (uint64_t)w->table_len), w->tag[0]), w->tag[1]);
  h ^= (w->code ^ (uint64_t)w->lasti << 48) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

/* Field by field, without a branch: memcmp's call cost a fifth of a
 * capture's Python frames. */
static inline bool
same_where(const struct cmg__py_where *a, const struct cmg__py_where *b)
{
  uint64_t d = (a->code ^ b->code) | (a->qualname ^ b->qualname) |
               (a->filename ^ b->filename) | (a->linetable ^ b->linetable) |
               (a->lasti ^ b->lasti) |
               (uint32_t)(a->firstlineno ^ b->firstlineno) |
               (uint64_t)(a->units ^ b->units) |
               (uint64_t)(a->table_len ^ b->table_len) |
               (a->tag[0] ^ b->tag[0]) | (a->tag[1] ^ b->tag[1]);
  return d == 0;
}

static bool
same(const struct site *s, uint64_t h, const struct cmg__py_where *w)
{
  return s->hash == h && same_where(&s->where, w);
}

static inline _Atomic(struct site *) *
recent_slot(const struct cmg__py_where *w)
{
  uint64_t h = (w->code >> 4) * 0x9e3779b1u + w->lasti;
  return &recent[(h ^ h >> 12) & (RECENT - 1)];
}

static struct site *
find(uint64_t h, const struct cmg__py_where *w, size_t *empty)
{
  for (size_t i = h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
    struct site *s = atomic_load_explicit(&slots[i], memory_order_acquire);
    if (s == NULL) {
      *empty = i;
      return NULL;
    }
    if (same(s, h, w))
      return s;
  }
}

/* Under the lock: bump-allocates n bytes, 8-aligned. */
static void *
carve(size_t n)
{
  return cmg__chunks_take(&chunks, (n + 7) & ~(size_t)7);
}

static const char *
keep(const char *s)
{
  size_t n = strlen(s) + 1;
  char *p = carve(n);
  if (p != NULL)
    memcpy(p, s, n);
  return p ? p : "?";
}

/* Under the lock. */
static bool
ensure_table(void)
{
  if (slots != NULL)
    return true;
  by_id = cmg__pages(MAX_SITES * sizeof(*by_id));
  if (by_id == NULL)
    return false;
  slots = cmg__pages(SLOTS * sizeof(*slots));
  return slots != NULL;
}

/* Under the lock: a new site for w, to go into the big table's slot
 * empty; NULL when there is no room for it. */
static struct site *
add(const struct cmg__py_objects *o, const struct cmg__py_where *w, uint64_t h,
    size_t empty)
{
  char function[FUNCTION_MAX], file[FILE_MAX];
  uint32_t n = atomic_load_explicit(&nsites, memory_order_relaxed);
  struct site *s;
  if (n >= MAX_SITES || (s = carve(sizeof(*s))) == NULL)
    return NULL;
  copy_str(o, w->qualname, function, sizeof(function));
  copy_str(o, w->filename, file, sizeof(file));
  s->where = *w;
  s->hash = h;
  s->id = n + 1;
  s->line = line_of(o, w);
  s->function = keep(function);
  s->file = keep(file);
  by_id[n] = s;
  /* The count first, so that whoever finds the site through the table
   * also finds it by id. */
  atomic_store_explicit(&nsites, n + 1, memory_order_release);
  atomic_store_explicit(&slots[empty], s, memory_order_release);
  return s;
}

/* The site of w, added when the big table has none; NULL, counted, when
 * there is no room for it. */
static struct site *
insert(const struct cmg__py_objects *o, const struct cmg__py_where *w,
       uint64_t h)
{
  size_t empty;
  struct site *s = NULL;
  pthread_mutex_lock(&lock);
  if (ensure_table() && (s = find(h, w, &empty)) == NULL)
    s = add(o, w, h, empty);
  pthread_mutex_unlock(&lock);
  if (s == NULL)
    atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
  return s;
}

uint64_t
cmg__py_sites_dropped(void)
{
  return atomic_load_explicit(&dropped, memory_order_relaxed);
}

/* The big table's site of w, added when it has none, then made the
 * recent one in its slot; CMG__PY_NO_ROOM when there is no room. */
static __attribute__((noinline)) uint32_t
site_slow(const struct cmg__py_objects *o, const struct cmg__py_where *w,
          _Atomic(struct site *) *seen)
{
  uint64_t h = hash_where(w);
  size_t empty;
  struct site *s = NULL;
  if (atomic_load_explicit(&nsites, memory_order_acquire) != 0)
    s = find(h, w, &empty);
  if (s == NULL && (s = insert(o, w, h)) == NULL)
    return CMG__PY_NO_ROOM;
  atomic_store_explicit(seen, s, memory_order_release);
  return s->id;
}

uint32_t
cmg__py_site(const struct cmg__py_objects *o, const struct cmg__py_where *w)
{
  _Atomic(struct site *) *seen = recent_slot(w);
  struct site *s = atomic_load_explicit(seen, memory_order_acquire);
  if (s != NULL && same_where(&s->where, w))
    return s->id;
  return site_slow(o, w, seen);
}

void
cmg__py_sites_after_fork(void)
{
  pthread_mutex_init(&lock, NULL);
}

bool
cmg__py_site_get(uint32_t id, struct cmg__py_site_view *out)
{
  if (id == 0 || id > atomic_load_explicit(&nsites, memory_order_acquire))
    return false;
  const struct site *s = by_id[id - 1];
  out->function = s->function;
  out->file = s->file;
  out->line = s->line;
  return true;
}
