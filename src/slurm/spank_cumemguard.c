/*
 * spank_cumemguard.so: the Slurm SPANK plugin that gives every job one GPU
 * memory cap per node.  It adds --gpu-mem-limit, --gpu-mem-report and
 * --gpu-mem-policy to srun, sbatch and salloc, and in each task of a step
 * puts libcumemguard.so first in LD_PRELOAD (after a sanitizer's runtime
 * that leads it: the launcher's rule, cmg__preload_add) and sets
 * CUMEMGUARD_OPTIONS to group=slurm.JOBID,group_limit=SIZE: every process
 * of the job on a node then shares one cap through the library's group
 * segment (/dev/shm/cumemguard.UID.slurm.JOBID), which the job epilog
 * removes.
 *
 * It owns no policy of its own, as the launcher owns none: sizes are read
 * with cmg__size_parse and the finished option string is checked with
 * cmg__config_parse, the parser the library runs, so the plugin and the
 * library cannot disagree about what a value means.
 *
 * Slurm calls a plugin in several processes (spank.h, spank(8)):
 *   local (srun) and allocator (sbatch, salloc): slurm_spank_init reads
 *     the plugstack.conf arguments and registers the options; the option
 *     callbacks check each value against them, so a bad size or one over
 *     max_limit is refused there, before anything runs;
 *   remote (slurmstepd, once per step and node): the callbacks only keep
 *     the values, slurm_spank_user_init (run as the job's user, before any
 *     task is forked) works out the task environment or the reason to
 *     refuse, and slurm_spank_task_init applies it or refuses.  Refusing in
 *     a task is what reaches the user: it runs in the task's process, whose
 *     stderr srun relays, and the task exits 1 without being executed;
 *   job script (the job epilog, once per job and node, as root): removes
 *     the job's segment, which a member killed by SIGKILL leaves behind.
 * Refusals only stop a job when the plugin is `required` in plugstack.conf;
 * Slurm ignores a failing optional plugin.
 *
 * The user's own CUMEMGUARD_OPTIONS is kept, except the keys this plugin
 * sets (group, group_limit and group_limit.N, on_exceed, and report when
 * it sets one), which it replaces: a job cannot lift its cap from its
 * environment.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "core/conf.h"
#include "core/conf_merge.h"
#include "core/size.h"
#include "ops/preload_env.h"
#include "ops/seg_find.h"

#ifndef CMG_LIBDIR
#error "CMG_LIBDIR must name the install libdir (src/slurm/local.mk defines it)"
#endif

/* Slurm finds the plugin by these symbols and the slurm_spank_* ones;
 * src/slurm/local.mk builds this file with default visibility. */
SPANK_PLUGIN(cumemguard, 1);

#define LIBRARY_PATH CMG_LIBDIR "/libcumemguard.so"
#define OPTIONS_VAR "CUMEMGUARD_OPTIONS"
#define GROUP_PREFIX "slurm."
#define REPORT_NAME "cumemguard.%j.%s.%h.%p.json"
#define SIZE_TEXT_MAX 64
#define SEGMENT_TRIES 5

/* What plugstack.conf says, read on every host that loads the plugin. */
static struct {
  struct cmg__limit default_limit; /* default_limit=SIZE */
  struct cmg__limit max_limit;     /* max_limit=SIZE */
  char default_text[SIZE_TEXT_MAX];
  char max_text[SIZE_TEXT_MAX];
  char report_dir[PATH_MAX];    /* report_dir=DIR; "" for none */
  char library[PATH_MAX];       /* library=PATH */
  char snapshot[SIZE_TEXT_MAX]; /* snapshot=TIME for jobs with a report */
} site = { .library = LIBRARY_PATH };

/* What the user asked for; "" where nothing was. */
static struct {
  char limit[SIZE_TEXT_MAX];
  char report[CMG__REPORT_MAX];
  char policy[8];
} req;

