/*
 * Return addresses described for a report: in this program (linked with
 * -rdynamic, its functions exported), in libc, in an object loaded at a
 * path too long to keep, and in no object.  The module's path, load bias,
 * offset and build-id are what addr2line and pprof are given offline, so
 * each is checked against what the dynamic linker and the file itself say:
 * the build-id read here from the file's section headers, not from the
 * mapped notes the module reads.  A return address is looked up one byte
 * back, so that a call at a function's end names it: the first byte of a
 * function must not name it.  And a forked child whose parent had a thread
 * in the middle of reading a build-id, its lock held, must still describe
 * addresses once it has made the lock anew.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/stacks/symbols.h"
#include "../tap.h"

#define EXPORTED __attribute__((visibility("default"), noinline))

static struct cmg__symbol sym;

/* The NT_GNU_BUILD_ID note of the file at path, from its sections. */
static void
file_build_id(const char *path, char *hex)
{
  hex[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ElfW(Ehdr) eh;
  if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
    goto out;
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    ElfW(Shdr) sh;
    unsigned char note[256];
    off_t at = (off_t)(eh.e_shoff + (uint64_t)i * eh.e_shentsize);
    if (pread(fd, &sh, sizeof(sh), at) != sizeof(sh) ||
        sh.sh_type != SHT_NOTE || sh.sh_size > sizeof(note) ||
        pread(fd, note, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size)
      continue;
    ElfW(Nhdr) nh;
    memcpy(&nh, note, sizeof(nh));
    if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4)
      continue;
    const unsigned char *d = note + sizeof(nh) + 4;
    for (unsigned b = 0; b < nh.n_descsz && b < 32; b++)
      sprintf(hex + 2 * b, "%02x", d[b]);
    break;
  }
out:
  if (fd >= 0)
    close(fd);
}

static struct link_map *
map_of(void *handle)
{
  struct link_map *lm = NULL;
  if (handle == NULL || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0)
    return NULL;
  return lm;
}

static uintptr_t probe_ra;

EXPORTED void
cmg_test_note_ra(void)
{
  probe_ra = (uintptr_t)__builtin_return_address(0);
}

/* Calls the probe from inside it, so that its return address lies here. */
EXPORTED void
cmg_test_caller(void)
{
  cmg_test_note_ra();
  __asm__ volatile("" ::: "memory");
}

static void
test_program(void)
{
  char exe[1024] = "", id[65];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  file_build_id(exe, id);
  struct link_map *self = map_of(dlopen(NULL, RTLD_NOW));

  cmg_test_caller();
  is_int(cmg__symbolize(probe_ra, &sym), 0, "a return address in the program");
  is_str(sym.module, exe, "its module is the program's full path");
  ok(self != NULL && sym.module_base == self->l_addr,
     "its base the program's load bias");
  is_u64(sym.offset, probe_ra - sym.module_base, "the offset from it");
  is_str(sym.function, "cmg_test_caller", "the calling function");
  is_u64(sym.function_offset, probe_ra - (uintptr_t)cmg_test_caller,
         "the offset into it");
  ok(strlen(id) == 40, "the program has a build-id (%s)", id);
  is_str(sym.build_id, id, "the build-id the file holds");

  uintptr_t f = (uintptr_t)cmg_test_note_ra;
  cmg__symbolize(f + 1, &sym);
  is_str(sym.function, "cmg_test_note_ra", "a function's second byte");
  is_u64(sym.function_offset, 1, "at offset 1");
  cmg__symbolize(f, &sym);
  ok(strcmp(sym.function, "cmg_test_note_ra") != 0,
     "its first byte is a call ending the code before it (\"%s\")",
     sym.function);
}

