/* Loading many dumps at once (vt_load.c): trend and html read a series of dumps, each parsed and its
 * model built on its own, so they are read side by side on the machine's cores. */
#ifndef VT_LOAD_H
#define VT_LOAD_H

#include "vt_trend.h"

/* Loads dm[i].path into dm[i].d and builds dm[i].m (model_flags: vt_model_build's) for every i < n;
 * shed: keep only what a series needs of each (vt_model_shed, vt_dumpfile_shed). On failure says on
 * stderr what the first bad file (in the order given) is, frees what was loaded and returns
 * VT_EXIT_USAGE (a bad dump) or 1 (out of memory); 0 when all are loaded. */
int vt_load_models(struct vt_dumpmodel *dm, int n, int model_flags, int shed);

#endif
