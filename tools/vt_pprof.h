/* pprof's profile of a report (vt_pprof.c): `vramtrace report --pprof FILE DUMP`. */
#ifndef VT_PPROF_H
#define VT_PPROF_H

#include "vt_model.h"

/* Writes m's live sites (device -2: all) to out as a gzipped profile.proto; dump_path goes in its
 * comment. Returns 0, or -1 after saying why on stderr. */
int vt_pprof_write(const char *out, const struct vt_model *m, int device, const char *dump_path);

#endif
