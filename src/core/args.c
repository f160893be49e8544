/*
 * Long options as GNU tools' long forms read: a value after '=' or in the
 * next argument, whatever it starts with, so that "--report -" and
 * "--limit=50%" both mean what they say; and one-letter forms where a
 * command gives them.  Unlike getopt_long, no abbreviation: a flag that
 * caps a shared GPU is spelled out, a typo is refused rather than taken
 * for a neighbour, and every program of the project reads its options
 * the same way.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "core/log.h"
#include "core/args.h"

static const struct cmg__opt *
find(const struct cmg__args *a, const char *name, size_t len)
{
  for (size_t i = 0; i < a->n_opts; i++) {
    if (strlen(a->opts[i].name) == len &&
        memcmp(a->opts[i].name, name, len) == 0)
      return &a->opts[i];
  }
  return NULL;
}

/* -L, -L VALUE or -LVALUE: the option whose letter L is. */
static enum cmg__args_read
read_letter(struct cmg__args *a, const char *arg)
{
  for (size_t i = 0; i < a->n_letters; i++)
    if (a->letters[i].letter == arg[1])
      a->opt = find(a, a->letters[i].name, strlen(a->letters[i].name));
  if (a->opt == NULL || (a->opt->arg == NULL && arg[2] != '\0')) {
    cmg__log("unknown option '%s'; try '%s --help'", arg, a->command);
    return CMG__ARGS_BAD;
  }
  if (a->opt->arg == NULL)
    a->value = NULL;
  else if (arg[2] != '\0')
    a->value = arg + 2;
  else if (a->next < a->argc)
    a->value = a->argv[a->next++];
  else {
    cmg__log("option '%s' needs a value (%s)", arg, a->opt->arg);
    return CMG__ARGS_BAD;
  }
  return CMG__ARGS_OPTION;
}

static enum cmg__args_read
read_option(struct cmg__args *a, const char *arg)
{
  if (arg[1] != '-')
    return read_letter(a, arg);
  const char *name = arg + 2, *eq = strchr(name, '=');
  size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);

  a->opt = find(a, name, len);
  if (a->opt == NULL) {
    cmg__log("unknown option '%s'; try '%s --help'", arg, a->command);
    return CMG__ARGS_BAD;
  }
  if (a->opt->arg == NULL) {
    if (eq != NULL) {
      cmg__log("option '%s' takes no value", arg);
      return CMG__ARGS_BAD;
    }
    a->value = NULL;
  } else if (eq != NULL) {
    a->value = eq + 1;
  } else if (a->next < a->argc) {
    a->value = a->argv[a->next++];
  } else {
    cmg__log("option '%s' needs a value (%s)", arg, a->opt->arg);
    return CMG__ARGS_BAD;
  }
  return CMG__ARGS_OPTION;
}

enum cmg__args_read
cmg__args_next(struct cmg__args *a)
{
  a->opt = NULL;
  a->value = NULL;
  if (a->next >= a->argc)
    return CMG__ARGS_END;
  const char *arg = a->argv[a->next];
  if (strcmp(arg, "--") == 0) {
    a->next++;
    return CMG__ARGS_END;
  }
  a->next++;
  /* "-" alone names standard input or output, as an operand. */
  if (arg[0] != '-' || arg[1] == '\0') {
    a->value = arg;
    return CMG__ARGS_OPERAND;
  }
  return read_option(a, arg);
}

bool
cmg__args_is(const struct cmg__args *a, const char *name)
{
  return a->opt != NULL && strcmp(a->opt->name, name) == 0;
}