/* Worked out by user_init for the tasks of this step on this node. */
static bool active;
static char *task_options;
static char refusal[CMG__REPORT_MAX + 256];

/* ---- checks ------------------------------------------------------------- */

/* Formats a refusal into refusal[], for the caller to print. */
static int __attribute__((format(printf, 1, 2))) refuse(const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(refusal, sizeof(refusal), fmt, ap);
  va_end(ap);
  return -1;
}

/* Prints the refusal as one line: srun shows it as "srun: error: ...". */
static int
say_refusal(void)
{
  slurm_error("cumemguard: %s", refusal);
  return -1;
}

/* Reads a size as the library reads one; 0, or -1 with the reason. */
static int
read_size(const char *what, const char *value, struct cmg__limit *out)
{
  if (cmg__size_parse(value, strlen(value), true, out) != 0 ||
      (out->kind == CMG__LIMIT_BYTES && out->bytes == 0))
    return refuse("%s='%s': expected a size such as 8GiB, 512M, 1.5GB or "
                  "50%% of the GPU",
                  what, value);
  return 0;
}

/* 0 if the cap a is at most max_limit, or -1 with the reason.  The two
 * compare only if both are bytes or both percentages: the GPU's size is
 * not known before a task runs, so a mix is refused rather than guessed. */
static int
check_under(const char *what, const char *text, const struct cmg__limit *a)
{
  const struct cmg__limit *max = &site.max_limit;

  if (max->kind == CMG__LIMIT_NONE)
    return 0;
  if (a->kind != max->kind)
    return refuse("%s=%s cannot be checked against the cluster's "
                  "max_limit=%s: give a %s",
                  what, text, site.max_text,
                  max->kind == CMG__LIMIT_PERCENT ? "percentage of the GPU"
                                                  : "size in bytes");
  if (a->kind == CMG__LIMIT_BYTES ? a->bytes > max->bytes : a->ppm > max->ppm)
    return refuse("%s=%s is over the cluster's max_limit=%s", what, text,
                  site.max_text);
  return 0;
}

/* ---- plugstack.conf arguments ------------------------------------------- */

static int
copy_text(const char *what, const char *value, char *out, size_t len)
{
  if (strlen(value) >= len)
    return refuse("%s: too long (at most %zu bytes)", what, len - 1);
  strcpy(out, value);
  return 0;
}

/* snapshot=TIME, checked as the library will read it. */
static int
read_snapshot(const char *value)
{
  struct cmg__config cfg;
  char opt[SIZE_TEXT_MAX + 16], err[256];

  if (copy_text("snapshot", value, site.snapshot, sizeof(site.snapshot)) != 0)
    return -1;
  snprintf(opt, sizeof(opt), "snapshot=%s", value);
  if (strchr(value, ',') != NULL ||
      cmg__config_parse(opt, &cfg, err, sizeof(err)) != 0)
    return refuse("plugstack.conf snapshot='%s': expected a duration such as "
                  "30s, 10m or 1h, from 1s to 24h, or 0",
                  value);
  return 0;
}

/* Reads one key=value argument of the plugin's line in plugstack.conf. */
static int
read_arg(const char *arg)
{
  const char *eq = strchr(arg, '=');
  size_t key = eq != NULL ? (size_t)(eq - arg) : 0;
  const char *v = eq != NULL ? eq + 1 : "";

#define IS_KEY(k) (key == sizeof(k) - 1 && strncmp(arg, k, key) == 0)
  if (IS_KEY("default_limit"))
    return read_size("plugstack.conf default_limit", v, &site.default_limit) ||
           copy_text("default_limit", v, site.default_text,
                     sizeof(site.default_text));
  if (IS_KEY("max_limit"))
    return read_size("plugstack.conf max_limit", v, &site.max_limit) ||
           copy_text("max_limit", v, site.max_text, sizeof(site.max_text));
  if (IS_KEY("report_dir") || IS_KEY("library")) {
    bool lib = IS_KEY("library");
    if (v[0] != '/' || strpbrk(v, lib ? " :,\t\n" : ",%") != NULL)
      return refuse("plugstack.conf %s='%s': expected an absolute path%s",
                    lib ? "library" : "report_dir", v,
                    lib ? " without spaces, ':' or ','"
                        : " without ',' or '%'");
    return lib ? copy_text("library", v, site.library, sizeof(site.library))
               : copy_text("report_dir", v, site.report_dir,
                           sizeof(site.report_dir));
  }
  if (IS_KEY("snapshot"))
    return read_snapshot(v);
#undef IS_KEY
  return refuse("plugstack.conf: unknown argument '%s': expected "
                "default_limit=SIZE, max_limit=SIZE, report_dir=DIR, "
                "snapshot=TIME or library=PATH",
                arg);
}

