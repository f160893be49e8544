/*
 * Reports built by hand for the tests of the reader's model (test_index,
 * test_frame_class, test_pool_blocks, test_view, test_delta,
 * test_symbolize): a struct cmg__model_report filled as the loader fills
 * one, every table and string malloc'd, so that the model may grow its
 * frames and stacks in place and cmg__read_report_free() frees it whole.
 * A test then says only the modules, frames, stacks and leaks it is about.
 */
#ifndef CMG_TEST_REPORT_BUILDER_H
#define CMG_TEST_REPORT_BUILDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/tool.h"

/* One more element at the end of a table of n; the table may move. */
#define REPORT_PUSH(table, n)                                                  \
  (((table) = realloc((table), ((n) + 1) * sizeof(*(table)))) == NULL          \
       ? (fprintf(stderr, "out of memory\n"), exit(99), (table))               \
       : (memset(&(table)[(n)], 0, sizeof(*(table))), &(table)[(n)++]))

static inline char *
report_strdup(const char *s)
{
  return s != NULL ? strdup(s) : NULL;
}

/* An empty report of process pid, as a file named file would give it. */
static inline void
report_init(struct cmg__model_report *r, const char *file, long pid)
{
  memset(r, 0, sizeof(*r));
  r->file = strdup(file);
  r->pid = pid;
  r->exe = strdup("/opt/app/bin/app");
  r->command = strdup("/opt/app/bin/app --train");
  r->hostname = strdup("node1");
  r->reason = strdup("exit");
  r->exit_status = -1;
}

static inline uint32_t
report_module(struct cmg__model_report *r, const char *path,
              const char *build_id)
{
  struct cmg__model_module *m = REPORT_PUSH(r->modules, r->n_modules);

  m->path = strdup(path);
  m->build_id = report_strdup(build_id);
  return (uint32_t)(r->n_modules - 1);
}

/* A native frame at offset in module (or, with module CMG__TOOL_NONE, at
 * an address alone), named function (NULL: unnamed). */
static inline uint32_t
report_frame(struct cmg__model_report *r, uint32_t module, uint64_t offset,
             const char *function)
{
  struct cmg__model_frame *f = REPORT_PUSH(r->frames, r->n_frames);

  f->module = module;
  f->has_offset = module != CMG__TOOL_NONE;
  f->offset = offset;
  f->address = 0x7f0000000000ull + offset;
  f->function = report_strdup(function);
  return (uint32_t)(r->n_frames - 1);
}

static inline uint32_t
report_py_frame(struct cmg__model_report *r, const char *function,
                const char *file, uint64_t line)
{
  struct cmg__model_frame *f = REPORT_PUSH(r->frames, r->n_frames);

  f->module = CMG__TOOL_NONE;
  f->python = true;
  f->function = report_strdup(function);
  f->file = report_strdup(file);
  f->line = line;
  return (uint32_t)(r->n_frames - 1);
}

static inline uint32_t
report_stack_of(struct cmg__model_report *r, const uint32_t *frames, uint32_t n)
{
  struct cmg__model_stack *s = REPORT_PUSH(r->stacks, r->n_stacks);

  s->n = n;
  s->frames = malloc((n + 1) * sizeof(*s->frames));
  if (s->frames == NULL)
    exit(99);
  if (n > 0)
    memcpy(s->frames, frames, n * sizeof(*frames));
  return (uint32_t)(r->n_stacks - 1);
}

/* A stack of the frames given, innermost first. */
#define REPORT_STACK(r, ...)                                                   \
  report_stack_of((r), (const uint32_t[]){ __VA_ARGS__ },                      \
                  (uint32_t)(sizeof((const uint32_t[]){ __VA_ARGS__ }) /       \
                             sizeof(uint32_t)))

static inline struct cmg__model_leak *
report_leak(struct cmg__model_report *r, uint32_t stack, const char *api,
            const char *kind, int device, uint64_t count, uint64_t bytes)
{
  struct cmg__model_leak *l = REPORT_PUSH(r->leaks, r->n_leaks);

  l->stack = stack;
  l->api = strdup(api);
  l->kind = strdup(kind);
  l->device = device;
  l->count = count;
  l->bytes = bytes;
  return l;
}

static inline void
report_thread(struct cmg__model_leak *l, uint32_t tid, const char *name)
{
  struct cmg__model_thread *t = REPORT_PUSH(l->threads.list, l->threads.n);

  l->threads.cap = l->threads.n;
  t->tid = tid;
  t->name = report_strdup(name);
}

static inline struct cmg__model_device *
report_device(struct cmg__model_report *r, int ordinal, const char *name,
              const char *uuid)
{
  struct cmg__model_device *d = REPORT_PUSH(r->devices, r->n_devices);

  d->ordinal = ordinal;
  d->name = strdup(name);
  d->uuid = strdup(uuid);
  return d;
}

/* A composition of n (stack, bytes, count) triples. */
static inline void
report_comp(struct cmg__model_comp *c, uint64_t bytes, double time, size_t n,
            const uint64_t (*items)[3])
{
  c->bytes = bytes;
  c->time = time;
  c->n = n;
  c->items = calloc(n + 1, sizeof(*c->items));
  if (c->items == NULL)
    exit(99);
  for (size_t i = 0; i < n; i++) {
    c->items[i].stack = (uint32_t)items[i][0];
    c->items[i].bytes = items[i][1];
    c->items[i].count = items[i][2];
  }
}

#endif /* CMG_TEST_REPORT_BUILDER_H */
