/* How the reports write a site and a list of libraries: a site's frames as text, as a folded stack and in
 * JSON; the libraries as "cuBLAS 4.4 MiB, NCCL 8.0 MiB" and as JSON. The renderers' shared pieces, apart
 * from the model that computes them (analyze/vt_model.h). */
#ifndef VT_SITE_OUT_H
#define VT_SITE_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "vt_model.h"

/* Prints a site's frames, one per line after indent: at most max unless full, and of a stack that
 * goes on in Python only its innermost native frame before the Python frames. */
void vt_site_print_frames(const struct vt_site *s, const char *indent, uint32_t max, int full);
/* A site as a folded stack: its frames outermost first, apart by ';' (a ';' in a name becomes ','),
 * then "[kind api]": the stack of a line of flame-graph input, without its counts. */
void vt_site_folded(FILE *f, const struct vt_site *s);
/* A site in JSON (docs/JSON.md): its identity, "stack":[...],"python_from":N|null,"name":F|null (the frame
 * that names it, analyze/vt_labels.h),"kind":K,"api":A; and
 * where it is, "device":D,"library":L|null,"class":C. */
void vt_site_json_head(FILE *f, const struct vt_site *s);
void vt_site_json_place(FILE *f, const struct vt_site *s);
/* "cuBLAS 4.4 MiB, NCCL 8.0 MiB" on stdout; the JSON array [{"name","bytes"}...]. */
void vt_libs_text(const struct vt_libs *l);
void vt_libs_json(FILE *f, const struct vt_libs *l);

#endif
