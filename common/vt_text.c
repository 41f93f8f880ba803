/* vt_text.h. */
#include <stdio.h>
#include <string.h>

#include "vt_text.h"

size_t vt_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k;
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range: narrower after E0, ED, F0, F4 */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return k;
}

/* How many bytes at u (n available) stand as they are: one plain ASCII character or one well-formed
 * UTF-8 sequence that is not a C1 control (U+0080 to U+009F: terminals act on those too); 0 when the
 * byte at u must be escaped. */
static size_t vt_plain_run(const unsigned char *u, size_t n, int flags)
{
    if (u[0] < 0x80)
        return u[0] >= 0x20 && u[0] != 0x7f && (u[0] != '\\' || (flags & VT_TEXT_KEEP_BSLASH)) &&
               !((flags & VT_TEXT_WORD) && u[0] == ' ');
    if (u[0] == 0xc2 && n > 1 && u[1] < 0xa0)
        return 0;
    return vt_utf8_len(u, n);
}

size_t vt_text_escape(char *out, size_t cap, const char *s, size_t n, int flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0;
    if (!cap)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t run = vt_plain_run(u + i, n - i, flags);
        if (run) {
            if (k + run >= cap)
                break;
            memcpy(out + k, u + i, run);
            k += run;
            i += run;
            continue;
        }
        if (k + 4 >= cap)
            break;
        snprintf(out + k, 5, "\\x%02x", u[i]);
        k += 4;
        i++;
    }
    out[k] = 0;
    return k;
}

int vt_text_needs_escape(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t run = vt_plain_run(u + i, n - i, 0);
        if (!run)
            return 1;
        i += run;
    }
    return 0;
}

static int vt_hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int vt_text_is_escaped(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (u[i] == '\\') {
            if (u[i + 1] != 'x' || vt_hex((char)u[i + 2]) < 0 || vt_hex((char)u[i + 3]) < 0)
                return 0;
            i += 4;
            continue;
        }
        size_t run = u[i] == ' ' ? 1 : vt_plain_run(u + i, n - i, 0);
        if (!run)
            return 0;
        i += run;
    }
    return 1;
}

int vt_text_unescape(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (const char *c = s; *c; k++) {
        if (k + 1 >= cap)
            return -1;
        int hi, lo;
        if (c[0] == '\\' && c[1] == 'x' && (hi = vt_hex(c[2])) >= 0 && (lo = vt_hex(c[3])) >= 0) {
            if (!(out[k] = (char)(hi << 4 | lo)))
                return -1;
            c += 4;
        } else {
            out[k] = *c++;
        }
    }
    out[k] = 0;
    return 0;
}
