/* JSON writing: strings escaped per RFC 8259; unknown figures are null, never 0. */
#include "vt_dumpfile.h"
#include "vt_json.h"

void vt_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
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
