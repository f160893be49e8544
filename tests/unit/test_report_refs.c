/*
 * The report's tables of stacks, frames and modules, written alone and read
 * back with cJSON.  A report names a stack by its id wherever it refers to
 * one, and a reader finds its frames only through these tables, so each
 * rule is one a reader depends on: only the stacks referred to are listed,
 * by id; a reference to no stack, or to one interned after the tables were
 * sized, is null; every distinct frame is listed once, sorted by address,
 * and a stack's frames are indexes into that list, cuts left out of it
 * and listed apart (where, how many or null, which language); a native
 * frame names its module by index, each module listed once in the order
 * its first frame names it, with its path as text, build-id and base; an
 * address no module holds is all null; a Python frame names its site, and
 * one whose site is unknown says "?".  The "python" member is there only
 * when a CPython was found, with its version and why its frames are off.
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdalign.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/jsonw.h"
#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/report/report_refs.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/stacks.h"
#include "report_member.h"
#include "../tap.h"

#define LIBPYTHON "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
#define LIBZ "/usr/lib/x86_64-linux-gnu/libz.so.1"

static uint32_t stack_a, stack_b, stack_c, stack_d;
static uintptr_t ip_abort, ip_qsort, ip_deflate;
static uintptr_t py_named, py_lineless;
static char link_dir[64], link_path[128];

/* ---- Python sites, from objects laid out as CPython's ---------------- */

static char unicode_type, bytes_type;
static const struct cmg__py_objects objects = {
  .unicode_type = (uintptr_t)&unicode_type,
  .bytes_type = (uintptr_t)&bytes_type,
  .ascii_size = 40,
  .compact_size = 56,
};

struct object {
  alignas(8) unsigned char b[96];
};

static struct object qualname, filename, table, other_name;

/* A compact ASCII str, or (type bytes_type) a bytes object. */
static uintptr_t
object(struct object *o, const void *type, const char *data, size_t n)
{
  memset(o, 0, sizeof(*o));
  *(uintptr_t *)(o->b + 8) = (uintptr_t)type;
  *(int64_t *)(o->b + 16) = (int64_t)n;
  *(int64_t *)(o->b + 24) = -1;
  *(uint32_t *)(o->b + 32) = 1u << 5 | 1u << 6 | 1u << 2;
  memcpy(o->b + (type == &bytes_type ? 32 : objects.ascii_size), data, n);
  return (uintptr_t)o->b;
}

/* Two sites: train_step at line 41 of /x/train.py (a one-entry location
 * table, short form 0), and one whose table is none, so it has no line. */
static void
make_sites(void)
{
  struct cmg__py_where w = {
    .code = 0x7000,
    .qualname = object(&qualname, &unicode_type, "train_step", 10),
    .filename = object(&filename, &unicode_type, "/x/train.py", 11),
    .linetable = object(&table, &bytes_type, "\x80\x00", 2),
    .firstlineno = 41,
  };
  py_named = CMG__PY_TAG | cmg__py_site(&objects, &w);
  w.code = 0x8000;
  w.qualname = object(&other_name, &unicode_type, "Model.forward", 13);
  w.linetable = 0;
  py_lineless = CMG__PY_TAG | cmg__py_site(&objects, &w);
}

/* ---- writing the tables ------------------------------------------------ */

static cJSON *
tables(struct cmg__refs *r, int *rc)
{
  struct cmg__jsonw w;
  cmg__jsonw_object(member_open(&w));
  *rc = cmg__refs_write_tables(&w, r);
  cmg__jsonw_object_end(&w);
  return member_parse(&w);
}

/* The frame a stack's i-th index names. */
static const cJSON *
frame_of(const cJSON *doc, const cJSON *stack, int i)
{
  const cJSON *idx = nth(stack, "frames", i);
  return cJSON_IsNumber(idx) ? nth(doc, "frames", idx->valueint) : NULL;
}

static bool
frames_are(const cJSON *doc, const cJSON *stack, const uintptr_t *ips, int n)
{
  if (len(stack, "frames") != n)
    return false;
  for (int i = 0; i < n; i++)
    if (hex(frame_of(doc, stack, i), "address") != ips[i])
      return false;
  return true;
}

static bool
cut_is(const cJSON *c, int where, double frames, const char *lang)
{
  return num(c, "at") == where && str_is(c, "lang", lang) &&
         (frames < 0 ? is_null(c, "frames") : num(c, "frames") == frames);
}

/* ---- the checks -------------------------------------------------------- */

