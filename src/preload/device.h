/*
 * Each device's identity and setup (device.c).
 */
#ifndef CMG_PRELOAD_DEVICE_H
#define CMG_PRELOAD_DEVICE_H

#include <stddef.h>

/* Sets up `device` (physical size, limits, identity) the first time it is
 * seen. */
void cmg__device_setup(int device);

/* The device's UUID as "GPU-xxxxxxxx-...", or "" and -ENOENT. */
int cmg__device_uuid(int device, char *out, size_t len);

#endif /* CMG_PRELOAD_DEVICE_H */
