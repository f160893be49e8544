/*
 * A report file into a cJSON tree: the whole file read into memory (one
 * read for a regular file, growing for a pipe), so no more of it than
 * CMG__TOOL_FILE_MAX (a file larger is refused by its size, unread), then
 * checked for being text, its \u0000 escapes spelled as the library spells
 * a NUL, then parsed.  A parse error is reported by line and column of the
 * file; one at cJSON's nesting limit is said to be that, and a file that
 * ends inside the JSON is called truncated, since that is what a report cut
 * short by a full disk or a killed writer looks like.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/size.h"

#include "reader/load/fields.h"
#include "reader/load/jsonfile.h"
#include "reader/tool.h"

/* ---- cJSON's memory ---------------------------------------------------- */

/*
 * cJSON allocates every node, key and string on its own; a report with a
 * million live allocations is some seven million of them, and freeing them
 * one by one costs as much again.  While a report is parsed, cJSON's hooks
 * point at a bump allocator whose chunks are dropped whole once the fields
 * are copied out, which about halves the time to read a large report.
 * Under AddressSanitizer the plain allocator is kept, so that every node
 * stays a separately checked block.
 */
#ifdef __SANITIZE_ADDRESS__
static const bool use_arena = false;
#else
static const bool use_arena = true;
#endif

#define ARENA_CHUNK ((size_t)16 << 20)
#define ARENA_ALIGN 16

struct chunk {
  struct chunk *next;
  size_t used, cap;
  unsigned char *data;
};

static struct chunk *arena;
static bool arena_failed;

/* A chunk in transparent huge pages where the system gives them on
 * request: faulting a large report's nodes in 4 KiB at a time was a fifth
 * of the time to read it. */
static unsigned char *
chunk_map(size_t cap)
{
  void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);

  if (p == MAP_FAILED)
    return NULL;
  (void)madvise(p, cap, MADV_HUGEPAGE);
  return p;
}

static void *
arena_alloc(size_t n)
{
  struct chunk *c = arena;

  n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (c == NULL || c->cap - c->used < n) {
    size_t cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;

    c = malloc(sizeof(*c));
    if (c == NULL || (c->data = chunk_map(cap)) == NULL) {
      free(c);
      arena_failed = true;
      return NULL;
    }
    c->cap = cap;
    c->used = 0;
    /* A block of its own goes behind the current chunk, which stays open. */
    if (arena != NULL && cap != ARENA_CHUNK) {
      c->next = arena->next;
      arena->next = c;
      c->used = n;
      return c->data;
    }
    c->next = arena;
    arena = c;
  }
  c->used += n;
  return c->data + c->used - n;
}

static void
arena_free(void *p)
{
  (void)p;
}

static void
arena_release(void)
{
  while (arena != NULL) {
    struct chunk *next = arena->next;

    munmap(arena->data, arena->cap);
    free(arena);
    arena = next;
  }
}

/* Parses with the arena when it is on; *oom tells a failure for want of
 * memory from bad JSON. */
static cJSON *
parse_json(const char *buf, size_t len, const char **end, bool *oom)
{
  cJSON_Hooks hooks = { arena_alloc, arena_free };
  cJSON *root;

  if (!use_arena) {
    root = cJSON_ParseWithLengthOpts(buf, len, end, true);
    *oom = false;
    return root;
  }
  arena_failed = false;
  cJSON_InitHooks(&hooks);
  root = cJSON_ParseWithLengthOpts(buf, len, end, true);
  cJSON_InitHooks(NULL);
  *oom = arena_failed;
  return root;
}

void
cmg__jsonfile_drop(cJSON *root)
{
  if (use_arena)
    arena_release();
  else
    cJSON_Delete(root);
}

/* ---- files ------------------------------------------------------------ */

/* "1.5 GiB (N bytes), more than the 1.0 GiB ...": a file past
 * CMG__TOOL_FILE_MAX, of `size` bytes, or where size is 0, standard input
 * that went on past it. */
