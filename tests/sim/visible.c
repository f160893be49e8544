/*
 * Device identity for the simulated driver: the UUID of each physical
 * device, and CUDA_VISIBLE_DEVICES, which turns physical devices into
 * CUDA ordinals.
 *
 * A UUID belongs to the physical device (a fixed stem and its index), so
 * that two processes that see the devices in different orders, and the
 * simulated NVML, which ignores CUDA_VISIBLE_DEVICES, all name a device
 * alike.  The parser follows what CUDA documents and does: a comma list of
 * physical indices or UUIDs ("GPU-" and enough of the rest to be unique);
 * the first entry that names no device (or one already listed) ends the
 * list, and the entries before it stay visible; an empty value hides every
 * device; an unset one shows them all in physical order.
 *
 * Pure functions: no state, no locks.
 */
#include "libcuda.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void
sim_uuid_bytes(int phys, unsigned char out[16])
{
  static const unsigned char stem[15] = {
    0xc3, 0x6d, 0x67, 0x51, 0x5e, 0x1a, 0x4d, 0x0c,
    0x9a, 0x77, 0x73, 0x69, 0x6d, 0x67, 0x70,
  };
  memcpy(out, stem, sizeof(stem));
  out[15] = (unsigned char)sim_devices[phys].gpu;
}

void
sim_uuid_text(int phys, char out[SIM_UUID_TEXT])
{
  unsigned char u[16];
  sim_uuid_bytes(phys, u);
  snprintf(out, SIM_UUID_TEXT,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x",
           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
           u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The physical device an entry names (`len` bytes at `s`), or -1. */
static int
entry_device(const char *s, size_t len, int nphys)
{
  if (len == 0)
    return -1;
  if (isdigit((unsigned char)s[0])) {
    long v = 0;
    for (size_t i = 0; i < len; i++) {
      if (!isdigit((unsigned char)s[i]) || v > 1000)
        return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v < nphys ? (int)v : -1;
  }
  /* A UUID, or a prefix of one that matches a single device. */
  if (len <= 4 || strncmp(s, "GPU-", 4) != 0)
    return -1;
  int found = -1;
  for (int p = 0; p < nphys; p++) {
    char text[SIM_UUID_TEXT];
    sim_uuid_text(p, text);
    if (len <= strlen(text) && strncasecmp(text, s, len) == 0) {
      if (found >= 0)
        return -1;
      found = p;
    }
  }
  return found;
}

int
sim_parse_visible(const char *spec, int nphys, int out[SIM_MAX_DEVICES])
{
  if (spec == NULL) {
    for (int p = 0; p < nphys; p++)
      out[p] = p;
    return nphys;
  }
  int n = 0;
  const char *s = spec;
  while (*s != '\0' && n < SIM_MAX_DEVICES) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    const char *e = s;
    size_t elen = len;
    while (elen > 0 && isspace((unsigned char)*e)) {
      e++;
      elen--;
    }
    while (elen > 0 && isspace((unsigned char)e[elen - 1]))
      elen--;
    int p = entry_device(e, elen, nphys);
    for (int k = 0; k < n && p >= 0; k++)
      if (out[k] == p)
        p = -1;
    if (p < 0)
      break;
    out[n++] = p;
    if (comma == NULL)
      break;
    s = comma + 1;
  }
  return n;
}
