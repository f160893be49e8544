/*
 * The page of the report: `cumemguard-report html` writes one
 * self-contained page of the report of section 4, timed as the summary is
 * (the first run warms the page cache and is not counted), and
 * bench/page-load.js opens that page in headless Chromium through
 * puppeteer-core and times each load until the page says it has drawn
 * (body[data-ready="1"]): what a user waits for before the page answers.
 *
 * Node, puppeteer-core and Chromium are not needed to build or test the
 * project, so where one of them or the tool is missing the rows say n/a
 * and why, and the harness is not counted as broken: a browser that fails
 * is not ours either.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmgbench.h"

#define NODE_MODULES "/usr/local/lib/cumemguard-tests/node_modules"

static char page[4200];
static char write_state[160] = "n/a", ready_state[320] = "n/a";

static bool
on_path(const char *name, char *buf, size_t len)
{
  const char *path = getenv("PATH");
  while (path != NULL && *path != '\0') {
    size_t n = strcspn(path, ":");
    snprintf(buf, len, "%.*s/%s", (int)n, path, name);
    if (n > 0 && access(buf, X_OK) == 0)
      return true;
    path += n + (path[n] == ':');
  }
  return false;
}

static bool
write_page(const char *tool, const char *report, const char *tmpdir)
{
  struct stat st;
  if (tool == NULL || access(tool, X_OK) != 0) {
    snprintf(write_state, sizeof(write_state),
             "n/a (no cumemguard-report built)");
    return false;
  }
  if (stat(report, &st) != 0) {
    snprintf(write_state, sizeof(write_state), "n/a (no report written)");
    return false;
  }
  snprintf(page, sizeof(page), "%s/page.html", tmpdir);
  char *argv[] = { (char *)tool, "html", "-o", page, (char *)report, NULL };
  fprintf(stderr, "  %-24s", "cumemguard-report html");
  fflush(stderr);
  uint64_t t0 = cmgb_now_ns();
  double med, min;
  int rc = cmgb_time_run(argv, cmgb_plan->report_reps, &med, &min);
  if (rc != 0 || stat(page, &st) != 0) {
    if (rc != 0)
      snprintf(write_state, sizeof(write_state), "failed (status %d)", rc);
    else
      snprintf(write_state, sizeof(write_state), "failed (no page written)");
    fprintf(stderr, "%s\n", write_state);
    return false;
  }
  cmgb_store("html.write.s_med", med);
  cmgb_store("html.write.s_min", min);
  cmgb_store("html.bytes", (double)st.st_size);
  snprintf(write_state, sizeof(write_state), "ok");
  fprintf(stderr, "%6.1f s\n", (double)(cmgb_now_ns() - t0) / 1e9);
  return true;
}

/* The script's one line, through a pipe: "ready_ms MED MIN" on stdout, or
 * why not on stderr, which comes through the same pipe so that the row
 * can say it; the last other line is the script's own, after any warning
 * of node's. */
static void
load_page(const char *script)
{
  char node[4096], runs[16];
  int fds[2];
  if (script == NULL || access(script, R_OK) != 0) {
    snprintf(ready_state, sizeof(ready_state), "n/a (no page-load script%s%s)",
             script ? " " : "", script ? script : "");
    return;
  }
  if (!on_path("node", node, sizeof(node))) {
    snprintf(ready_state, sizeof(ready_state), "n/a (no node on PATH)");
    return;
  }
  if (pipe(fds) != 0) {
    snprintf(ready_state, sizeof(ready_state), "n/a (no pipe)");
    return;
  }
  snprintf(runs, sizeof(runs), "%d", cmgb_plan->report_reps);
  fprintf(stderr, "  %-24s", "page ready in chromium");
  fflush(stderr);
  uint64_t t0 = cmgb_now_ns();
  pid_t pid = fork();
  if (pid == 0) {
    const char *modules = getenv("CMG_NODE_MODULES");
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    setenv("NODE_PATH", modules != NULL ? modules : NODE_MODULES, 1);
    execl(node, "node", script, page, runs, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char *line = NULL, why[200] = "";
  size_t cap = 0;
  double med = NAN, min = NAN;
  while (in != NULL && getline(&line, &cap, in) > 0) {
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "ready_ms %lf %lf", &med, &min) != 2 && *line != '\0')
      snprintf(why, sizeof(why), "%s", line);
  }
  free(line);
  if (in != NULL)
    fclose(in);
  else
    close(fds[0]);
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0)
    st = 127 << 8;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && !isnan(med + min)) {
    cmgb_store("html.ready.ms_med", med);
    cmgb_store("html.ready.ms_min", min);
    snprintf(ready_state, sizeof(ready_state), "ok");
    fprintf(stderr, "%6.1f s\n", (double)(cmgb_now_ns() - t0) / 1e9);
    return;
  }
  if (*why != '\0')
    snprintf(ready_state, sizeof(ready_state), "n/a (%s)", why);
  else
    snprintf(ready_state, sizeof(ready_state), "n/a (node %s: status %d)",
             script, WIFEXITED(st) ? WEXITSTATUS(st) : 128);
  fprintf(stderr, "%s\n", ready_state);
}

void
cmgb_run_page(const char *tool, const char *report, const char *tmpdir,
              const char *script)
{
  if (write_page(tool, report, tmpdir))
    load_page(script);
  else
    snprintf(ready_state, sizeof(ready_state), "n/a (no page written)");
}

void
cmgb_print_page(void)
{
  if (strcmp(write_state, "ok") == 0)
    printf("   cumemguard-report html: %.3f s (min %.3f), %.1f MB page\n",
           cmgb_get("html.write.s_med"), cmgb_get("html.write.s_min"),
           cmgb_get("html.bytes") / 1e6);
  else
    printf("   cumemguard-report html: %s\n", write_state);
  if (strcmp(ready_state, "ok") == 0)
    printf("   page ready in chromium: %.0f ms (min %.0f), %d load%s\n",
           cmgb_get("html.ready.ms_med"), cmgb_get("html.ready.ms_min"),
           cmgb_plan->report_reps, cmgb_plan->report_reps == 1 ? "" : "s");
  else
    printf("   page ready in chromium: %s\n", ready_state);
}

void
cmgb_page_json(FILE *f)
{
  fputs(", \"html_bytes\": ", f);
  cmgb_jnum(f, cmgb_get("html.bytes"));
  fputs(", ", f);
  cmgb_jstat(f, "html_write_s", cmgb_get("html.write.s_med"),
             cmgb_get("html.write.s_min"));
  fputs(", \"html_state\": ", f);
  cmgb_jstr(f, write_state);
  fputs(", ", f);
  cmgb_jstat(f, "html_ready_ms", cmgb_get("html.ready.ms_med"),
             cmgb_get("html.ready.ms_min"));
  fprintf(f, ", \"html_ready_loads\": %d, \"html_ready_state\": ",
          cmgb_plan->report_reps);
  cmgb_jstr(f, ready_state);
}
