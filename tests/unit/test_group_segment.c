/*
 * The group segment as its members write it, on real files of /dev/shm.
 * Members may die half way, so: a read lock lasts as long as its member;
 * limits are read only from a sealed header; a member sees its file cut,
 * removed, made anew or overwritten; a counter never wraps below zero; a
 * wake reaches other processes; a registry of another layout is abandoned
 * only when all it names are gone; a slot is taken once; the lock gives up
 * at its deadline; a file is mapped only when whole, each refusal a line.
 */
#include "config.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "group_harness.h"
#include "core/size.h"
#include "runtime/group/group_segment.h"

struct file {
  int fd;
  char shm[128];  /* shm_open's name */
  char path[128]; /* under /dev/shm */
  struct seg *s;
};

static struct seg_limit own[SEG_DEVICES + 1];
static struct seg_gpu_limit no_gpu[1];

/* A new, empty file named after tag, as shm_open makes it for a joiner. */
static struct file
make_file(const char *tag)
{
  struct file f = { .fd = -1 };
  const char *name = name_of(tag);
  snprintf(f.shm, sizeof(f.shm), "/cumemguard.%u.%s", (unsigned)geteuid(),
           name);
  path_of(name, f.path, sizeof(f.path));
  shm_unlink(f.shm);
  f.fd = shm_open(f.shm, O_RDWR | O_CREAT | O_EXCL, 0600);
  fchmod(f.fd, 0600);
  return f;
}

/* As the first member sets a segment up (group_join.c): its layout, our
 * limits, the magic last. */
static void
set_up(struct seg *s)
{
  memset(s, 0, sizeof(*s));
  s->h.version = SEG_VERSION;
  s->h.header_size = sizeof(s->h);
  s->h.slot_size = sizeof(struct seg_slot);
  s->h.slot_count = SEG_SLOTS;
  s->h.device_count = SEG_DEVICES;
  s->h.total_size = sizeof(struct seg);
  cmg__seg_adopt(s, own, no_gpu, 0, getpid());
  atomic_store(&s->h.magic, SEG_MAGIC);
}

/* A segment set up under tag, mapped. */
static struct file
make_segment(const char *tag)
{
  struct file f = make_file(tag);
  bool fresh = false;
  char err[256];
  if (cmg__seg_map(f.fd, f.path, &f.s, &fresh, err, sizeof(err)) != 0 ||
      !fresh) {
    printf("# cannot map %s: %s\n", f.path, err);
    abort();
  }
  set_up(f.s);
  return f;
}

static void
drop(struct file *f)
{
  if (f->s != NULL)
    munmap(f->s, sizeof(*f->s));
  close(f->fd);
  shm_unlink(f->shm);
}

/* err is one line naming path and saying want, with rc as expected. */
static void
refused(int rc, int want_rc, const char *err, const char *path,
        const char *want, const char *what)
{
  bool right = rc == want_rc && strstr(err, want) != NULL &&
               strstr(err, path) != NULL && strchr(err, '\n') == NULL;
  ok(right, "%s: refused, one line naming the file", what);
  if (!right)
    printf("#   %d, '%s'\n", rc, err);
}

static void
test_peek(void)
{
  struct file f = make_segment("peek"), e = make_file("peek-empty");
  struct seg_limit out[SEG_DEVICES + 1];
  struct seg *s = f.s;

  is_int(cmg__seg_peek_limits(f.fd, out), 0, "peek: a whole header");
  ok(cmg__seg_is_same_limit(&out[1], &own[1]) &&
         cmg__seg_is_same_limit(&out[SEG_DEVICES], &own[SEG_DEVICES]) &&
         out[0].kind == CMG__LIMIT_NONE,
     "peek: its limits, per device and the group's");
  s->h.creator++;
  is_int(cmg__seg_peek_limits(f.fd, out), -EINVAL,
         "peek: not a header changed since sealed");
  s->h.version++;
  cmg__seg_seal(s);
  is_int(cmg__seg_peek_limits(f.fd, out), -EINVAL,
         "peek: nor another layout's, sealed or not");
  s->h.version--;
  cmg__seg_seal(s);
  atomic_store(&s->h.magic, 1);
  is_int(cmg__seg_peek_limits(f.fd, out), -EINVAL, "peek: nor a bad magic");
  atomic_store(&s->h.magic, SEG_MAGIC);
  is_int(cmg__seg_peek_limits(e.fd, out), -EINVAL, "peek: nor an empty file");
  drop(&f);
  drop(&e);
}