static void
test_ids(void)
{
  struct cmg__refs r;
  uintptr_t late[] = { 0x50 };
  is_int(cmg__refs_init(&r), 0, "init: done");
  uint32_t id = cmg__stacks_intern(late, 1, false);
  is_int(r.n_stacks, 4, "init: sized for the four stacks interned");
  ok(r.n_ips == 0 && r.ips == NULL, "init: no frames gathered yet");
  ok(!cmg__refs_is_stack(&r, CMG__STACK_NONE), "no stack is no stack");
  ok(cmg__refs_is_stack(&r, 1) && cmg__refs_is_stack(&r, 4),
     "the first and last ids are stacks");
  ok(!cmg__refs_is_stack(&r, 5) && !cmg__refs_is_stack(&r, UINT32_MAX),
     "ids past them are not");
  cmg__refs_mark(&r, 0);
  cmg__refs_mark(&r, 5);
  cmg__refs_mark(&r, UINT32_MAX);
  int marked = 0;
  for (uint32_t id = 0; id <= r.n_stacks; id++)
    marked += r.used[id];
  is_int(marked, 0, "marking what is no stack marks nothing");
  cmg__refs_mark(&r, 2);
  ok(r.used[2] && !r.used[1] && !r.used[3], "a mark marks its stack alone");

  struct cmg__jsonw w;
  cmg__jsonw_array(member_open(&w));
  cmg__refs_stack(&w, &r, 3);
  cmg__refs_stack(&w, &r, CMG__STACK_NONE);
  cmg__refs_stack(&w, &r, id);
  cmg__jsonw_array_end(&w);
  cJSON *doc = member_parse(&w);
  is_str(member_text, "[3,null,null]",
         "a reference: the stack's id, or null for none and for a stack "
         "interned after the tables were sized");
  ok(r.used[3], "a reference marks the stack it names");
  member_done(doc);
  cmg__refs_free(&r);
  cmg__refs_init(&r);
  ok(cmg__refs_is_stack(&r, id), "init again: the stack interned since");
  cmg__refs_free(&r);
}

static void
test_none(void)
{
  struct cmg__refs r;
  int rc;
  cmg__refs_init(&r);
  cJSON *doc = tables(&r, &rc);
  is_int(rc, 0, "nothing referred to: written");
  is_str(member_text, "{\"stacks\":[],\"frames\":[],\"modules\":[]}",
         "nothing referred to: empty tables, and no python member");
  member_done(doc);
  cmg__refs_free(&r);
}

static void
check_stacks(const cJSON *doc)
{
  const cJSON *a = nth(doc, "stacks", 0), *b = nth(doc, "stacks", 1),
              *c = nth(doc, "stacks", 2);
  is_int(len(doc, "stacks"), 3, "stacks: the three referred to alone");
  ok(num(a, "id") == stack_a && num(b, "id") == stack_b &&
         num(c, "id") == stack_c,
     "stacks: by id, in order");
  ok(cJSON_IsFalse(at(a, "truncated")) && cJSON_IsTrue(at(b, "truncated")),
     "stacks: whether the walk was cut short");
  ok(frames_are(doc, a, (uintptr_t[]){ ip_abort, ip_qsort, 0x10 }, 3),
     "stacks: each index names its frame, innermost first");
  ok(at(a, "cuts") == NULL, "stacks: no cuts member without a cut");
  ok(frames_are(doc, b, (uintptr_t[]){ ip_abort, 0x20 }, 2),
     "stacks: a cut is no frame");
  ok(len(b, "cuts") == 1 && cut_is(nth(b, "cuts", 0), 1, 25, "native"),
     "stacks: the cut before frame 1, of 25 native frames");
  ok(frames_are(doc, c,
                (uintptr_t[]){ ip_deflate, py_named, py_lineless, 0x10 }, 4),
     "stacks: Python frames among native ones");
  ok(len(c, "cuts") == 2 && cut_is(nth(c, "cuts", 0), 1, -1, "python") &&
         cut_is(nth(c, "cuts", 1), 3, 3, "native"),
     "stacks: a Python cut of unknown count, then a native one");
}

static void
check_frames(const cJSON *doc)
{
  static const char *const keys[] = { "module", "offset", "function",
                                      "function_offset" };
  int n = len(doc, "frames"), sorted = 1, natives = 0;
  is_int(n, 7, "frames: each distinct address once, stack d's not");
  for (int i = 1; i < n; i++)
    sorted &= hex(nth(doc, "frames", i - 1), "address") <
              hex(nth(doc, "frames", i), "address");
  ok(sorted, "frames: sorted by address");
  ok(hex(nth(doc, "frames", 5), "address") == py_named &&
         hex(nth(doc, "frames", 6), "address") == py_lineless,
     "frames: Python frames last, their tag the highest bit");
  const cJSON *f0 = nth(doc, "frames", 0);
  is_str(str(f0, "address"), "0x10", "frames: an address in hex");
  for (size_t k = 0; k < 4; k++)
    natives += is_null(f0, keys[k]);
  ok(natives == 4 && at(f0, "lang") == NULL,
     "frames: an address no module holds is all null");
}

