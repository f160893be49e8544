/*
 * The numbers and strings of bench/results.json, written by the table
 * (table.c) and the page's figures (page.c) alike.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "cmgbench.h"

void
cmgb_jnum(FILE *f, double v)
{
  if (isnan(v) || isinf(v))
    fputs("null", f);
  else
    fprintf(f, "%.6g", v);
}

void
cmgb_jstat(FILE *f, const char *name, double med, double min)
{
  fprintf(f, "\"%s\": {\"median\": ", name);
  cmgb_jnum(f, med);
  fputs(", \"min\": ", f);
  cmgb_jnum(f, min);
  fputs("}", f);
}

void
cmgb_jstr(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++)
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  fputc('"', f);
}