/* A name longer than a symbol's field. */
#define R4(s) s s s s
#define LONG_NAME R4(R4("cmg_test_a_function_named_at_length_"))
EXPORTED void long_named(void) __asm__(LONG_NAME);
EXPORTED void
long_named(void)
{
  __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

static __attribute__((noinline)) int
not_exported(int x)
{
  __asm__ volatile("" : "+r"(x));
  return x + 1;
}

static void
test_names(void)
{
  uintptr_t f = (uintptr_t)long_named;
  is_int(cmg__symbolize(f + 2, &sym), 0, "a function with a long name");
  is_int(strlen(sym.function), sizeof(sym.function) - 1,
         "its name cut to the field");
  ok(strncmp(sym.function, LONG_NAME, sizeof(sym.function) - 1) == 0,
     "from its start");
  is_u64(sym.function_offset, 2, "the offset still right");

  f = (uintptr_t)not_exported;
  is_int(not_exported(1), 2, "a function not exported");
  is_int(cmg__symbolize(f + 1, &sym), 0, "is described");
  is_str(sym.function, "", "without a name");
  is_u64(sym.function_offset, 0, "or an offset into it");
  ok(strlen(sym.module) > 0 && sym.offset == f + 1 - sym.module_base,
     "with its module and offset");
}

static void *libc_handle;
static uintptr_t abort_at;

static void
test_libc(void)
{
  libc_handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  struct link_map *libc = map_of(libc_handle);
  abort_at = (uintptr_t)dlsym(libc_handle, "abort");
  ok(libc != NULL && abort_at != 0, "libc's abort");
  if (libc == NULL || abort_at == 0)
    return;
  char id[65];
  file_build_id(libc->l_name, id);
  is_int(cmg__symbolize(abort_at + 8, &sym), 0, "an address in it");
  is_str(sym.module, libc->l_name, "its module libc's path");
  is_u64(sym.module_base, libc->l_addr, "libc's load bias");
  is_u64(sym.offset, abort_at + 8 - libc->l_addr, "the offset from it");
  is_str(sym.function, "abort", "the function");
  is_u64(sym.function_offset, 8, "the offset into it");
  ok(strlen(id) == 40, "libc has a build-id (%s)", id);
  is_str(sym.build_id, id, "the build-id its file holds");
  struct cmg__symbol again;
  cmg__symbolize(abort_at + 8, &again);
  ok(memcmp(&again, &sym, sizeof(sym)) == 0, "asked again, the same answer");
}

static void
test_nowhere(void)
{
  long page = sysconf(_SC_PAGESIZE);
  char *anon = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int local = 0;
  memset(&sym, 'x', sizeof(sym));
  is_int(cmg__symbolize((uintptr_t)anon + 16, &sym), -ENOENT,
         "an address in no loaded object");
  ok(sym.module[0] == '\0' && sym.function[0] == '\0' &&
         sym.build_id[0] == '\0' && sym.module_base == 0 && sym.offset == 0,
     "leaves an empty description");
  is_int(cmg__symbolize((uintptr_t)&local, &sym), -ENOENT, "nor on the stack");
  is_int(cmg__symbolize(0, &sym), -ENOENT, "nor address 0");
  munmap(anon, (size_t)page);
}

/* An object at a path longer than the module's field: libm, copied. */
static void
test_long_path(void)
{
  void *libm = dlopen("libm.so.6", RTLD_NOW);
  struct link_map *lm = map_of(libm);
  char dir[] = "/tmp/cmg-symbols-XXXXXX", path[1400], sub[240];
  ok(lm != NULL && mkdtemp(dir) != NULL, "a folder for a copy of libm");
  memset(sub, 'd', sizeof(sub) - 1);
  sub[sizeof(sub) - 1] = '\0';
  snprintf(path, sizeof(path), "%s", dir);
  for (int i = 0; i < 5; i++) {
    size_t len = strlen(path);
    snprintf(path + len, sizeof(path) - len, "/%s", sub);
    mkdir(path, 0700);
  }
  size_t dirs = strlen(path);
  snprintf(path + dirs, sizeof(path) - dirs, "/libm-copy.so");
  int in = lm != NULL ? open(lm->l_name, O_RDONLY) : -1;
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char buf[65536];
  ssize_t got;
  while (in >= 0 && out >= 0 && (got = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)got) != got)
      break;
  close(in);
  close(out);
  void *copy = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  struct link_map *cm = map_of(copy);
  void *exp_at = copy != NULL ? dlsym(copy, "exp") : NULL;
  ok(cm != NULL && exp_at != NULL && cm != lm, "loaded from %zu bytes of path",
     strlen(path));
  if (exp_at != NULL) {
    char id[65];
    file_build_id(lm->l_name, id);
    is_int(cmg__symbolize((uintptr_t)exp_at + 4, &sym), 0, "an address in it");
    is_int(strlen(sym.module), sizeof(sym.module) - 1,
           "its path cut to the field");
    ok(strncmp(sym.module, path, sizeof(sym.module) - 1) == 0,
       "from its start");
    is_u64(sym.module_base, cm->l_addr, "its own load bias");
    is_str(sym.build_id, id, "the build-id of the file it copies");
    dlclose(copy);
  }
  unlink(path);
  for (int i = 0; i < 5; i++) {
    path[dirs - (size_t)i * sizeof(sub)] = '\0';
    rmdir(path);
  }
  rmdir(dir);
  dlclose(libm);
}