static void
check_native(const cJSON *doc, const cJSON *stack, int i, const char *module,
             const char *function, uintptr_t ip)
{
  const cJSON *f = frame_of(doc, stack, i);
  const cJSON *m = nth(doc, "modules", (int)num(f, "module"));
  const char *path = str(m, "path");
  ok(path != NULL && strstr(path, module) != NULL, "%s: its module", function);
  is_str(str(f, "function"), function, "%s: its function", function);
  is_int(num(f, "function_offset"), 16, "%s: the offset in it", function);
  ok(m != NULL && hex(f, "offset") == ip - hex(m, "base") && hex(m, "base"),
     "%s: offset from the module's base", function);
  const char *id = str(m, "build_id");
  ok(id != NULL && strlen(id) == 40 && strspn(id, "0123456789abcdef") == 40,
     "%s: the module's build-id in hex", function);
}

static void
check_modules(const cJSON *doc)
{
  const cJSON *a = nth(doc, "stacks", 0), *c = nth(doc, "stacks", 2);
  check_native(doc, a, 0, "libc", "abort", ip_abort);
  check_native(doc, c, 0, "\\xff", "deflate", ip_deflate);
  is_int(len(doc, "modules"), 2, "modules: two frames in libc, one module");
  ok(num(frame_of(doc, a, 0), "module") == num(frame_of(doc, a, 1), "module"),
     "modules: both libc frames name it");
  int libc = ip_abort < ip_deflate ? 0 : 1;
  ok(strstr(str(nth(doc, "modules", libc), "path"), "libc") != NULL,
     "modules: in the order of the frames that first name them");
  char want[160];
  snprintf(want, sizeof(want), "%s/lib\\xffz.so", link_dir);
  is_str(str(nth(doc, "modules", 1 - libc), "path"), want,
         "modules: a path that is no UTF-8, as text");
}

static void
check_python(const cJSON *doc)
{
  const cJSON *c = nth(doc, "stacks", 2);
  const cJSON *p = frame_of(doc, c, 1), *q = frame_of(doc, c, 2);
  is_str(str(p, "lang"), "python", "python frame: marked");
  ok(is_null(p, "module") && is_null(p, "offset") &&
         is_null(p, "function_offset"),
     "python frame: no module, offset or function offset");
  is_str(str(p, "function"), "train_step", "python frame: its function");
  is_str(str(p, "file"), "/x/train.py", "python frame: its file");
  is_int(num(p, "line"), 41, "python frame: its line");
  is_str(str(q, "function"), "Model.forward", "python frame: another site");
  ok(is_null(q, "line"), "python frame: no line is null");
  ok(at(doc, "python") == NULL, "no CPython found: no python member");
}

static void
test_tables(void)
{
  struct cmg__refs r;
  int rc;
  cmg__refs_init(&r);
  cmg__refs_mark(&r, stack_c);
  cmg__refs_mark(&r, stack_a);
  cmg__refs_mark(&r, stack_b);
  cJSON *doc = tables(&r, &rc);
  is_int(rc, 0, "tables: written");
  ok(doc != NULL, "tables: JSON");
  is_int(r.n_ips, 7, "tables: the distinct frames gathered");
  check_stacks(doc);
  check_frames(doc);
  check_modules(doc);
  check_python(doc);
  member_done(doc);
  cmg__refs_free(&r);
}

static void
test_unknown_site(void)
{
  uintptr_t ips[] = { CMG__PY_TAG | 999 };
  struct cmg__refs r;
  int rc;
  uint32_t id = cmg__stacks_intern(ips, 1, false);
  cmg__refs_init(&r);
  cmg__refs_mark(&r, id);
  cJSON *doc = tables(&r, &rc);
  const cJSON *f = nth(doc, "frames", 0);
  ok(len(doc, "frames") == 1 && str_is(f, "function", "?") &&
         str_is(f, "file", "?"),
     "a Python frame of an unknown site: function and file \"?\"");
  ok(is_null(f, "line") && len(doc, "modules") == 0, "and no line, no module");
  member_done(doc);
  cmg__refs_free(&r);
}