static void
test_hold(void)
{
  struct file f = make_file("hold");
  int a = open(f.path, O_RDWR), b = open(f.path, O_RDWR), p[2];
  char x;

  ok(!cmg__seg_is_held(f.fd), "hold: nobody holds a new file");
  is_int(cmg__seg_hold(a), 0, "hold: a member holds it");
  ok(cmg__seg_is_held(f.fd), "hold: which another open of it sees");
  is_int(cmg__seg_hold(b), 0, "hold: members hold it together");
  close(a);
  ok(cmg__seg_is_held(f.fd), "hold: held while one member is left");
  close(b);
  ok(!cmg__seg_is_held(f.fd), "hold: then no more");

  if (pipe(p) != 0)
    abort();
  pid_t pid = spawn();
  if (pid == 0) {
    int c = open(f.path, O_RDWR);
    x = cmg__seg_hold(c) == 0 ? 'y' : 'n';
    if (write(p[1], &x, 1) != 1)
      _exit(1);
    for (;;)
      pause();
  }
  ok(read(p[0], &x, 1) == 1 && x == 'y' && cmg__seg_is_held(f.fd),
     "hold: a member in another process holds it");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ok(!cmg__seg_is_held(f.fd), "hold: until it is killed");
  close(p[0]);
  close(p[1]);
  drop(&f);
}

static void
test_live(void)
{
  struct file f = make_segment("live");
  struct stat st;
  char err[512];
  bool tr = true;
  int rc;

  fstat(f.fd, &st);
  uint64_t dev = st.st_dev, ino = st.st_ino;
  is_int(cmg__seg_check_live(f.s, f.path, dev, ino, &tr, err, sizeof(err)), 0,
         "live: intact");
  ok(!tr, "live: and not truncated");
  f.s->h.creator ^= 1;
  rc = cmg__seg_check_live(f.s, f.path, dev, ino, &tr, err, sizeof(err));
  refused(rc, -EBADMSG, err, f.path, "its header changed", "live: header");
  f.s->h.creator ^= 1;
  atomic_store(&f.s->h.magic, 7);
  rc = cmg__seg_check_live(f.s, f.path, dev, ino, &tr, err, sizeof(err));
  refused(rc, -EBADMSG, err, f.path, "overwritten (bad magic)", "live: magic");
  atomic_store(&f.s->h.magic, SEG_MAGIC);
  shm_unlink(f.shm);
  rc = cmg__seg_check_live(f.s, f.path, dev, ino, &tr, err, sizeof(err));
  refused(rc, -EBADMSG, err, f.path, "removed or made anew", "live: removed");
  struct file g = make_segment("live");
  rc = cmg__seg_check_live(f.s, f.path, dev, ino, &tr, err, sizeof(err));
  refused(rc, -EBADMSG, err, f.path, "removed or made anew", "live: anew");
  munmap(f.s, sizeof(*f.s));
  close(f.fd);
  fstat(g.fd, &st);
  ftruncate(g.fd, sizeof(struct seg) / 2);
  rc = cmg__seg_check_live(g.s, g.path, st.st_dev, st.st_ino, &tr, err,
                           sizeof(err));
  refused(rc, -EBADMSG, err, g.path, "truncated while in use",
          "live: truncated");
  ok(tr, "live: and said to be, so its pages past the end are not read");
  drop(&g);
}

#define SUBS 50000
static _Atomic uint32_t shared32;

static void *
sub_many(void *arg)
{
  (void)arg;
  for (int i = 0; i < SUBS; i++)
    cmg__seg_sub32(&shared32, 1);
  return NULL;
}

static uint32_t
raced(uint32_t start)
{
  pthread_t th[4];
  atomic_store(&shared32, start);
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, sub_many, NULL);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  return atomic_load(&shared32);
}

