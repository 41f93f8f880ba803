/* A frame as the reader names it: "function (file:line)" when its source line is known (a Python frame,
 * a native one symbolized from its module's debug information), else what the dump recorded
 * ("function+0x1f", "module.so+0x3d6aa"). The one format, written by the model and the symbolizer and
 * taken apart again by renderers that want the parts (pprof's functions and lines). */
#ifndef VT_FRAME_H
#define VT_FRAME_H

#include <stddef.h>

/* printf format of a frame with a source line: function, file, line (unsigned). */
#define VT_FRAME_FMT "%s (%s:%u)"

struct vt_frame_parts {
    const char *name; /* the function, name_len bytes (the whole frame when it has no line) */
    size_t name_len;
    const char *file; /* NULL when the frame has no file:line */
    size_t file_len;
    unsigned line;
};

/* Splits a frame written with VT_FRAME_FMT (the last " (" followed by "file:digits)" to the end, so a
 * C++ name with parentheses stays whole); any other frame is all name. The parts point into frame. */
void vt_frame_parts(const char *frame, struct vt_frame_parts *p);

#endif
