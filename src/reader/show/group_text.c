/*
 * How a group's stack reads in the text that summary, merge, check and
 * diff print: where its memory is, its title, the threads a group with no
 * frame of the user's was made on, and its numbered frames.  By default a
 * stack is read from the user's own line first, as pytest and Python's
 * tracebacks do: the frames of a library the user's code called fold into
 * one line that names where they are, but for the call the user's code
 * made, and the interpreter's frames between Python frames are left out;
 * --all-frames shows every frame.  Nothing here reads a file or knows
 * about JSON.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/model/user_first.h"
#include "reader/model/view.h"
#include "reader/show/frame_name.h"
#include "reader/show/group_text.h"
#include "reader/show/one_line.h"
#include "reader/tool.h"

static bool
is_user(const struct cmg__index *ix, uint32_t stack, uint32_t k)
{
  return ix->frames[ix->stacks[stack].frames[k]].code == CMG__CODE_USER;
}

static bool
is_cut(const struct cmg__index *ix, uint32_t stack, uint32_t k)
{
  return ix->frames[ix->stacks[stack].frames[k]].cut != 0;
}

/* "... 38 native frames not recorded here": a cut's frame is named
 * "[38 native frames not recorded]". */
static void
put_cut(FILE *f, const struct cmg__index *ix, uint32_t frame)
{
  const char *name = ix->frames[frame].function;
  int len = (int)strlen(name);

  if (len >= 2 && name[0] == '[')
    fprintf(f, "    ... %.*s here\n", len - 2, name + 1);
  else
    fprintf(f, "    ... %s\n", name);
}

/* Where a library's frame is, for a folded run: its module, or for a
 * Python frame its package ("torch"); *len its length. */
static const char *
place_of(const struct cmg__index *ix, uint32_t frame, int *len)
{
  const struct cmg__index_frame *fr = &ix->frames[frame];
  const char *p = "?";

  if (fr->python && fr->file != NULL) {
    p = cmg__code_short_path(fr->file);
    *len = (int)strcspn(p, "/");
    return p;
  }
  if (fr->module != CMG__TOOL_NONE)
    p = ix->modules[fr->module].name;
  *len = (int)strlen(p);
  return p;
}

/* "... 27 frames in libtorch_cpu.so, libtorch_cuda.so": frames [a, b) of
 * the stack, the interpreter's left out, as one line naming each place
 * once (the first few). */
static void
put_fold(FILE *f, const struct cmg__index *ix, uint32_t stack, uint32_t a,
         uint32_t b, bool python)
{
  enum { PLACES = 4 };
  const char *places[PLACES];
  int lens[PLACES], n_places = 0;
  uint32_t n = 0;
  bool more = false;

  for (uint32_t k = a; k < b; k++) {
    if (cmg__user_first_is_left_out(ix, stack, k, python))
      continue;
    n++;
    int len;
    const char *p = place_of(ix, ix->stacks[stack].frames[k], &len);
    int i = 0;
    while (i < n_places && !(lens[i] == len && !strncmp(places[i], p, len)))
      i++;
    if (i < n_places)
      continue;
    if (n_places == PLACES) {
      more = true;
      continue;
    }
    places[n_places] = p;
    lens[n_places++] = len;
  }
  fprintf(f, "    ... %u frames in ", n);
  for (int i = 0; i < n_places; i++)
    fprintf(f, "%s%.*s", i > 0 ? ", " : "", lens[i], places[i]);
  fprintf(f, "%s\n", more ? ", ..." : "");
}

/* Folds a run of library frames [a, b) of the stack: all of it, or when the
 * user's code comes after it (called), all but the frame that code called.
 * Returns the first frame left to print: a when the run is too short to
 * fold (fewer than two frames would go). */
static uint32_t
print_run(FILE *f, const struct cmg__index *ix, uint32_t stack, uint32_t a,
          uint32_t b, bool python, bool called)
{
  uint32_t end = b, n = 0;

  if (called) {
    while (end > a && cmg__user_first_is_left_out(ix, stack, end - 1, python))
      end--;
    if (end > a)
      end--; /* the call the user's code made stays */
  }
  for (uint32_t k = a; k < end; k++)
    n += !cmg__user_first_is_left_out(ix, stack, k, python);
  if (n < 2)
    return a;
  put_fold(f, ix, stack, a, end, python);
  return end;
}