static int
read_args(int ac, char **av)
{
  for (int i = 0; i < ac; i++)
    if (read_arg(av[i]) != 0)
      return -1;
  if (site.default_limit.kind != CMG__LIMIT_NONE &&
      check_under("plugstack.conf default_limit", site.default_text,
                  &site.default_limit) != 0)
    return -1;
  return 0;
}

/* ---- the user's options ------------------------------------------------- */

/*
 * Expands the plugin's own escapes of a report pattern, %j (job id) and %s
 * (step id), into out; the library's (%p, %h, %t, %%) are kept for it.
 * Returns 0 or -1 with the reason.
 */
static int
expand_report(const char *in, uint32_t job, const char *step, char *out,
              size_t len)
{
  size_t n = 0;

  for (const char *p = in; *p != '\0'; p++) {
    char piece[24] = { *p, '\0' };
    if (*p == '%' && (p[1] == 'j' || p[1] == 's')) {
      if (p[1] == 'j')
        snprintf(piece, sizeof(piece), "%" PRIu32, job);
      else
        snprintf(piece, sizeof(piece), "%s", step);
      p++;
    } else if (*p == '%' && p[1] != '\0') {
      piece[1] = *++p;
      piece[2] = '\0';
    }
    if (n + strlen(piece) >= len)
      return refuse("--gpu-mem-report='%s': too long once expanded (at "
                    "most %zu bytes)",
                    in, len - 1);
    memcpy(out + n, piece, strlen(piece) + 1);
    n += strlen(piece);
  }
  out[n] = '\0';
  return 0;
}

/* Whether a user's item with key key[0..len) gives way to the plugin's:
 * the group's and the policy's always, the report's where the plugin sets
 * one (*arg). */
static bool
is_ours(const char *key, size_t len, void *arg)
{
  bool report = *(const bool *)arg;
#define IS(k) (len == sizeof(k) - 1 && strncmp(key, k, len) == 0)
  return IS("group") || IS("group_limit") || IS("on_exceed") ||
         (report && IS("report")) ||
         (len > sizeof("group_limit.") - 1 &&
          strncmp(key, "group_limit.", sizeof("group_limit.") - 1) == 0);
#undef IS
}

/*
 * The task's CUMEMGUARD_OPTIONS: the user's items (env, may be NULL) but
 * ours, then ours (cmg__conf_merge).  limit is NULL for no cap (a report
 * only).  Returns a malloc'd string, or NULL with the reason.
 */