/* The python member as a process that loaded libpython writes it, with
 * its frames on or off: a child each, the status being found once. */
static cJSON *
python_member(bool frames)
{
  int p[2];
  char text[1024] = "";
  if (pipe(p) != 0)
    return NULL;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    struct cmg__refs r;
    int rc;
    close(p[0]);
    cmg__py_configure(frames, true);
    cmg__refs_init(&r);
    cJSON *doc = tables(&r, &rc);
    char *s = cJSON_PrintUnformatted(at(doc, "python"));
    ssize_t n = s ? write(p[1], s, strlen(s)) : 0;
    free(s);
    cJSON_Delete(doc);
    cmg__refs_free(&r);
    _exit(n > 0 ? 0 : 1);
  }
  close(p[1]);
  ssize_t n = read(p[0], text, sizeof(text) - 1);
  close(p[0]);
  waitpid(pid, NULL, 0);
  text[n > 0 ? n : 0] = '\0';
  return cJSON_Parse(text);
}

static void
test_python_member(void)
{
  if (dlopen(LIBPYTHON, RTLD_NOW | RTLD_GLOBAL) == NULL) {
    for (int i = 0; i < 6; i++)
      ok(1, "# SKIP no shared libpython 3.11 (%s)", LIBPYTHON);
    return;
  }
  cJSON *on = python_member(true), *off = python_member(false);
  const char *v = str(on, "version");
  char why[160];
  ok(v != NULL && strncmp(v, "3.11.", 5) == 0, "python: its version, %s", v);
  ok(cJSON_IsTrue(at(on, "frames")) && is_null(on, "note"),
     "python: frames captured, no note");
  is_int(num(on, "sites_dropped"), 0, "python: no site dropped");
  ok(cJSON_IsFalse(at(off, "frames")), "python_frames=0: frames not captured");
  snprintf(why, sizeof(why),
           "Python %s: Python frames are off "
           "(python_frames=0)",
           v ? v : "?");
  is_str(str(off, "note"), why, "python_frames=0: the note says why");
  is_int(len(off, NULL), 4, "python: version, frames, note, sites_dropped");
  cJSON_Delete(on);
  cJSON_Delete(off);
}

/* from to to; 0 or -1. */
static int
copy_file(const char *from, const char *to)
{
  char buf[65536];
  ssize_t n = 0;
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT, 0755);

  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0 &&
         write(out, buf, (size_t)n) == n)
    ;
  close(in);
  close(out);
  return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

/* deflate, in a copy of libz whose name is no UTF-8, so its module's path
 * is that copy's (a link would be the libz already loaded where the
 * program links it, as under AddressSanitizer it does). */
static bool
load_libz(void)
{
  snprintf(link_dir, sizeof(link_dir), "/tmp/cmg-refs-XXXXXX");
  if (mkdtemp(link_dir) == NULL)
    return false;
  snprintf(link_path, sizeof(link_path), "%s/lib\xffz.so", link_dir);
  void *z =
      copy_file(LIBZ, link_path) == 0 ? dlopen(link_path, RTLD_NOW) : NULL;
  void *f = z ? dlsym(z, "deflate") : NULL;
  ip_deflate = (uintptr_t)f + 16;
  return f != NULL;
}

int
main(void)
{
  if (!load_libz()) {
    printf("1..0 # SKIP no %s\n", LIBZ);
    return 0;
  }
  make_sites();
  /* libc's own: under AddressSanitizer the program's abort and qsort are
   * its interceptors, in another module. */
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ip_abort = (uintptr_t)dlsym(libc, "abort") + 16;
  ip_qsort = (uintptr_t)dlsym(libc, "qsort") + 16;
  uintptr_t a[] = { ip_abort, ip_qsort, 0x10 };
  uintptr_t b[] = { ip_abort, cmg__cut_word(false, 25), 0x20 };
  uintptr_t c[] = { ip_deflate,
                    cmg__cut_word(true, CMG__CUT_UNKNOWN),
                    py_named,
                    py_lineless,
                    cmg__cut_word(false, 3),
                    0x10 };
  uintptr_t d[] = { 0x30 }; /* never referred to */
  stack_a = cmg__stacks_intern(a, 3, false);
  stack_b = cmg__stacks_intern(b, 3, true);
  stack_c = cmg__stacks_intern(c, 6, false);
  stack_d = cmg__stacks_intern(d, 1, false);

  test_none();
  test_tables();
  test_ids();
  test_unknown_site();
  test_python_member();
  unlink(link_path);
  rmdir(link_dir);
  return done_testing();
}