static void
test_sub32(void)
{
  _Atomic uint32_t c = 10;
  cmg__seg_sub32(&c, 3);
  is_u64(c, 7, "sub32: lowers");
  cmg__seg_sub32(&c, 7);
  is_u64(c, 0, "sub32: to 0 exactly");
  cmg__seg_sub32(&c, 1);
  is_u64(c, 0, "sub32: and stops there");
  c = 5;
  cmg__seg_sub32(&c, UINT32_MAX);
  is_u64(c, 0, "sub32: however much more is taken");
  is_u64(raced(4 * SUBS + 5), 5, "sub32: four threads, no change lost");
  is_u64(raced(2 * SUBS), 0, "sub32: twice too many, no wrap");
}

/* In a child: 0 when woken from the futex, 1 when its wait timed out, 2
 * when the word had changed already. */
static int
wait_woken(struct seg *s, uint32_t old, int ready)
{
  struct timespec t = { 2, 0 };
  if (write(ready, "r", 1) != 1)
    return 3;
  long rc = syscall(SYS_futex, &s->h.wake, FUTEX_WAIT, old, &t, NULL, 0);
  return rc == 0 && atomic_load(&s->h.wake) != old ? 0
         : errno == ETIMEDOUT                      ? 1
                                                   : 2;
}

/* Until pid is in state `want` (S: asleep, Z: a zombie), a second at most. */
static void
until_state(pid_t pid, char want)
{
  char letter = 0;
  uint64_t start;
  for (int i = 0; i < 1000; i++) {
    if (cmg__seg_proc_stat(pid, &letter, &start) == 0 && letter == want)
      return;
    sleep_ms(1);
  }
}

