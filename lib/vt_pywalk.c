/* The frame walk (vt_pywalk.h). Every pointer read is checked against the type it must have before
 * anything behind it is read, so a layout that does not fit the interpreter ends the walk rather than
 * following garbage. */
#include <stdlib.h>
#include <string.h>

#include "vt_pylines.h"
#include "vt_pywalk.h"

#define AT(base, off, type) (*(type const *)((const char *)(base) + (off)))
#define VT_OB_TYPE 8 /* PyObject: refcount, then type */

static int vt_is(const void *o, const void *type)
{
    return o && ((uintptr_t)o & 7) == 0 && AT(o, VT_OB_TYPE, const void *) == type;
}

/* One multiply a word: the hash only picks a shard and a bucket, and keys are compared whole. */
static uint64_t vt_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static uint64_t vt_final(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

uint64_t vt_pywalk_hash(const uintptr_t *key, int n)
{
    uint64_t h = 0;
    for (int i = 0; i < 2 * n; i++)
        h = vt_mix(h, key[i]);
    return vt_final(vt_mix(0, (uint64_t)n) ^ h);
}

/* The first frame at or below f that the interpreter would report: not a shim on the C stack, not one
 * still being set up (as _PyFrame_IsIncomplete decides). */
static const void *vt_complete(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *f, int *bad)
{
    if (l->frame_owner < 0)
        return f;
    for (; f; f = AT(f, l->frame_back, const void *)) {
        char owner = AT(f, l->frame_owner, char);
        if (owner == VT_OWNED_BY_CSTACK && l->minor >= 13)
            continue;
        const void *code = AT(f, l->frame_code, const void *);
        if (!vt_is(code, t->code)) {
            if (owner == VT_OWNED_BY_CSTACK)
                continue;
            *bad = 1;
            return NULL;
        }
        const char *first = (const char *)code + l->code_adaptive;
        int traceable = AT(code, l->code_firsttraceable, int);
        const char *instr = AT(f, l->frame_instr, const char *);
        if (owner == VT_OWNED_BY_GENERATOR || instr >= first + 2 * (long)traceable)
            return f;
    }
    return NULL;
}

int vt_pywalk(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, uintptr_t *key, int max,
              uint64_t *hash)
{
    const void *f;
    if (l->ts_cframe >= 0) {
        const void *cframe = AT(tstate, l->ts_cframe, const void *);
        f = cframe ? AT(cframe, l->cframe_current, const void *) : NULL;
    } else {
        f = AT(tstate, l->ts_frame, const void *);
    }
    int n = 0, bad = 0;
    uint64_t h = 0;
    for (f = vt_complete(l, t, f, &bad); f && n < max; f = vt_complete(l, t, AT(f, l->frame_back, const void *), &bad)) {
        const void *code = AT(f, l->frame_code, const void *);
        if (!vt_is(code, t->code))
            return -1;
        int addr;
        switch (l->instr) {
        case VT_INSTR_LASTI_BYTES:
            addr = AT(f, l->frame_instr, int);
            break;
        case VT_INSTR_LASTI_UNITS:
            addr = AT(f, l->frame_instr, int);
            addr = addr < 0 ? -1 : 2 * addr;
            break;
        default:
            addr = (int)(AT(f, l->frame_instr, const char *) - ((const char *)code + l->code_adaptive));
            break;
        }
        uint64_t print = (AT(code, l->code_filename, uintptr_t) ^ AT(code, l->code_name, uintptr_t) << 1 ^
                          AT(code, l->code_linetable, uintptr_t) << 2 ^ (uint64_t)(uint32_t)AT(code, l->code_firstlineno, int))
                         * 0x9e3779b97f4a7c15ull;
        key[2 * n] = (uintptr_t)code;
        key[2 * n + 1] = (uintptr_t)(uint32_t)addr | ((uintptr_t)((uint32_t)(print >> 32) | 0x80000000u) << 32);
        h = vt_mix(vt_mix(h, key[2 * n]), key[2 * n + 1]);
        n++;
    }
    if (bad)
        return -1;
    *hash = vt_final(vt_mix(0, (uint64_t)n) ^ h);
    return n;
}

static void vt_put_utf8(char **p, uint32_t c)
{
    unsigned char *o = (unsigned char *)*p;
    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xc0 | c >> 6);
        *o++ = (unsigned char)(0x80 | (c & 63));
    } else if (c < 0x10000) {
        *o++ = (unsigned char)(0xe0 | c >> 12);
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
        *o++ = (unsigned char)(0x80 | (c & 63));
    } else {
        *o++ = (unsigned char)(0xf0 | c >> 18);
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 63));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
        *o++ = (unsigned char)(0x80 | (c & 63));
    }
    *p = (char *)o;
}

/* A compact str object's text as UTF-8, malloc'd; NULL when it is none (or a legacy string). */
static char *vt_text(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *s)
{
    if (!vt_is(s, t->unicode))
        return NULL;
    unsigned state = AT(s, l->unicode_state, unsigned);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    long len = AT(s, l->unicode_length, long);
    if (!compact || len < 0 || len > (1 << 20) || (kind != 1 && kind != 2 && kind != 4))
        return NULL;
    const unsigned char *data = (const unsigned char *)s + (ascii ? l->ascii_size : l->compact_size);
    char *out = malloc((size_t)len * 4 + 1), *p = out;
    if (!out)
        return NULL;
    for (long i = 0; i < len; i++) {
        uint32_t c = kind == 1 ? data[i] : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
        vt_put_utf8(&p, c);
    }
    *p = 0;
    return out;
}

int vt_pywalk_names(const struct vt_pylayout *l, const struct vt_pytypes *t, uintptr_t code, char **file, char **func)
{
    *file = vt_text(l, t, AT(code, l->code_filename, const void *));
    *func = l->code_qualname >= 0 ? vt_text(l, t, AT(code, l->code_qualname, const void *)) : NULL;
    if (!*func)
        *func = vt_text(l, t, AT(code, l->code_name, const void *));
    if (*file && *func)
        return 0;
    free(*file);
    free(*func);
    *file = *func = NULL;
    return -1;
}

int vt_pywalk_line(const struct vt_pylayout *l, const struct vt_pytypes *t, const uintptr_t *key, int i)
{
    const void *code = (const void *)VT_PYWALK_CODE(key, i);
    const void *table = AT(code, l->code_linetable, const void *);
    if (!vt_is(table, t->bytes))
        return -1;
    long len = AT(table, l->bytes_size, long);
    if (len < 0)
        return -1;
    return vt_pylines_line(l->lines, (const unsigned char *)table + l->bytes_data, (size_t)len,
                           AT(code, l->code_firstlineno, int), VT_PYWALK_ADDR(key, i));
}
