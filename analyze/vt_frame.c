/* Taking a frame's name apart (vt_frame.h). */
#include <string.h>

#include "vt_frame.h"

/* Whether s[0..n) is "file:digits" with a non-empty file; *line gets the digits. */
static int vt_file_line(const char *s, size_t n, size_t *colon, unsigned *line)
{
    size_t i = n;
    unsigned long v = 0, scale = 1;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') {
        if (scale > 100000000ul)
            return 0;
        v += (unsigned long)(s[i - 1] - '0') * scale;
        scale *= 10;
        i--;
    }
    if (i == n || i < 2 || s[i - 1] != ':')
        return 0;
    *colon = i - 1;
    *line = (unsigned)v;
    return 1;
}

void vt_frame_parts(const char *frame, struct vt_frame_parts *p)
{
    size_t len = strlen(frame);
    *p = (struct vt_frame_parts){frame, len, NULL, 0, 0};
    if (len < 6 || frame[len - 1] != ')')
        return;
    for (size_t open = len - 1; open-- > 1;) {
        if (frame[open] != '(' || frame[open - 1] != ' ')
            continue;
        const char *in = frame + open + 1;
        size_t colon;
        unsigned line;
        if (!vt_file_line(in, len - 1 - (open + 1), &colon, &line))
            return;
        p->name_len = open - 1;
        p->file = in;
        p->file_len = colon;
        p->line = line;
        return;
    }
}