static char *
build_options(const char *env, uint32_t job, const char *step,
              const char *limit)
{
  char report[CMG__REPORT_MAX], raw[PATH_MAX + sizeof(REPORT_NAME) + 1];
  char cap[CMG__REPORT_MAX], with[CMG__REPORT_MAX + 8], snap[96];
  const char *pattern = req.report;
  bool with_report = true;

  if (pattern[0] == '\0' && site.report_dir[0] != '\0') {
    snprintf(raw, sizeof(raw), "%s/%s", site.report_dir, REPORT_NAME);
    pattern = raw;
  }
  if (pattern[0] == '\0')
    with_report = false;
  else if (expand_report(pattern, job, step, report, sizeof(report)) != 0)
    return NULL;
  cap[0] = with[0] = snap[0] = '\0';
  if (limit != NULL)
    snprintf(cap, sizeof(cap),
             "group=" GROUP_PREFIX "%" PRIu32 ",group_limit=%s,on_exceed=%s",
             job, limit, req.policy[0] != '\0' ? req.policy : "fail");
  if (with_report)
    snprintf(with, sizeof(with), "report=%s", report);
  /* The site's snapshots for a job with a report, unless the user chose. */
  if (with_report && site.snapshot[0] != '\0' &&
      !cmg__conf_has_key(env, "snapshot"))
    snprintf(snap, sizeof(snap), "snapshot=%s", site.snapshot);
  const char *const ours[] = { cap, with, snap };
  char *out = cmg__conf_merge(env, is_ours, &with_report, ours, 3);
  if (out == NULL)
    refuse("out of memory");
  return out;
}

/*
 * Checks what the user asked for against the site's arguments and the
 * library's parser (env: the user's own CUMEMGUARD_OPTIONS).  Sets *limit
 * to the cap's text, or NULL when there is none.  Returns the task's
 * option string (malloc'd), NULL with refusal[] empty when the plugin has
 * nothing to do, or NULL with the reason in refusal[].
 */
static char *
check_request(const char *env, uint32_t job, const char *step,
              const char **limit)
{
  struct cmg__config cfg;
  struct cmg__limit l;
  char err[512];

  refusal[0] = '\0';
  *limit = NULL;
  if (req.limit[0] != '\0') {
    if (read_size("--gpu-mem-limit", req.limit, &l) != 0 ||
        check_under("--gpu-mem-limit", req.limit, &l) != 0)
      return NULL;
    *limit = req.limit;
  } else if (site.default_limit.kind != CMG__LIMIT_NONE) {
    *limit = site.default_text;
  }
  if (*limit == NULL && req.policy[0] != '\0') {
    refuse("--gpu-mem-policy=%s needs --gpu-mem-limit (the cluster sets "
           "no default_limit)",
           req.policy);
    return NULL;
  }
  if (*limit != NULL && site.max_limit.kind != CMG__LIMIT_NONE &&
      strcmp(req.policy, "warn") == 0) {
    refuse("--gpu-mem-policy=warn would let the job pass the cluster's "
           "max_limit=%s: expected fail or wait",
           site.max_text);
    return NULL;
  }
  if (*limit == NULL && req.report[0] == '\0')
    return NULL;

  char *opts = build_options(env, job, step, *limit);
  if (opts != NULL && cmg__config_parse(opts, &cfg, err, sizeof(err)) != 0) {
    refuse("%s (the job's " OPTIONS_VAR " would be '%s')", err, opts);
    free(opts);
    return NULL;
  }
  return opts;
}

/* ---- options ------------------------------------------------------------ */

/*
 * Keeps an option's value.  In srun, sbatch and salloc the value is also
 * checked on its own there and then, so that a bad one stops the command
 * before a job exists (a callback's failure stops them whether or not the
 * plugin is required); init_post_opt checks the options together.  In
 * slurmstepd the value is only kept: user_init checks it again and the
 * tasks say why, where the user sees it.
 */
