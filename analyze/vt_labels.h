/* The frame that names each site in one line (vt_site_name): first its first Python frame that is not
 * the framework's own, else its innermost frame (vt_model.c); then, past allocation helpers. A helper is
 * a frame that sites with different callers all pass through and that allocates on their behalf
 * (`device_alloc()` in a server, a `my_cuda_malloc()` wrapper, a tensor factory): the name it would give
 * says nothing of who keeps the memory, and the leak and the cache would read alike. So where the sites
 * named by one frame have more than one caller, each is named by its caller instead, and again while
 * the new names are such helpers themselves (found from the dump itself; massif is told them with
 * --alloc-fn). Sites are compared within their class (allocated memory, an allocator's segments, a pool's
 * cache). Sites that one line reaches by the same caller keep that line's name, whatever called it
 * further out. Sites still named alike whose frames part inside the name (two lines of one function,
 * called from the line that names them) are named with the frame where they part too: "step (train.py:91)
 * via <module> (train.py:97)"; where no frame inside tells them, one outside does ("NAME via OUTER").
 * Inside a name that has a line, only a frame with a line tells (two C++ operators under one Python line
 * keep the line's name); elsewhere a C++ function or a symbol does too, past addresses with no symbol
 * (torch's segments made on autograd's thread, whose frames have no line). A line's site in several
 * dumps is not parted from itself. Where nothing tells them apart, they keep the name alone: one series
 * in Prometheus, summed. */
#ifndef VT_LABELS_H
#define VT_LABELS_H

#include <stddef.h>

#include "vt_model.h"

/* Moves sites[i].name_at outward past helpers. 0, or -1 when out of memory (names left as they were). */
int vt_labels_part(struct vt_site *sites, size_t n);

/* The same over the sites of several dumps together (diff, trend, html), from each site's name before
 * vt_labels_part moved it (name_base): a line is named alike in every dump, and a helper that any of them
 * shows (one dump may hold memory of one of its callers only) is passed in all. 0, or -1 when out of
 * memory (each dump's own names left). */
int vt_labels_part_models(struct vt_model *const *ms, size_t k);

/* Functions named as helpers too (VRAMTRACE_ALLOC_FNS, names apart by commas; NULL or "": none): a frame
 * of one of them never names a site while it has a caller. The list is copied; the reports and the
 * library's metrics file give it once. */
void vt_labels_alloc_fns(const char *list);

#endif