/* A thread reading a build-id, the cache's lock held, while this thread
 * holds the loader's lock on the objects' list, so that it waits there. */
static _Atomic int go, tid;
static uintptr_t in_libm;
static int libm_rc = 1;
static struct cmg__symbol libm_sym;

static void *
reader(void *arg)
{
  atomic_store(&tid, gettid());
  while (!atomic_load(&go))
    sched_yield();
  libm_rc = cmg__symbolize(in_libm, &libm_sym);
  return NULL;
}

/* The reader asleep: waiting for the lock this thread holds. */
static bool
asleep(int t)
{
  char path[64], stat[512];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t);
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return false;
  stat[n] = '\0';
  const char *p = strrchr(stat, ')');
  return p != NULL && p[1] == ' ' && p[2] == 'S';
}

/* In the child: 0 when an address in libc is still described. */
static int
child(void)
{
  alarm(5);
  cmg__symbols_after_fork();
  struct cmg__symbol s;
  if (cmg__symbolize(abort_at + 8, &s) != 0)
    return 1;
  return strcmp(s.function, "abort") == 0 ? 0 : 2;
}

struct fork_result {
  bool waited;
  int status;
};

static int
fork_inside(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct fork_result *r = arg;
  atomic_store(&go, 1);
  struct timespec ms = { 0, 1000000 };
  for (int i = 0; i < 2000 && !asleep(atomic_load(&tid)); i++)
    nanosleep(&ms, NULL);
  r->waited = asleep(atomic_load(&tid));
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0)
    _exit(child());
  waitpid(pid, &r->status, 0);
  return 1;
}

static void
test_fork(void)
{
  void *libm = dlopen("libm.so.6", RTLD_NOW);
  in_libm = (uintptr_t)dlsym(libm, "exp") + 4;
  struct link_map *lm = map_of(libm);
  pthread_t th;
  pthread_create(&th, NULL, reader, NULL);
  while (atomic_load(&tid) == 0)
    sched_yield();
  struct fork_result r = { false, -1 };
  dl_iterate_phdr(fork_inside, &r);
  pthread_join(th, NULL);
  ok(r.waited, "a thread was reading a build-id at the fork");
  ok(WIFEXITED(r.status), "the child did not hang on the cache's lock");
  is_int(WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, 0,
         "and described an address");
  is_int(libm_rc, 0, "the parent's thread went on");
  ok(lm != NULL && strcmp(libm_sym.module, lm->l_name) == 0,
     "and described its address in libm");
  dlclose(libm);
}

int
main(void)
{
  test_program();
  test_names();
  test_libc();
  test_nowhere();
  test_fork();
  test_long_path();
  return done_testing();
}