void
cmg__group_text_frames(FILE *f, const struct cmg__index *ix, uint32_t stack,
                       bool all_frames)
{
  uint32_t lo, hi;

  if (stack == CMG__TOOL_NONE) {
    fprintf(f, "    (no stack was recorded: stack_depth=0, or the capture "
               "failed)\n");
    return;
  }
  const struct cmg__index_stack *s = &ix->stacks[stack];
  cmg__index_stack_range(ix, stack, all_frames, &lo, &hi);
  bool python = !all_frames && cmg__user_first_has_python(ix, stack, lo, hi);
  bool mine = false;
  for (uint32_t k = lo; k < hi && !all_frames; k++)
    mine = mine || is_user(ix, stack, k);
  /* Frames keep their depth in the stack: past a cut, the frames it left
   * out are counted in. */
  int64_t depth_past = -(int64_t)lo;
  for (uint32_t k = lo; k < hi; k++) {
    uint32_t cut = ix->frames[s->frames[k]].cut;
    if (cut != 0) {
      put_cut(f, ix, s->frames[k]);
      depth_past += cut != CMG__MODEL_CUT_UNKNOWN ? (int64_t)cut - 1 : -1;
      continue;
    }
    if (mine && !is_user(ix, stack, k)) {
      uint32_t b = k;
      while (b < hi && !is_user(ix, stack, b) && !is_cut(ix, stack, b))
        b++;
      uint32_t next = print_run(f, ix, stack, k, b, python,
                                b < hi && !is_cut(ix, stack, b));
      if (next > k) {
        k = next - 1;
        continue;
      }
    }
    if (cmg__user_first_is_left_out(ix, stack, k, python))
      continue;
    fprintf(f, "    #%" PRId64 " ", k + depth_past);
    cmg__frame_name_put_frame(f, ix, s->frames[k], all_frames);
    fputc('\n', f);
  }
  if (hi == s->n && cmg__index_is_cut_unplaced(ix, stack))
    fprintf(f, "    ... (the stack was deeper than stack_depth)\n");
}

/* A group with no frame of the user's code: the threads it was made on,
 * by name (PyTorch's autograd threads run no Python), which say more than
 * its frames. */
static void
print_threads(FILE *f, const struct cmg__index *ix,
              const struct cmg__view_leak *l)
{
  const char *sep = "  on thread ";
  size_t named = 0;

  if (cmg__user_first_has_user_frame(ix, l->stack))
    return;
  for (size_t i = 0; i < l->threads.n && named < 4; i++) {
    if (l->threads.list[i].name == NULL)
      continue;
    fprintf(f, "%s%s", sep, l->threads.list[i].name);
    sep = ", ";
    named++;
  }
  if (named > 0)
    fprintf(f, "%s (no frame of your code)\n",
            l->threads.n > named ? ", ..." : "");
}

void
cmg__group_text_print(FILE *f, const struct cmg__index *ix,
                      const struct cmg__view_leak *l, bool all_frames)
{
  if (!all_frames && cmg__one_line_title(f, "  ", ix, l->stack))
    fputc('\n', f);
  else if (!all_frames)
    print_threads(f, ix, l);
  cmg__group_text_frames(f, ix, l->stack, all_frames);
}

const char *
cmg__group_text_where(const char *kind, int ordinal, char *buf, size_t len)
{
  char dev[32];

  if (ordinal >= 0)
    snprintf(dev, sizeof(dev), "device %d", ordinal);
  else
    snprintf(dev, sizeof(dev), "no device");
  if (strcmp(kind, "device") == 0)
    snprintf(buf, len, "%s", dev);
  else if (strcmp(kind, "host") == 0)
    snprintf(buf, len, "pinned host memory");
  else if (strcmp(kind, "vmm_host") == 0)
    snprintf(buf, len, "VMM host memory");
  else if (strcmp(kind, "vmm") == 0)
    snprintf(buf, len, "VMM, %s", dev);
  else if (strcmp(kind, "import") == 0)
    snprintf(buf, len, "imported, %s", dev);
  else if (strcmp(kind, "graph") == 0)
    snprintf(buf, len, "graph memory pool, %s", dev);
  else if (ordinal >= 0)
    snprintf(buf, len, "%s, %s", kind, dev);
  else
    snprintf(buf, len, "%s", kind);
  return buf;
}
