/*
 * Unit tests of frame_name.c, how a frame is named when printed: the
 * short label of the flame graph, the one-line views and the folded
 * stacks; the numbered frames' fuller form, by default and with
 * --all-frames; the paragraph that says which modules kept the report's
 * names; and the names of a report's frames as written.  Every fallback
 * is covered (no function, no module, no offset, no line, a Python frame
 * without a file), because those are the frames a person must still be
 * able to find, and the frames are built by hand so that only the naming
 * is tested.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/show/frame_name.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum { MOD_MODEL, MOD_TRAINER, MOD_FOO, N_MODS };

static struct cmg__index_module mods[N_MODS] = {
  [MOD_MODEL] = { .name = "libmodel.so" },
  [MOD_TRAINER] = { .name = "trainer" },
  [MOD_FOO] = { .name = "libfoo.so" },
};

/* A native frame of module m at offset off, named fn (NULL: unnamed), with
 * its function's offset fo (0: none). */
#define NATIVE(m, off, fn, fo)                                                 \
  .module = (m), .has_offset = true, .offset = (off), .function = (fn),        \
  .has_function_offset = (fo) != 0, .function_offset = (fo)

/* The frames, and how each reads: as a label, as a numbered frame, and as
 * one with --all-frames. */
static const struct frame_case {
  const char *what;
  struct cmg__index_frame fr;
  const char *label, *frame, *all;
} cases[] = {
  { "a named frame",
    { NATIVE(MOD_TRAINER, 0x1a2b, "alloc_weights", 0x12) },
    "alloc_weights",
    "alloc_weights+0x12 (trainer+0x1a2b)",
    "alloc_weights+0x12 (trainer+0x1a2b)" },
  { "a C++ function: its parameters only with all frames",
    { NATIVE(MOD_MODEL, 0x8d10, "model::Buffer::grow(unsigned long)", 0x44),
      .name = "model::Buffer::grow" },
    "model::Buffer::grow",
    "model::Buffer::grow+0x44 (libmodel.so+0x8d10)",
    "model::Buffer::grow(unsigned long)+0x44 (libmodel.so+0x8d10)" },
  { "a source line: its base name, the full path with all frames",
    { NATIVE(MOD_TRAINER, 0x1f00, "train_step(int)", 0x7e),
      .name = "train_step", .file = "/src/app/train.cc", .line = 42 },
    "train_step (train.cc:42)",
    "train_step (train.cc:42)",
    "train_step(int)+0x7e (/src/app/train.cc:42, trainer+0x1f00)" },
  { "a source file without a line",
    { NATIVE(MOD_TRAINER, 0x1f10, "setup", 0x4), .file = "/src/app/setup.cc" },
    "setup (setup.cc)",
    "setup (setup.cc)",
    "setup+0x4 (/src/app/setup.cc, trainer+0x1f10)" },
  { "an inlined call with its line",
    { NATIVE(MOD_TRAINER, 0x1f20, "grow_inline", 0), .inlined = true,
      .file = "/src/app/grow.h", .line = 9 },
    "grow_inline (grow.h:9)",
    "grow_inline (grow.h:9, inlined)",
    "grow_inline (/src/app/grow.h:9, trainer+0x1f20, inlined)" },
  { "an inlined call without a line",
    { NATIVE(MOD_MODEL, 0x30, "copy_rows", 0x3), .inlined = true },
    "copy_rows",
    "copy_rows+0x3 (libmodel.so+0x30, inlined)",
    "copy_rows+0x3 (libmodel.so+0x30, inlined)" },
  { "a line but no function",
    { NATIVE(MOD_TRAINER, 0x40, NULL, 0), .file = "/src/app/x.cc", .line = 5 },
    "? (x.cc:5)",
    "? (x.cc:5)",
    "? (/src/app/x.cc:5, trainer+0x40)" },
  { "no name: its module and offset",
    { NATIVE(MOD_TRAINER, 0x2380, NULL, 0) },
    "trainer+0x2380",
    "? (trainer+0x2380)",
    "? (trainer+0x2380)" },
  { "a module without an offset",
    { .module = MOD_FOO,
      .address = 0x7000,
      .function = "foo_alloc",
      .has_function_offset = true,
      .function_offset = 0x10 },
    "foo_alloc",
    "foo_alloc+0x10 (libfoo.so)",
    "foo_alloc+0x10 (libfoo.so)" },
  { "neither module nor name: its address",
    { .module = CMG__TOOL_NONE, .address = 0x55550700dead },
    "0x55550700dead",
    "? (0x55550700dead)",
    "? (0x55550700dead)" },
  { "a Python frame: the file's base name, the full path numbered",
    { .module = CMG__TOOL_NONE,
      .python = true,
      .function = "Model.build",
      .file = "/home/user/work/model.py",
      .line = 7 },
    "Model.build (model.py:7)",
    "Model.build (/home/user/work/model.py:7)",
    "Model.build (/home/user/work/model.py:7)" },
  { "a Python frame without a file",
    { .module = CMG__TOOL_NONE,
      .python = true,
      .function = "<lambda>",
      .line = 3 },
    "<lambda> (?:3)",
    "<lambda> (?:3)",
    "<lambda> (?:3)" },
  { "a Python frame with nothing known",
    { .module = CMG__TOOL_NONE, .python = true },
    "? (?)",
    "? (?)",
    "? (?)" },
};