static int
too_large(struct cmg__fields_reader *rd, uint64_t size)
{
  char has[32], max[32];

  cmg__format_size(CMG__TOOL_FILE_MAX, max, sizeof(max));
  if (size == 0)
    return cmg__fields_fail(rd,
                            "more than %s (%llu bytes), the most this tool "
                            "reads of a report",
                            max, CMG__TOOL_FILE_MAX);
  cmg__format_size(size, has, sizeof(has));
  return cmg__fields_fail(rd,
                          "%s (%llu bytes), more than the %s (%llu bytes) "
                          "this tool reads of a report",
                          has, (unsigned long long)size, max,
                          CMG__TOOL_FILE_MAX);
}

/* The whole of file in a NUL-terminated buffer; *len excludes the NUL.  A
 * regular file's size is known before it is read; a pipe is read until it
 * passes the limit. */
static int
slurp(const char *file, char **out, size_t *len, struct cmg__fields_reader *rd)
{
  int fd = strcmp(file, "-") == 0 ? STDIN_FILENO : open(file, O_RDONLY);
  size_t cap = 65536, n = 0;
  struct stat st;
  int rc = 0;

  if (fd < 0)
    return cmg__fields_fail(rd, "cannot open: %s", strerror(errno));
  /* One read into a buffer of the file's size, when it has one. */
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if ((uint64_t)st.st_size > CMG__TOOL_FILE_MAX)
      rc = too_large(rd, (uint64_t)st.st_size);
    cap = (size_t)st.st_size + 2;
  }
  char *buf = rc == 0 ? malloc(cap) : NULL;
  while (rc == 0 && buf != NULL) {
    if (n + 1 >= cap) {
      size_t want =
          cap * 2 < CMG__TOOL_FILE_MAX + 2 ? cap * 2 : CMG__TOOL_FILE_MAX + 2;
      char *bigger = cap < want ? realloc(buf, want) : NULL;

      if (cap >= want)
        rc = too_large(rd, 0);
      if (bigger == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap = want;
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      rc = cmg__fields_fail(rd, "cannot read: %s", strerror(errno));
      free(buf);
      buf = NULL;
    }
    if (got <= 0)
      break;
    n += (size_t)got;
  }
  if (fd != STDIN_FILENO)
    close(fd);
  if (rc != 0)
    return rc;
  if (buf == NULL) {
    cmg__fields_fail(rd, "out of memory");
    return -ENOMEM;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* ---- what the text holds ---------------------------------------------- */

/* Where the text was made shorter: the offsets, in the text as parsed,
 * just after each rewritten escape, in order. */
struct shrunk {
  size_t *at, n, cap;
};

static int
note_shrunk(struct shrunk *s, size_t at)
{
  if (s->n == s->cap) {
    size_t cap = s->cap != 0 ? s->cap * 2 : 16;
    size_t *p = realloc(s->at, cap * sizeof(*p));

    if (p == NULL)
      return -ENOMEM;
    s->at = p;
    s->cap = cap;
  }
  s->at[s->n++] = at;
  return 0;
}

/*
 * JSON may spell a NUL inside a string as \u0000, and cJSON ends the string
 * there, so that "a\u0000b" would read as "a".  Each such escape becomes
 * \\x00, the four characters the library writes for a NUL (the format's
 * rule for text from the process), in place: the text shrinks by one byte
 * for each, noted in *s so that an error's column is the file's.  Escapes
 * are walked from backslash to backslash, so that the second one of \\ is
 * never taken for the start of one.  Returns 0 or -ENOMEM.
 */
static int
rewrite_nul_escapes(char *buf, size_t *len, struct shrunk *s)
{
  char *r = buf, *w = buf, *end = buf + *len;

  for (;;) {
    char *bs = memchr(r, '\\', (size_t)(end - r));
    size_t run = (size_t)((bs != NULL ? bs : end) - r);

    if (w != r)
      memmove(w, r, run);
    w += run;
    r += run;
    if (bs == NULL)
      break;
    size_t esc = end - r >= 6 && memcmp(r, "\\u0000", 6) == 0 ? 6 : 2;
    if (esc == 6) {
      memcpy(w, "\\\\x00", 5);
      w += 5;
      r += 6;
      if (note_shrunk(s, (size_t)(w - buf)) != 0)
        return -ENOMEM;
      continue;
    }
    esc = end - r < 2 ? 1 : 2;
    memmove(w, r, esc);
    w += esc;
    r += esc;
  }
  *w = '\0';
  *len = (size_t)(w - buf);
  return 0;
}

/* How many bytes the rewrite took out before offset pos. */
static size_t
shrunk_before(const struct shrunk *s, size_t pos)
{
  size_t lo = 0, hi = s->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;

    if (s->at[mid] <= pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Line and column (from 1) in the file of offset pos in buf, the text as
 * parsed. */
static void
position(const char *buf, size_t pos, const struct shrunk *s, size_t *line,
         size_t *col)
{
  size_t start = 0;

  *line = 1;
  for (size_t i = 0; i < pos; i++) {
    if (buf[i] == '\n') {
      (*line)++;
      start = i + 1;
    }
  }
  *col = pos - start + 1 + shrunk_before(s, pos) - shrunk_before(s, start);
}

/* How many arrays and objects are open at offset pos of JSON text buf,
 * strings skipped. */
static size_t
depth_at(const char *buf, size_t pos)
{
  size_t depth = 0;
  bool in_string = false;

  for (size_t i = 0; i < pos; i++) {
    char c = buf[i];

    if (in_string && c == '\\')
      i++;
    else if (c == '"')
      in_string = !in_string;
    else if (!in_string && (c == '[' || c == '{'))
      depth++;
    else if (!in_string && (c == ']' || c == '}') && depth > 0)
      depth--;
  }
  return depth;
}

/*
 * Why text that cJSON could not parse is not a report, in rd.  cJSON points
 * at the start of the value it could not finish.  One nested past its limit
 * is said to be so: it may be valid JSON, though no report is.  For a file
 * cut short that point is somewhere in the middle; a report always ends with
 * the '}' of its object, so a file that starts like one and does not end
 * like one is called truncated.
 */
static int
explain(const char *buf, size_t len, const char *end, const struct shrunk *s,
        struct cmg__fields_reader *rd)
{
  size_t pos = end != NULL && end >= buf ? (size_t)(end - buf) : len;
  char first = buf[strspn(buf, " \t\r\n")];
  size_t i, line, col;

  if (pos < len && (buf[pos] == '[' || buf[pos] == '{') &&
      depth_at(buf, pos) >= CJSON_NESTING_LIMIT) {
    position(buf, pos, s, &line, &col);
    return cmg__fields_fail(rd,
                            "arrays and objects nested deeper than the %d "
                            "levels this tool reads (line %zu, column %zu)",
                            CJSON_NESTING_LIMIT, line, col);
  }
  for (i = len; i > 0 && strchr(" \t\r\n", buf[i - 1]) != NULL; i--)
    ;
  if (first == '{' && (pos >= len || buf[i - 1] != '}')) {
    position(buf, i, s, &line, &col);
    return cmg__fields_fail(rd,
                            "truncated JSON: the file ends at line %zu "
                            "before the report does",
                            line);
  }
  position(buf, pos, s, &line, &col);
  return cmg__fields_fail(rd, "not valid JSON (line %zu, column %zu)", line,
                          col);
}

int
cmg__jsonfile_load(const char *file, cJSON **root,
                   struct cmg__fields_reader *rd)
{
  struct shrunk s = { NULL, 0, 0 };
  const char *end = NULL;
  char *buf = NULL;
  size_t len = 0;
  bool oom = false;
  int rc = slurp(file, &buf, &len, rd);

  *root = NULL;
  if (rc != 0)
    return rc;
  if (strspn(buf, " \t\r\n") == len)
    rc = cmg__fields_fail(rd, "empty file, not a cumemguard report");
  else if (memchr(buf, '\0', len) != NULL)
    rc = cmg__fields_fail(rd, "not a text file (it holds a NUL byte)");
  else if ((rc = rewrite_nul_escapes(buf, &len, &s)) == 0)
    /* The length includes the NUL: cJSON wants it to end the value. */
    *root = parse_json(buf, len + 1, &end, &oom);
  if (rc == 0 && *root == NULL) {
    cmg__jsonfile_drop(NULL);
    rc = oom ? -ENOMEM : explain(buf, len, end, &s, rd);
  }
  if (rc == -ENOMEM)
    cmg__fields_fail(rd, "out of memory");
  free(s.at);
  free(buf);
  return rc;
}
