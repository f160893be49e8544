/*
 * The programs' commands (the launcher's runner, status and cdi, the
 * report reader, the device plugin) read their arguments by one rule,
 * args.c: long options, each --NAME, --NAME VALUE or --NAME=VALUE, spelled
 * out whole, and the one-letter forms a command gives some of them (-o
 * FILE); "--" ends them, and each mistake is one line.
 */
#ifndef CMG_CORE_ARGS_H
#define CMG_CORE_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/* One option of a command. */
struct cmg__opt {
  const char *name; /* without the leading "--" */
  const char *arg;  /* the placeholder of its value; NULL: it takes none */
};

/* A one-letter form of an option: -o FILE or -oFILE for --output. */
struct cmg__letter {
  char letter;
  const char *name;
};

/* A walk over argv[1..argc) (argv[0] names the command). */
struct cmg__args {
  int argc;
  char **argv;
  const char *command; /* as 'try' names it: "cumemguard status" */
  const struct cmg__opt *opts;
  size_t n_opts;
  const struct cmg__letter *letters; /* may be NULL */
  size_t n_letters;
  int next; /* the next argument to read; 1 to start */
  /* What cmg__args_next read: */
  const struct cmg__opt *opt; /* the option; NULL for an operand */
  const char *value;          /* its value, or the operand; NULL if none */
};

/* What cmg__args_next read. */
enum cmg__args_read {
  CMG__ARGS_BAD = -1,    /* a mistake, said in one line */
  CMG__ARGS_END = 0,     /* no more options: argv[next] is the first operand
                          * after them, if any ("--" is consumed) */
  CMG__ARGS_OPTION = 1,  /* an option, in opt and value */
  CMG__ARGS_OPERAND = 2, /* an operand in value, at argv[next - 1] */
};

/* Reads the next argument. */
enum cmg__args_read cmg__args_next(struct cmg__args *a);

/* The option named name in a->opt, for the caller's dispatch. */
bool cmg__args_is(const struct cmg__args *a, const char *name);

#endif /* CMG_CORE_ARGS_H */
