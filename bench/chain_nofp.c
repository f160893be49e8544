/*
 * The odd levels of libcmgbchain.so's chain (chain.c), built without frame
 * pointers, as a framework's wheels are; the even levels keep them.
 */
#pragma GCC optimize("omit-frame-pointer")

#define CMGB_CHAIN_NOFP 1
#include "chain.c"