static int
keep_option(int val, const char *optarg, int remote)
{
  static const char *const names[] = { "--gpu-mem-limit", "--gpu-mem-report",
                                       "--gpu-mem-policy" };
  char *dst[] = { req.limit, req.report, req.policy };
  size_t len[] = { sizeof(req.limit), sizeof(req.report), sizeof(req.policy) };
  const char *value = optarg != NULL ? optarg : "";
  struct cmg__limit l;
  int rc = 0;

  if (val < 0 || val > 2)
    return -1;
  if (strlen(value) >= len[val]) {
    refuse("%s: too long (at most %zu bytes)", names[val], len[val] - 1);
    return remote ? 0 : say_refusal();
  }
  strcpy(dst[val], value);
  if (remote)
    return 0;
  if (val == 0)
    rc = read_size("--gpu-mem-limit", value, &l) ||
         check_under("--gpu-mem-limit", value, &l);
  else if (val == 1 && (value[0] == '\0' || strchr(value, ',') != NULL))
    rc = refuse("--gpu-mem-report='%s': expected a file name pattern "
                "without ','",
                value);
  else if (val == 2 && strcmp(value, "fail") != 0 &&
           strcmp(value, "warn") != 0 && strcmp(value, "wait") != 0)
    rc = refuse("--gpu-mem-policy='%s': expected fail, warn or wait", value);
  return rc != 0 ? say_refusal() : 0;
}

static struct spank_option options[] = {
  { "gpu-mem-limit", "SIZE",
    "Cap the GPU memory of the job on each node: all its processes there "
    "share SIZE per GPU (8GiB, 512M, 50%).",
    1, 0, keep_option },
  { "gpu-mem-report", "PATTERN",
    "Write a cumemguard report per process to PATTERN (%j job, %s step, "
    "%p pid, %h host, %t time).",
    1, 1, keep_option },
  { "gpu-mem-policy", "fail|warn|wait",
    "Past the GPU memory cap: refuse the allocation (fail, the default), "
    "allow it and warn, or wait for memory to be freed.",
    1, 2, keep_option },
  SPANK_OPTIONS_TABLE_END
};

/* ---- the task's environment --------------------------------------------- */

/* The job's value of var (malloc'd), or NULL when it has none. */
static char *
job_getenv(spank_t sp, const char *var)
{
  for (int size = 4096; size <= (1 << 24); size *= 4) {
    char *buf = malloc((size_t)size);
    if (buf == NULL)
      return NULL;
    spank_err_t rc = spank_getenv(sp, var, buf, size);
    if (rc == ESPANK_SUCCESS)
      return buf;
    free(buf);
    if (rc != ESPANK_NOSPACE)
      return NULL;
  }
  return NULL;
}

/* 0 if the job's user can read the library (user_init runs with the
 * user's effective ids, which open(2) checks and access(2) would not). */
static int
check_library(void)
{
  struct stat st;
  int fd = open(site.library, O_RDONLY | O_CLOEXEC);
  int rc = fd < 0 ? errno : fstat(fd, &st) != 0 ? errno : 0;

  if (rc == 0 && !S_ISREG(st.st_mode))
    rc = EINVAL;
  if (fd >= 0)
    close(fd);
  if (rc != 0)
    return refuse("cannot preload %s: %s", site.library,
                  rc == EINVAL ? "not a regular file" : strerror(rc));
  return 0;
}

/*
 * 0 if the job's segment is absent or one the library will join, read
 * with the library's own checks.  A member of another step may be setting
 * it up right now, which reads as a bad size for an instant: only an
 * answer that stays bad is a refusal.
 */
static int
check_segment(uint32_t job)
{
  char name[32], why[512];
  struct cmg__seg_entry e;
  struct seg *copy = NULL;
  struct timespec pause = { 0, 20 * 1000 * 1000 };
  int rc = 0;

  snprintf(name, sizeof(name), GROUP_PREFIX "%" PRIu32, job);
  cmg__seg_entry_own(name, &e);
  for (int i = 0; i < SEGMENT_TRIES; i++) {
    rc = cmg__seg_load(&e, &copy, why, sizeof(why));
    free(copy);
    copy = NULL;
    if (rc == 0 || rc == -ENOENT)
      break;
    nanosleep(&pause, NULL);
  }
  if (rc != 0 && rc != -ENOENT)
    return refuse("the job's GPU memory cap cannot be shared: %s", why);
  return 0;
}

/* ---- entry points ------------------------------------------------------- */

