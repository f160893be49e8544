/*
 * Suppressions in LeakSanitizer's file format, so that a project's existing
 * habits carry over: one `leak:PATTERN` per line, `#` comment lines and
 * blank lines, leading and trailing blanks ignored; any other type is an
 * error, as it is for LeakSanitizer.  A pattern matches a substring of a
 * name; `*` matches any run of characters, a leading `^` anchors it at the
 * start of the name and a trailing `$` at the end.  The names are, for
 * every frame of a leak's stack (the hidden ones too): the function, the
 * module's path and the module's base name, or for a Python frame the
 * function (its qualified name, "Model.build"), the file's path and its
 * base name; and also the API the program called, so that
 * `leak:cuMemAllocManaged` works on reports without stacks.
 *
 * LeakSanitizer's TemplateMatch takes the first occurrence of each piece
 * between stars and never backtracks, so "a*b$" misses "ab_ab"; the glob
 * below backtracks, and matches whatever TemplateMatch matches and those
 * too.  The first rule in file order that matches a leak group hides it;
 * each rule counts the allocations and bytes it hid.  The groups of CUDA
 * graph memory pools and of contexts are not leaks, and no rule hides
 * them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/names.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/tool.h"

/* True if glob p (with '*') matches all of s. */
static bool
is_glob(const char *p, const char *s)
{
  const char *star = NULL, *mark = s;

  while (*s != '\0') {
    if (*p == '*') {
      star = p++;
      mark = s;
    } else if (*p == *s) {
      p++;
      s++;
    } else if (star != NULL) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (*p == '*')
    p++;
  return *p == '\0';
}

/* The pattern as a whole-name glob: "^foo" is "foo*", "bar" is "*bar*". */
static char *
compile(const char *pattern)
{
  size_t len = strlen(pattern);
  bool start = pattern[0] == '^';
  bool end = len > (size_t)start && pattern[len - 1] == '$';
  char *g = malloc(len + 3);
  size_t o = 0;

  if (g == NULL)
    return NULL;
  if (!start)
    g[o++] = '*';
  memcpy(g + o, pattern + start, len - start - end);
  o += len - start - end;
  if (!end)
    g[o++] = '*';
  g[o] = '\0';
  return g;
}

bool
cmg__supp_is_match(const char *pattern, const char *text)
{
  if (text == NULL || text[0] == '\0')
    return false;
  char *g = compile(pattern);
  if (g == NULL)
    return false;
  bool hit = is_glob(g, text);
  free(g);
  return hit;
}

static int
add_rule(struct cmg__supp *s, const char *pattern, const char *file,
         unsigned line)
{
  if (s->n == s->cap) {
    size_t cap = s->cap != 0 ? s->cap * 2 : 8;
    struct cmg__supp_rule *bigger = realloc(s->rules, cap * sizeof(*bigger));

    if (bigger == NULL)
      return -ENOMEM;
    s->rules = bigger;
    s->cap = cap;
  }
  struct cmg__supp_rule *r = &s->rules[s->n];
  memset(r, 0, sizeof(*r));
  r->pattern = strdup(pattern);
  r->file = strdup(file);
  r->line = line;
  if (r->pattern == NULL || r->file == NULL) {
    free(r->pattern);
    free(r->file);
    return -ENOMEM;
  }
  s->n++;
  return 0;
}

/* Checks one line; adds its rule.  Returns 0 or -EINVAL with err set. */
static int
parse_line(struct cmg__supp *s, char *text, const char *file, unsigned line,
           char *err, size_t errlen)
{
  text += strspn(text, " \t\r\n");
  char *end = text + strlen(text);
  while (end > text && strchr(" \t\r\n", end[-1]) != NULL)
    *--end = '\0';
  if (text[0] == '\0' || text[0] == '#')
    return 0;

  char *colon = strchr(text, ':');
  if (colon == NULL) {
    snprintf(err, errlen, "%s:%u: expected leak:PATTERN, got '%.60s'", file,
             line, text);
    return -EINVAL;
  }
  *colon = '\0';
  if (strcmp(text, "leak") != 0) {
    snprintf(err, errlen,
             "%s:%u: unknown suppression type '%.40s' (only "
             "leak:PATTERN is read)",
             file, line, text);
    return -EINVAL;
  }
  char *pattern = colon + 1;
  pattern += strspn(pattern, " \t");
  if (pattern[0] == '\0' || strcmp(pattern, "^") == 0 ||
      strcmp(pattern, "$") == 0 || strcmp(pattern, "^$") == 0) {
    snprintf(err, errlen, "%s:%u: empty pattern after leak:", file, line);
    return -EINVAL;
  }
  if (add_rule(s, pattern, file, line) != 0) {
    snprintf(err, errlen, "%s: out of memory", file);
    return -ENOMEM;
  }
  return 0;
}

int
cmg__supp_load(struct cmg__supp *s, const char *file, char *err, size_t errlen)
{
  FILE *f = fopen(file, "r");
  char *text = NULL;
  size_t cap = 0;
  unsigned line = 0;
  int rc = 0;

  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot open: %s", file, strerror(errno));
    return -errno;
  }
  for (;;) {
    ssize_t got = getline(&text, &cap, f);

    if (rc != 0 || got < 0)
      break;
    line++;
    if ((size_t)got != strlen(text)) {
      snprintf(err, errlen, "%s:%u: a NUL byte; not a suppressions file", file,
               line);
      rc = -EINVAL;
      break;
    }
    rc = parse_line(s, text, file, line, err, errlen);
  }
  if (rc == 0 && ferror(f)) {
    snprintf(err, errlen, "%s: cannot read: %s", file, strerror(errno));
    rc = -EIO;
  }
  free(text);
  fclose(f);
  return rc;
}

