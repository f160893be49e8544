/*
 * Text from a report into XML (the SVG of flame and plot): the five
 * characters XML reserves, escaped (xml.c).
 */
#ifndef CMG_READER_SHOW_XML_H
#define CMG_READER_SHOW_XML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes at most max_bytes of s (SIZE_MAX: all of it) into f, with &, <,
 * >, " and ' as their entities, so that it is safe in text and in quoted
 * attributes alike. */
void cmg__xml_put(FILE *f, const char *s, size_t max_bytes);

#endif /* CMG_READER_SHOW_XML_H */
