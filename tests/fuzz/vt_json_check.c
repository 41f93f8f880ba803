/* vt_json_check.h. Recursive descent, nesting bounded; strings must be valid UTF-8 with no raw control
 * character and only the escapes JSON has. */
#include <string.h>

#include "vt_json_check.h"
#include "vt_text.h"

struct vt_jc {
    const unsigned char *p, *end;
    int depth;
};

static void vt_ws(struct vt_jc *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int vt_lit(struct vt_jc *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
        return -1;
    j->p += n;
    return 0;
}

static int vt_hex4(const unsigned char *p)
{
    for (int i = 0; i < 4; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f') || (p[i] >= 'A' && p[i] <= 'F')))
            return -1;
    return 0;
}

static int vt_str(struct vt_jc *j)
{
    if (j->p >= j->end || *j->p != '"')
        return -1;
    for (j->p++; j->p < j->end;) {
        unsigned char c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            if (j->end - j->p < 2)
                return -1;
            unsigned char e = j->p[1];
            if (e == 'u') {
                if (j->end - j->p < 6 || vt_hex4(j->p + 2) < 0)
                    return -1;
                j->p += 6;
            } else if (strchr("\"\\/bfnrt", e) && e) {
                j->p += 2;
            } else {
                return -1;
            }
            continue;
        }
        size_t k = c < 0x80 ? 1 : vt_utf8_len(j->p, (size_t)(j->end - j->p));
        if (!k)
            return -1;
        j->p += k;
    }
    return -1;
}

static int vt_num(struct vt_jc *j)
{
    const unsigned char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end)
        return -1;
    if (*j->p == '0')
        j->p++;
    else if (*j->p >= '1' && *j->p <= '9')
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    else
        return -1;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return -1;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return -1;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    return j->p > s ? 0 : -1;
}

static int vt_value(struct vt_jc *j)
{
    vt_ws(j);
    if (j->p >= j->end || ++j->depth > 512)
        return -1;
    int r;
    unsigned char c = *j->p;
    if (c == '{' || c == '[') {
        unsigned char close = c == '{' ? '}' : ']';
        j->p++;
        vt_ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            r = 0;
        } else {
            for (r = -1;;) {
                if (c == '{') {
                    vt_ws(j);
                    if (vt_str(j) < 0)
                        break;
                    vt_ws(j);
                    if (j->p >= j->end || *j->p++ != ':')
                        break;
                }
                if (vt_value(j) < 0)
                    break;
                vt_ws(j);
                if (j->p < j->end && *j->p == ',') {
                    j->p++;
                    continue;
                }
                if (j->p < j->end && *j->p == close) {
                    j->p++;
                    r = 0;
                }
                break;
            }
        }
    } else if (c == '"') {
        r = vt_str(j);
    } else if (c == 't') {
        r = vt_lit(j, "true");
    } else if (c == 'f') {
        r = vt_lit(j, "false");
    } else if (c == 'n') {
        r = vt_lit(j, "null");
    } else {
        r = vt_num(j);
    }
    j->depth--;
    return r;
}

int vt_json_check(const char *s, size_t n)
{
    struct vt_jc j = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
    if (vt_value(&j) < 0)
        return -1;
    vt_ws(&j);
    return j.p == j.end ? 0 : -1;
}