static struct cmg__index_frame frames[N(cases)];

static void
make_index(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
  for (size_t i = 0; i < N(cases); i++)
    frames[i] = cases[i].fr;
  ix->frames = frames;
  ix->n_frames = N(cases);
  ix->modules = mods;
  ix->n_modules = N_MODS;
}

static void
test_frames(const struct cmg__index *ix)
{
  for (uint32_t i = 0; i < N(cases); i++) {
    struct harness_out o;

    cmg__frame_name_put_label(harness_catch(&o), ix, i);
    char *label = harness_caught(&o);
    is_str(label, cases[i].label, "%s: its label", cases[i].what);
    cmg__frame_name_put_frame(harness_catch(&o), ix, i, false);
    char *frame = harness_caught(&o);
    is_str(frame, cases[i].frame, "%s: numbered", cases[i].what);
    cmg__frame_name_put_frame(harness_catch(&o), ix, i, true);
    char *all = harness_caught(&o);
    is_str(all, cases[i].all, "%s: with all frames", cases[i].what);
    free(label);
    free(frame);
    free(all);
  }
  char *text = cmg__frame_name_label(ix, 1);
  is_str(text, "model::Buffer::grow", "the label as a string");
  free(text);
}

static const char not_found[] = "not found here";
static const char other_build[] = "another build here";

static char *
unread(const struct cmg__index *ix)
{
  struct harness_out o;

  cmg__frame_name_put_unread(harness_catch(&o), ix);
  return harness_caught(&o);
}

static void
test_unread(struct cmg__index *ix)
{
  static const char *notes[10] = { "n0", "n1", "n2", "n3", "n4",
                                   "n5", "n6", "n7", "n8", "n9" };
  struct cmg__index_module many[10];
  char *text = unread(ix);

  is_str(text, "", "every module read: nothing said");
  free(text);
  mods[MOD_MODEL].note = not_found;
  mods[MOD_FOO].note = not_found;
  text = unread(ix);
  is_str(text,
         "Not read on this machine, so their frames keep the report's "
         "names: libmodel.so, libfoo.so (not found here).\n\n",
         "modules of one reason are named together, in order");
  free(text);
  mods[MOD_TRAINER].note = other_build;
  text = unread(ix);
  is_str(text,
         "Not read on this machine, so their frames keep the report's "
         "names: libmodel.so, libfoo.so (not found here); trainer (another "
         "build here).\n\n",
         "each reason once, in the order first met");
  free(text);
  for (size_t i = 0; i < N_MODS; i++)
    mods[i].note = NULL;

  for (size_t i = 0; i < N(many); i++)
    many[i] = (struct cmg__index_module){ .name = "m", .note = notes[i] };
  struct cmg__index big = { .modules = many, .n_modules = N(many) };
  text = unread(&big);
  ok(strstr(text, "m (n7).\n\n") != NULL && strstr(text, "(n8)") == NULL,
     "at most eight reasons are said");
  free(text);
}