int
slurm_spank_init(spank_t sp, int ac, char **av)
{
  spank_context_t ctx = spank_context();

  /* The epilog needs no argument, and a prolog or epilog that fails
   * drains the node: a typo in plugstack.conf stops jobs, not nodes. */
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
    return 0;
  if (read_args(ac, av) != 0)
    return say_refusal();
  for (struct spank_option *o = options; o->name != NULL; o++)
    if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
      slurm_error("cumemguard: cannot register --%s", o->name);
      return -1;
    }
  return 0;
}

/*
 * In srun, sbatch and salloc, once every option is in: the options
 * together and with the user's own CUMEMGUARD_OPTIONS, which the job
 * inherits, checked as a step will check them.
 */
int
slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
  const char *limit;

  if (spank_context() != S_CTX_LOCAL && spank_context() != S_CTX_ALLOCATOR)
    return 0;
  char *opts = check_request(getenv(OPTIONS_VAR), 0, "0", &limit);
  free(opts);
  return refusal[0] != '\0' ? say_refusal() : 0;
}

/*
 * Once per step and node, as the job's user, before the tasks are forked:
 * everything a task needs is worked out here, and a reason to refuse is
 * kept for the tasks to say, since what user_init logs goes to the node's
 * log only.
 */
int
slurm_spank_user_init(spank_t sp, int ac, char **av)
{
  uint32_t job = 0, step = 0;
  char step_text[16];
  const char *limit;

  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
    refuse("cannot read the job and step ids");
    return 0;
  }
  /* The extern step holds no program of the user's. */
  if (step == SLURM_EXTERN_CONT)
    return 0;
  if (step == SLURM_BATCH_SCRIPT)
    strcpy(step_text, "batch");
  else if (step == SLURM_INTERACTIVE_STEP)
    strcpy(step_text, "interactive");
  else
    snprintf(step_text, sizeof(step_text), "%" PRIu32, step);

  char *env = job_getenv(sp, OPTIONS_VAR);
  task_options = check_request(env, job, step_text, &limit);
  free(env);
  if (task_options == NULL)
    return 0;
  if (check_library() != 0 || (limit != NULL && check_segment(job) != 0)) {
    free(task_options);
    task_options = NULL;
    return 0;
  }
  active = true;
  return 0;
}

/* In each task's process, as the job's user, just before its exec. */
int
slurm_spank_task_init(spank_t sp, int ac, char **av)
{
  char *preload;
  int rc = 0;

  if (refusal[0] != '\0')
    return say_refusal();
  if (!active)
    return 0;
  char *old = job_getenv(sp, "LD_PRELOAD");
  if (cmg__preload_add(old, site.library, &preload, refusal, sizeof(refusal)) ==
      -EINVAL) {
    rc = say_refusal();
  } else if (preload == NULL ||
             spank_setenv(sp, "LD_PRELOAD", preload, 1) != ESPANK_SUCCESS ||
             spank_setenv(sp, OPTIONS_VAR, task_options, 1) != ESPANK_SUCCESS) {
    refuse("cannot set the task's LD_PRELOAD and " OPTIONS_VAR);
    rc = say_refusal();
  }
  free(old);
  free(preload);
  return rc;
}

/*
 * Once per job and node, as root, when the job ends: the job's segment
 * goes, whatever its members left.  The name is built as the library
 * builds it, from the job's user and id.  A failure is logged but not
 * returned, since a failing epilog drains the node, and a segment left
 * behind is harmless: a later job of the same id and user reclaims it.
 */
int
slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
  uid_t uid;
  uint32_t job;
  char path[96];

  if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
    slurm_error("cumemguard: epilog: cannot read the job's user and id");
    return 0;
  }
  snprintf(path, sizeof(path),
           "/dev/shm/cumemguard.%u." GROUP_PREFIX "%" PRIu32, (unsigned)uid,
           job);
  if (unlink(path) != 0 && errno != ENOENT)
    slurm_error("cumemguard: epilog: cannot remove %s: %s", path,
                strerror(errno));
  return 0;
}
