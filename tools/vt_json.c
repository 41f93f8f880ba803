/* JSON writing: strings escaped per RFC 8259; unknown figures are null, never 0. A string is always
 * valid UTF-8: a path or name from a dump may hold any bytes (Linux file names are bytes), and each
 * byte that does not start a well-formed sequence becomes U+FFFD, so every JSON parser reads the
 * output. */
#include <string.h>

#include "vt_dumpfile.h"
#include "vt_json.h"
#include "vt_text.h"

void vt_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p);
        } else if (*p < 0x80) {
            fputc(*p, f);
        } else {
            int n = (int)vt_utf8_len(p, (size_t)(end - p));
            if (n) {
                fwrite(p, 1, (size_t)n, f);
                p += n - 1;
            } else {
                fputs("\\ufffd", f);
            }
        }
    }
    fputc('"', f);
}

void vt_json_u64(FILE *f, uint64_t v)
{
    if (v == VT_DF_UNKNOWN)
        fputs("null", f);
    else
        fprintf(f, "%llu", (unsigned long long)v);
}

void vt_json_i64(FILE *f, int64_t v, int unknown)
{
    if (unknown)
        fputs("null", f);
    else
        fprintf(f, "%lld", (long long)v);
}

void vt_json_strs(FILE *f, char *const *s, uint32_t n)
{
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        vt_json_str(f, s[i]);
    }
    fputc(']', f);
}

void vt_json_str_or_null(FILE *f, const char *s)
{
    if (s)
        vt_json_str(f, s);
    else
        fputs("null", f);
}