static void
test_unread_fixture(void)
{
  struct harness h;
  const char *want = "Not read on this machine, so their frames keep the "
                     "report's names: libmodel.so, trainer";

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a read");
  char *text = unread(&h.ix);
  ok(strncmp(text, want, strlen(want)) == 0,
     "job-a: its program and library, found nowhere here, are said first");
  free(text);
  harness_free(&h);
}

/* A report as written: libmodel.so's path, four frames and one stack. */
static struct cmg__model_module raw_mods[] = {
  { .path = "/opt/trainer/lib/libmodel.so" },
};
static struct cmg__model_frame raw_frames[] = {
  { .function = "cudaMalloc", .module = 0, .has_offset = true, .offset = 1 },
  { .module = 0, .has_offset = true, .offset = 0x8d10, .address = 0x1234 },
  { .module = 0, .has_offset = false, .address = 0x5555 },
  { .module = CMG__TOOL_NONE, .has_offset = true, .address = 0xdead },
};
static uint32_t raw_stack_frames[] = { 0, 1, 2, 3 };
static struct cmg__model_stack raw_stacks[] = {
  { .n = 4, .frames = raw_stack_frames },
};

static void
test_raw(void)
{
  struct cmg__model_report r = {
    .modules = raw_mods,
    .n_modules = 1,
    .frames = raw_frames,
    .n_frames = 4,
    .stacks = raw_stacks,
    .n_stacks = 1,
  };
  char buf[256], small[8];

  is_str(cmg__frame_name_raw(&r, 0, buf, sizeof(buf)), "cudaMalloc",
         "as written: a function by its name");
  is_str(cmg__frame_name_raw(&r, 1, buf, sizeof(buf)), "libmodel.so+0x8d10",
         "no function: the module's base name and offset");
  is_str(cmg__frame_name_raw(&r, 2, buf, sizeof(buf)), "0x5555",
         "a module without an offset: the address");
  is_str(cmg__frame_name_raw(&r, 3, buf, sizeof(buf)), "0xdead",
         "no module: the address");
  ok(cmg__frame_name_raw(&r, 0, small, sizeof(small)) == small &&
         strcmp(small, "cudaMal") == 0,
     "a name cut to the buffer, terminated");
  is_str(cmg__frame_name_raw_stack(&r, 0, 2, buf, sizeof(buf)),
         "cudaMalloc < libmodel.so+0x8d10", "a stack to depth 2");
  is_str(cmg__frame_name_raw_stack(&r, 0, 64, buf, sizeof(buf)),
         "cudaMalloc < libmodel.so+0x8d10 < 0x5555 < 0xdead",
         "a stack shallower than the depth: all of it");
  is_str(cmg__frame_name_raw_stack(&r, 0, 0, buf, sizeof(buf)), "",
         "depth 0: nothing");
  is_str(cmg__frame_name_raw_stack(&r, CMG__TOOL_NONE, 4, buf, sizeof(buf)), "",
         "no stack: nothing");
  char mid[16];
  cmg__frame_name_raw_stack(&r, 0, 4, mid, sizeof(mid));
  ok(strlen(mid) == sizeof(mid) - 1 &&
         strncmp(mid, "cudaMalloc < libmodel", sizeof(mid) - 1) == 0,
     "a stack longer than the buffer is cut there, terminated");
}

int
main(void)
{
  struct cmg__index ix;

  make_index(&ix);
  test_frames(&ix);
  test_unread(&ix);
  test_unread_fixture();
  test_raw();
  return done_testing();
}