static void
test_wake(void)
{
  struct file f = make_segment("wake");
  uint32_t old = atomic_load(&f.s->h.wake);
  pid_t pid[3];
  int p[2], woken = 0, st;
  char x;

  if (pipe(p) != 0)
    abort();
  for (int i = 0; i < 3; i++)
    if ((pid[i] = spawn()) == 0)
      _exit(wait_woken(f.s, old, p[1]));
  for (int i = 0; i < 3; i++) {
    if (read(p[0], &x, 1) != 1)
      printf("# a waiter did not start\n");
    until_state(pid[i], 'S');
  }
  cmg__seg_wake_all(f.s);
  is_u64(atomic_load(&f.s->h.wake), old + 1, "wake: the word moves on");
  for (int i = 0; i < 3; i++) {
    waitpid(pid[i], &st, 0);
    woken += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  is_int(woken, 3, "wake: every member asleep in another process wakes");
  close(p[0]);
  close(p[1]);
  drop(&f);
}

#define OLD_HEADER 512
#define OLD_SLOT 64

/* A file of an older layout: the header's first fields, then 3 slots at
 * the end, each owner, start and pid namespace; the middle one `w`. */
static struct file
old_layout(const char *tag, const uint64_t w[3])
{
  struct file f = make_file(tag);
  struct seg_header h = { .version = 5,
                          .header_size = OLD_HEADER,
                          .slot_size = OLD_SLOT,
                          .slot_count = 3,
                          .total_size = OLD_HEADER + 3 * OLD_SLOT };
  atomic_store(&h.magic, SEG_MAGIC);
  if (ftruncate(f.fd, (off_t)h.total_size) != 0 ||
      pwrite(f.fd, &h, offsetof(struct seg_header, created), 0) < 0 ||
      pwrite(f.fd, w, 3 * sizeof(uint64_t), OLD_HEADER + OLD_SLOT) < 0)
    printf("# cannot write %s\n", f.path);
  return f;
}

static bool
abandoned_with(uint64_t owner, uint64_t start, uint64_t ns, uint64_t mine)
{
  const uint64_t w[3] = { owner, start, ns };
  struct file f = old_layout("old", w);
  bool r = cmg__seg_is_abandoned(f.fd, mine);
  drop(&f);
  return r;
}

/* A header field of the old layout at off set to v (4 bytes): abandoned? */
static bool
abandoned_if(size_t off, uint32_t v)
{
  const uint64_t free_slot[3] = { 0 };
  struct file f = old_layout("old", free_slot);
  bool r = pwrite(f.fd, &v, sizeof(v), (off_t)off) == sizeof(v) &&
           cmg__seg_is_abandoned(f.fd, 0);
  drop(&f);
  return r;
}

static void
test_abandoned(void)
{
  uint64_t me = (uint64_t)(uint32_t)getpid() << 32 | SLOT_CLAIMED, start = 0;
  uint64_t ns = cmg__seg_pidns_of("/proc/self/ns/pid");
  char letter;

  cmg__seg_proc_stat(getpid(), &letter, &start);
  ok(abandoned_with(0, 0, 0, ns), "old: no member: abandoned");
  ok(!abandoned_with(me, start, ns, ns), "old: a live member: not");
  ok(!abandoned_with(me, 0, 0, ns), "old: nor one of unknown start");
  ok(abandoned_with(me, start + 1, ns, ns), "old: its pid reused: abandoned");
  pid_t z = spawn();
  if (z == 0)
    _exit(0);
  until_state(z, 'Z');
  uint64_t zombie = (uint64_t)(uint32_t)z << 32 | SLOT_RECLAIMING;
  ok(abandoned_with(zombie, 0, ns, ns), "old: a zombie's: abandoned");
  ok(!abandoned_with(zombie, 0, ns + 1, ns),
     "old: not when it is another pid namespace's");
  ok(abandoned_with(zombie, 0, ns + 1, 0),
     "old: unless ours is unknown: then it is looked up");
  waitpid(z, NULL, 0);
  ok(!abandoned_if(0, 0x12345678), "old: not with a bad magic");
  ok(!abandoned_if(offsetof(struct seg_header, total_size), 4096),
     "old: nor another size than the file's");
  ok(!abandoned_if(offsetof(struct seg_header, slot_size), 16),
     "old: nor slots too small for their owner, start and namespace");
  ok(!abandoned_if(offsetof(struct seg_header, slot_count), 0),
     "old: nor no slots");
}

static void
test_remove_abandoned(void)
{
  uint64_t me = (uint64_t)(uint32_t)getpid() << 32 | SLOT_CLAIMED;
  const uint64_t dead[3] = { 0 }, live[3] = { me, 0, 0 };
  struct stat st;

  struct file f = old_layout("rm", dead);
  ok(cmg__seg_remove_abandoned(f.fd, f.shm, f.path, 0) &&
         stat(f.path, &st) != 0 && errno == ENOENT,
     "remove: an abandoned file goes");
  drop(&f);
  f = old_layout("rm", live);
  ok(!cmg__seg_remove_abandoned(f.fd, f.shm, f.path, 0) &&
         stat(f.path, &st) == 0,
     "remove: one naming a live process stays");
  drop(&f);
  f = old_layout("rm", dead);
  shm_unlink(f.shm);
  struct file g = old_layout("rm", live);
  ok(!cmg__seg_remove_abandoned(f.fd, f.shm, f.path, 0) &&
         stat(g.path, &st) == 0,
     "remove: not the file its name leads to now");
  close(f.fd);
  drop(&g);
}

static void
dirty(struct seg *s)
{
  for (int d = 0; d < SEG_DEVICES; d++) {
    atomic_store(&s->dev[d].used, 7);
    atomic_store(&s->dev[d].peak, 8);
    atomic_store(&s->dev[d].physical, 9);
    atomic_store(&s->name[d].state, NAME_SET);
    memset(s->name[d].uuid, 0xab, sizeof(s->name[d].uuid));
  }
  atomic_store(&s->h.waiters, 3);
  atomic_store(&s->h.scan_ns, 5);
  atomic_store(&s->slot[4].owner, (uint64_t)77 << 32 | SLOT_CLAIMED);
}

static bool
counts_nothing(const struct seg *s)
{
  bool zero = s->h.waiters == 0 && s->h.scan_ns == 0;
  for (int d = 0; d < SEG_DEVICES; d++)
    zero = zero && s->dev[d].used == 0 && s->dev[d].peak == 0 &&
           s->dev[d].physical == 0 && s->name[d].state == NAME_FREE &&
           s->name[d].uuid[0] == 0 && s->name[d].uuid[CMG__UUID_BYTES - 1] == 0;
  return zero;
}

static void
adopt(void)
{
  struct file f = make_segment("adopt");
  struct seg *s = f.s;
  struct seg_limit mine[SEG_DEVICES + 1] = { { 0 } };
  struct seg_gpu_limit gpu[SEG_GPU_LIMITS + 4];
  char err[256];

  mine[2] = (struct seg_limit){ CMG__LIMIT_BYTES, 0, 3 * GiB };
  mine[SEG_DEVICES] = (struct seg_limit){ CMG__LIMIT_PERCENT, 125000, 0 };
  for (int g = 0; g < SEG_GPU_LIMITS + 4; g++) {
    memset(gpu[g].uuid, g + 1, sizeof(gpu[g].uuid));
    gpu[g].limit = (struct seg_limit){ CMG__LIMIT_BYTES, 0, (g + 1) * MiB };
  }
  dirty(s);
  setenv("CUDA_VISIBLE_DEVICES", "0,\x01,2\x7f", 1);
  time_t t0 = time(NULL);
  cmg__seg_adopt(s, mine, gpu, SEG_GPU_LIMITS + 4, 4321);
  ok(cmg__seg_is_same_limit(&s->h.limit, &mine[SEG_DEVICES]) &&
         cmg__seg_is_same_limit(&s->h.limit_dev[2], &mine[2]) &&
         s->h.limit_dev[1].kind == CMG__LIMIT_NONE,
     "adopt: the limits, the group's and per device");
  ok(s->h.creator == 4321 && s->h.created >= t0 && s->h.created <= time(NULL),
     "adopt: who set them, and when");
  is_int(s->h.n_limit_gpu, SEG_GPU_LIMITS, "adopt: caps by GPU, as many fit");
  ok(memcmp(s->h.limit_gpu, gpu, sizeof(s->h.limit_gpu)) == 0,
     "adopt: the first of them");
  ok(counts_nothing(s), "adopt: counted from nothing, no device named");
  is_u64(atomic_load(&s->slot[4].owner), (uint64_t)77 << 32 | SLOT_CLAIMED,
         "adopt: slots are not its to touch");
  ok(s->h.visible_set && strcmp(s->h.visible, "0,?,2?") == 0,
     "adopt: CUDA_VISIBLE_DEVICES, control characters made '?'");
  ok(cmg__seg_is_sealed(&s->h), "adopt: sealed");
  is_int(cmg__seg_validate(s, f.path, NULL, err, sizeof(err)), 0,
         "adopt: a valid segment");

  unsetenv("CUDA_VISIBLE_DEVICES");
  cmg__seg_adopt(s, mine, gpu + 1, 2, 4321);
  ok(!s->h.visible_set && s->h.visible[0] == '\0',
     "adopt: no CUDA_VISIBLE_DEVICES, none said");
  ok(s->h.n_limit_gpu == 2 &&
         memcmp(s->h.limit_gpu, gpu + 1, 2 * sizeof(*gpu)) == 0 &&
         s->h.limit_gpu[2].limit.kind == 0 && s->h.limit_gpu[2].uuid[0] == 0,
     "adopt: fewer caps by GPU, none left of the last");
  ok(cmg__seg_is_sealed(&s->h), "adopt: sealed again");
  drop(&f);
}

static const char comm[16] = "sixteen-letters!";

static void
test_claim(void)
{
  struct file f = make_segment("claim");
  struct seg *s = f.s;

  atomic_store(&s->slot[0].gone, 1);
  atomic_store(&s->slot[1].owner, (uint64_t)9 << 32 | SLOT_RECLAIMING);
  struct seg_slot *a = cmg__seg_claim(s, 1234, 555, 0x4026531836ull, comm);
  ok(a == &s->slot[0], "claim: the first free slot");
  ok(atomic_load(&a->owner) == ((uint64_t)1234 << 32 | SLOT_CLAIMED) &&
         a->start == 555 && a->pidns == 0x4026531836ull,
     "claim: its owner, start and pid namespace");
  ok(memcmp(a->comm, comm, 16) == 0, "claim: its command, all 16 bytes");
  is_int(atomic_load(&a->gone), 0, "claim: not gone, whatever it was");
  ok(cmg__seg_claim(s, 99, 0, 0, comm) == &s->slot[2],
     "claim: a slot being reclaimed is not free");
  unsigned n = 3;
  while (cmg__seg_claim(s, (pid_t)(1000 + n), 0, 0, comm) != NULL)
    n++;
  is_int(n, SEG_SLOTS, "claim: every slot, then none");
  ok(atomic_load(&s->slot[SEG_SLOTS - 1].owner) >> 32 == 1000 + SEG_SLOTS - 1,
     "claim: the last one too");
  drop(&f);
}

static void
test_still(void)
{
  struct file f = make_segment("still");
  struct seg_slot *sl = &f.s->slot[7];
  struct seg_still at;

  ok(cmg__seg_is_still(sl, &at) && at.busy == 0 && at.seq[SEG_LANES - 1] == 0,
     "still: nobody changing");
  atomic_store(&sl->lane[3].seq, 4);
  atomic_store(&sl->busy, 2 * BUSY_ONE - 2);
  ok(cmg__seg_is_still(sl, &at) && at.seq[3] == 4 &&
         at.busy == 2 * BUSY_ONE - 2,
     "still: after changes, with where they were");
  atomic_store(&sl->lane[SEG_LANES - 1].seq, 5);
  ok(!cmg__seg_is_still(sl, &at), "still: not while a lane's thread changes");
  atomic_store(&sl->lane[SEG_LANES - 1].seq, 6);
  atomic_fetch_add(&sl->busy, BUSY_ONE);
  ok(!cmg__seg_is_still(sl, &at), "still: nor a thread without a lane");

  for (int d = 0; d < SEG_DEVICES; d++) {
    atomic_store(&sl->dev[d].used, 10 + d);
    for (int i = 0; i < SEG_LANES; i++)
      atomic_store(&sl->lane[i].held[d], (uint64_t)(i + 1) * MiB);
  }
  atomic_store(&sl->owner, (uint64_t)55 << 32 | SLOT_CLAIMED);
  cmg__seg_empty_held(sl);
  bool none = true;
  for (int d = 0; d < SEG_DEVICES; d++)
    none = none && cmg__seg_held(sl, d) == 0;
  ok(none, "empty: holds nothing on any device");
  ok(cmg__seg_is_still(sl, &at) && at.busy == 0 && at.seq[3] == 0 &&
         at.seq[SEG_LANES - 1] == 0,
     "empty: its lanes and changes from nothing");
  is_u64(atomic_load(&sl->owner), (uint64_t)55 << 32 | SLOT_CLAIMED,
         "empty: still its member's");
  drop(&f);
}

static int lock_fd;

static void *
unlock_soon(void *arg)
{
  (void)arg;
  sleep_ms(5);
  flock(lock_fd, LOCK_UN);
  return NULL;
}

static void
test_lock(void)
{
  struct file f = make_file("lock");
  int other = open(f.path, O_RDWR);
  pthread_t th;

  is_int(cmg__seg_lock(f.fd, 0), 0, "lock: free, taken at once");
  uint64_t t0 = now_ns();
  int rc = cmg__seg_lock(other, 30 * 1000000ull);
  uint64_t took = (now_ns() - t0) / 1000000;
  is_int(rc, -ETIMEDOUT, "lock: held elsewhere, given up");
  ok(took >= 30 && took < 1000, "lock: at its deadline (%" PRIu64 " ms)", took);
  is_int(cmg__seg_lock(other, 0), -ETIMEDOUT, "lock: no wait, no lock");
  lock_fd = f.fd;
  pthread_create(&th, NULL, unlock_soon, NULL);
  t0 = now_ns();
  rc = cmg__seg_lock(other, 2000 * 1000000ull);
  took = (now_ns() - t0) / 1000000;
  pthread_join(th, NULL);
  is_int(rc, 0, "lock: taken once let go");
  ok(took < 1000, "lock: soon after (%" PRIu64 " ms)", took);
  close(other);
  drop(&f);
}

static int
map(struct file *f, bool *fresh, char *err)
{
  f->s = NULL;
  *fresh = false;
  err[0] = '\0';
  return cmg__seg_map(f->fd, f->path, &f->s, fresh, err, 512);
}

static void
test_map_new(void)
{
  struct file f = make_file("map");
  struct stat st;
  bool fresh;
  char err[512];

  is_int(map(&f, &fresh, err), 0, "map: an empty file");
  ok(fresh, "map: for us to set up");
  ok(fstat(f.fd, &st) == 0 && st.st_size == (off_t)sizeof(struct seg) &&
         (uint64_t)st.st_blocks * 512 >= sizeof(struct seg),
     "map: sized, every page given its memory");
  set_up(f.s);
  munmap(f.s, sizeof(*f.s));
  is_int(map(&f, &fresh, err), 0, "map: a segment set up");
  ok(!fresh, "map: not to be set up again");
  drop(&f);
}

static void
test_map_refused(void)
{
  struct file f = make_file("map");
  int holder = open(f.path, O_RDWR);
  bool fresh;
  char err[512];

  cmg__seg_hold(holder);
  refused(map(&f, &fresh, err), -EBADMSG, err, f.path, "was emptied",
          "map: empty while a member holds it");
  ftruncate(f.fd, sizeof(struct seg));
  refused(map(&f, &fresh, err), -EBADMSG, err, f.path, "was emptied",
          "map: zeroed while a member holds it");
  ok(f.s == NULL, "map: ... gives out no mapping (the caller unmaps it)");
  ftruncate(f.fd, 4096);
  refused(map(&f, &fresh, err), -EBADMSG, err, f.path, "was emptied",
          "map: cut short while a member holds it");
  close(holder);
  refused(map(&f, &fresh, err), -EBADMSG, err, f.path,
          "is not a cumemguard group segment", "map: another size");
  ftruncate(f.fd, 0);
  ftruncate(f.fd, sizeof(struct seg));
  map(&f, &fresh, err);
  set_up(f.s);
  f.s->h.version = SEG_VERSION + 1;
  munmap(f.s, sizeof(*f.s));
  refused(map(&f, &fresh, err), -EPROTO, err, f.path, "incompatible",
          "map: another layout of our size");
  ok(f.s != NULL && !fresh, "map: left mapped, for the caller to unmap");
  f.s->h.version = SEG_VERSION;
  atomic_store(&f.s->h.retired, 1);
  munmap(f.s, sizeof(*f.s));
  is_int(map(&f, &fresh, err), -EAGAIN,
         "map: one its last member removed: join again");
  drop(&f);
}

/* Past the file size limit, sizing the file would kill with SIGXFSZ: it
 * is said instead.  The limit is lowered only for the call (the signal
 * ignored meanwhile, so a failure here is a line, not a death). */
static void
test_map_fsize(void)
{
  struct file f = make_file("fsize");
  struct rlimit r, low;
  struct stat st;
  bool fresh;
  char err[512];

  getrlimit(RLIMIT_FSIZE, &r);
  low = (struct rlimit){ 4096, r.rlim_max };
  setrlimit(RLIMIT_FSIZE, &low);
  signal(SIGXFSZ, SIG_IGN);
  int rc = map(&f, &fresh, err);
  signal(SIGXFSZ, SIG_DFL);
  setrlimit(RLIMIT_FSIZE, &r);
  refused(rc, -EFBIG, err, f.path, "ulimit -f", "map: below ulimit -f");
  ok(fstat(f.fd, &st) == 0 && st.st_size == 0, "map: the file untouched");
  drop(&f);
}

int
main(void)
{
  group_start();
  own[1] = (struct seg_limit){ CMG__LIMIT_BYTES, 0, 4 * GiB };
  own[SEG_DEVICES] = (struct seg_limit){ CMG__LIMIT_PERCENT, 500000, 0 };
  test_peek();
  test_hold();
  test_live();
  test_sub32();
  test_wake();
  test_abandoned();
  test_remove_abandoned();
  scenario(adopt, "adopt");
  test_claim();
  test_still();
  test_lock();
  test_map_new();
  test_map_refused();
  test_map_fsize();
  group_cleanup();
  return done_testing();
}