void
cmg__supp_free(struct cmg__supp *s)
{
  for (size_t i = 0; i < s->n; i++) {
    free(s->rules[i].pattern);
    free(s->rules[i].file);
  }
  free(s->rules);
  memset(s, 0, sizeof(*s));
}

/* Whether glob g matches any name of a frame; cached per frame in seen
 * (0 unknown, 1 no, 2 yes). */
static bool
is_frame_match(const struct cmg__index *ix, uint32_t frame, const char *g,
               unsigned char *seen)
{
  const struct cmg__index_frame *f = &ix->frames[frame];
  bool hit = false;

  if (seen[frame] != 0)
    return seen[frame] == 2;
  if (f->function != NULL && f->function[0] != '\0')
    hit = is_glob(g, f->function);
  if (!hit && f->python && f->file != NULL) {
    const char *base = cmg__names_base(f->file);

    hit = is_glob(g, f->file) || (base != f->file && is_glob(g, base));
  }
  if (!hit && f->module != CMG__TOOL_NONE) {
    const struct cmg__index_module *m = &ix->modules[f->module];

    hit = (m->path[0] != '\0' && is_glob(g, m->path)) ||
          (m->name[0] != '\0' && is_glob(g, m->name));
  }
  seen[frame] = hit ? 2 : 1;
  return hit;
}

int
cmg__supp_apply(struct cmg__supp *s, struct cmg__view *v)
{
  const struct cmg__index *ix = v->ix;

  for (size_t r = 0; r < s->n; r++) {
    struct cmg__supp_rule *rule = &s->rules[r];
    unsigned char *seen = calloc(ix->n_frames + 1, 1);
    char *g = compile(rule->pattern);

    if (seen == NULL || g == NULL) {
      free(seen);
      free(g);
      return -ENOMEM;
    }
    for (size_t i = 0; i < v->n_leaks; i++) {
      struct cmg__view_leak *l = &v->leaks[i];
      bool hit = false;

      /* Graph memory and contexts are not leaked, so no leak: rule is
       * about them. */
      if (!cmg__leak_class_in_leaks(cmg__leak_class_of(l)))
        continue;
      if (l->api[0] != '\0')
        hit = is_glob(g, l->api);
      for (uint32_t k = 0;
           !hit && l->stack != CMG__TOOL_NONE && k < ix->stacks[l->stack].n;
           k++)
        hit = is_frame_match(ix, ix->stacks[l->stack].frames[k], g, seen);
      if (!hit)
        continue;
      l->rule = (uint32_t)r;
      rule->count = cmg__tool_add(rule->count, l->count);
      rule->bytes = cmg__tool_add(rule->bytes, l->bytes);
    }
    free(seen);
    free(g);
  }
  return 0;
}
