/*
 * Forced into every file of the portable build (scripts/portable): binds
 * the C library's functions whose default version is newer than the
 * folder's floor, glibc 2.28, to their older version, which every later
 * glibc still exports.  glibc 2.29 gave pow a new version that only drops
 * the SVID error handling removed in 2.27, so both versions compute the
 * same.  A reference to a name that a file does not use emits nothing.
 * The floor test (tests/containers/t-portable.sh) fails on any other.
 */
__asm__(".symver pow,pow@GLIBC_2.2.5");
