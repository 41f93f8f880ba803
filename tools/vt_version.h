/* The command's version: the release from the public header, and the git revision it was built from
 * (the Makefile passes VT_GIT_REVISION when the tree is a git checkout). */
#ifndef VT_VERSION_H
#define VT_VERSION_H

#include "vramtrace.h"

#define VT_VERSION VRAMTRACE_VERSION
#ifdef VT_GIT_REVISION
#define VT_REVISION VT_GIT_REVISION
#else
#define VT_REVISION ""
#endif

#endif
