/* The dump reader. Line-oriented and strict: every field of every line is parsed and range-checked,
 * a record type it does not know is an error, and a file without its closing "end" is rejected, so a
 * truncated or corrupted dump is reported with the file and line, never half-read. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramtrace.h"
#include "vt_dumpfile.h"
#include "vt_format.h"
#include "vt_records.h"
#include "vt_text.h"

#define VT_DF_MAX_FIELDS 160
/* No record vramtrace writes comes near these: a longer line, or a larger single allocation, means the
 * file is not a dump or is damaged (and /dev/zero must not be read forever). */
#define VT_DF_MAX_LINE (1u << 20)
#define VT_DF_MAX_SIZE (1ull << 50) /* 1 PiB */

struct vt_df_parser {
    const char *path;
    unsigned long line;
    char *err;
    size_t errlen;
    char *field[VT_DF_MAX_FIELDS];
    int nf;
    char *rest; /* the text after the fields counted so far, for records ending in a path */
    size_t head; /* header records read so far, in order */
    int version;
};

static int vt_df_fail(struct vt_df_parser *p, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(p->err, p->errlen, "%s:%lu: ", p->path, p->line);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < p->errlen)
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

#define VT_DF_GROW(arr, n, cap)                                             \
    do {                                                                    \
        if ((n) == (cap)) {                                                 \
            size_t nc_ = (cap) ? 2 * (cap) : 16;                            \
            void *np_ = realloc((arr), nc_ * sizeof *(arr));                \
            if (!np_)                                                       \
                return vt_df_fail(p, "out of memory");                      \
            (arr) = np_;                                                    \
            (cap) = nc_;                                                    \
        }                                                                   \
    } while (0)

static int vt_df_u64(struct vt_df_parser *p, int i, uint64_t *out, int allow_unknown)
{
    const char *s = p->field[i];
    if (allow_unknown && !strcmp(s, "-")) {
        *out = VT_DF_UNKNOWN;
        return 0;
    }
    int hex = s[0] == '0' && s[1] == 'x';
    const char *digits = hex ? s + 2 : s;
    if (!*digits)
        return vt_df_fail(p, "field %d is not a number: '%s'", i + 1, s);
    for (const char *c = digits; *c; c++)
        if (!(hex ? ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')) : (*c >= '0' && *c <= '9')))
            return vt_df_fail(p, "field %d is not a number: '%s'", i + 1, s);
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, hex ? 16 : 10);
    if (errno == ERANGE)
        return vt_df_fail(p, "field %d is out of range: '%s'", i + 1, s);
    *out = v;
    return 0;
}

/* The size of something that lives in memory: no single one reaches VT_DF_MAX_SIZE. */
static int vt_df_size(struct vt_df_parser *p, int i, uint64_t *out)
{
    if (vt_df_u64(p, i, out, 0) < 0)
        return -1;
    if (*out >= VT_DF_MAX_SIZE)
        return vt_df_fail(p, "field %d is an impossible size: %s bytes (1 PiB or more)", i + 1, p->field[i]);
    return 0;
}

static int vt_df_int(struct vt_df_parser *p, int i, int *out, long lo, long hi)
{
    const char *s = p->field[i];
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno == ERANGE || v < lo || v > hi)
        return vt_df_fail(p, "field %d is not a number from %ld to %ld: '%s'", i + 1, lo, hi, s);
    *out = (int)v;
    return 0;
}

static int vt_df_u32(struct vt_df_parser *p, int i, uint32_t *out)
{
    uint64_t v;
    if (vt_df_u64(p, i, &v, 0) < 0)
        return -1;
    if (v > UINT32_MAX)
        return vt_df_fail(p, "field %d is out of range: '%s'", i + 1, p->field[i]);
    *out = (uint32_t)v;
    return 0;
}

static int vt_df_word(struct vt_df_parser *p, int i, char *out, size_t len)
{
    if (strlen(p->field[i]) >= len)
        return vt_df_fail(p, "field %d is too long", i + 1);
    strcpy(out, p->field[i]);
    return 0;
}

/* The distinct names of a dump, each kept once: open addressing over their FNV-1a hashes. */
#define VT_DF_NAME_SLOTS 1024
struct vt_df_names {
    char *v[VT_DF_NAME_SLOTS];
};

/* Field i as one of the dump's names (shorter than len), in *out. */
static int vt_df_name(struct vt_df_parser *p, struct vt_dumpfile *d, int i, size_t len, const char **out)
{
    const char *w = p->field[i];
    if (strlen(w) >= len)
        return vt_df_fail(p, "field %d is too long", i + 1);
    if (!d->names && !(d->names = calloc(1, sizeof *d->names)))
        return vt_df_fail(p, "out of memory");
    uint32_t h = 2166136261u;
    for (const char *c = w; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    for (uint32_t k = 0; k < VT_DF_NAME_SLOTS; k++) {
        char **slot = &d->names->v[(h + k) % VT_DF_NAME_SLOTS];
        if (*slot && strcmp(*slot, w))
            continue;
        if (!*slot && !(*slot = strdup(w)))
            return vt_df_fail(p, "out of memory");
        *out = *slot;
        return 0;
    }
    return vt_df_fail(p, "more than %d different kind and API names", VT_DF_NAME_SLOTS);
}

static int vt_df_nfields(struct vt_df_parser *p, int want)
{
    if (p->nf != want)
        return vt_df_fail(p, "'%s' record has %d fields, expected %d", p->field[0], p->nf, want);
    return 0;
}

/* Splits at most max fields; the text after them stays in p->rest. */
static void vt_df_split(struct vt_df_parser *p, char *s, int max)
{
    p->nf = 0;
    p->rest = NULL;
    while (*s && p->nf < max) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        p->field[p->nf++] = s;
        while (*s && *s != ' ')
            s++;
        if (*s)
            *s++ = 0;
    }
    while (*s == ' ')
        s++;
    p->rest = *s ? s : NULL;
}

/* Field i as the kind of an `alloc` record (rec 0) or a `phys` record (rec 1): *out the kind, or -1 when
 * the word is no such kind (the caller says so once the record's other fields are read). */
static int vt_df_kind_field(struct vt_df_parser *p, int i, int rec, int *out)
{
    const char *w = p->field[i];
    if (strlen(w) >= VT_DF_KIND_LEN)
        return vt_df_fail(p, "field %d is too long", i + 1);
    *out = -1;
    for (int k = 0; k < VT_KIND_COUNT; k++)
        if (vt_kind_record((enum vt_kind)k) == rec && !strcmp(w, vt_kind_word((enum vt_kind)k)))
            *out = k;
    return 0;
}

struct vt_df_caps {
    size_t devices, pools, counters, apis, kinds, unwatched, modules, stacks, frames, allocs, phys;
    size_t bridges, allocators, segments, blocks, pyframes, pystacks, failed, running, pool_segments, held;
    size_t peaks, peak_freed;
};

/* Records that end in free text, and how many fields come before it. */
static int vt_df_text_fields(const char *line)
{
    if (line[0] == 'a') /* alloc, allocator, api: none ends in text */
        return VT_DF_MAX_FIELDS;
    static const struct { const char *prefix; int fields; } text[] = {
        {VT_REC_EXE " ", 1},
        {VT_REC_CMDLINE " ", 1},
        {VT_REC_HISTORY " ", 3},
        {VT_REC_MODULE " ", VT_F_MODULE_PATH},
        {VT_REC_PYTHON " ", VT_F_PYTHON_DETAIL},
        {VT_REC_BRIDGE " ", VT_F_BRIDGE_DETAIL},
        {VT_REC_TRACKER " ", VT_F_TRACKER_DETAIL},
        {VT_REC_PYFRAME " ", VT_F_PYFRAME_FILE},
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (!strncmp(line, text[i].prefix, strlen(text[i].prefix)))
            return text[i].fields;
    return VT_DF_MAX_FIELDS;
}

/* The free text of a record, NULL for none ("-" or nothing). */
static int vt_df_rest(struct vt_df_parser *p, char **out)
{
    *out = NULL;
    if (!p->rest || !strcmp(p->rest, "-"))
        return 0;
    return (*out = strdup(p->rest)) ? 0 : vt_df_fail(p, "out of memory");
}

/* The records of the caching-allocator bridges, one function each. */
static int vt_df_rec_python(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    (void)cap;
    struct vt_df_python *v = &d->python;
    if (v->present)
        return vt_df_fail(p, "a second 'python' record");
    if (p->nf != VT_F_PYTHON_DETAIL || vt_df_word(p, VT_F_PYTHON_STATUS, v->status, sizeof v->status) < 0 || vt_df_u64(p, VT_F_PYTHON_WAIT_NS, &v->wait_ns, 0) < 0 ||
        vt_df_u64(p, VT_F_PYTHON_RUN_NS, &v->run_ns, 0) < 0)
        return p->nf != VT_F_PYTHON_DETAIL ? vt_df_fail(p, "'python' record needs a status, two times and a detail") : -1;
    v->present = 1;
    return vt_df_rest(p, &v->detail);
}

static int vt_df_rec_history(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    (void)cap;
    struct vt_df_python *v = &d->python;
    if (p->nf != 3 || strcmp(p->field[1], "torch") || vt_df_word(p, 2, v->history, sizeof v->history) < 0)
        return p->nf != 3 || strcmp(p->field[1], "torch") ? vt_df_fail(p, "'history' record must be 'history torch STATE [DETAIL]'") : -1;
    free(v->history_detail);
    return vt_df_rest(p, &v->history_detail);
}

static int vt_df_rec_interpreter(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    (void)cap;
    struct vt_df_interpreter *v = &d->interpreter;
    if (v->present)
        return vt_df_fail(p, "a second 'interpreter' record");
    if (vt_df_nfields(p, VT_F_INTERPRETER_NF) < 0 || vt_df_word(p, VT_F_INTERPRETER_VERSION, v->version, sizeof v->version) < 0 ||
        vt_df_word(p, VT_F_INTERPRETER_CAPTURE, v->capture, sizeof v->capture) < 0 || vt_df_u64(p, VT_F_INTERPRETER_LO, &v->lo, 0) < 0 ||
        vt_df_u64(p, VT_F_INTERPRETER_HI, &v->hi, 0) < 0)
        return -1;
    if (strcmp(v->capture, "on") && strcmp(v->capture, "off") && strcmp(v->capture, "unsupported"))
        return vt_df_fail(p, "Python call sites must be on, off or unsupported, not '%s'", v->capture);
    if (v->hi < v->lo)
        return vt_df_fail(p, "the interpreter's code ends before it starts");
    v->present = 1;
    return 0;
}

static int vt_df_rec_bridge(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->bridges, d->nbridges, cap->bridges);
    struct vt_df_bridge *v = &d->bridges[d->nbridges];
    memset(v, 0, sizeof *v);
    if (p->nf != VT_F_BRIDGE_DETAIL)
        return vt_df_fail(p, "'bridge' record needs a name, a status and a detail");
    if (vt_df_word(p, VT_F_BRIDGE_NAME, v->name, sizeof v->name) < 0 || vt_df_word(p, VT_F_BRIDGE_STATUS, v->status, sizeof v->status) < 0 ||
        vt_df_rest(p, &v->detail) < 0)
        return -1;
    d->nbridges++;
    return 0;
}

static int vt_df_rec_tracker(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    (void)cap;
    struct vt_df_tracker *v = &d->tracker;
    if (v->present)
        return vt_df_fail(p, "a second 'tracker' record");
    if (p->nf != VT_F_TRACKER_DETAIL || strcmp(p->field[VT_F_TRACKER_NAME], "torch"))
        return vt_df_fail(p, "'tracker' record must be 'tracker torch STATE DETAIL'");
    if (vt_df_word(p, VT_F_TRACKER_STATE, v->state, sizeof v->state) < 0)
        return -1;
    if (strcmp(v->state, "on") && strcmp(v->state, "off") && strcmp(v->state, "waiting"))
        return vt_df_fail(p, "torch's tracker must be on, off or waiting, not '%s'", v->state);
    v->on = !strcmp(v->state, "on");
    /* Off or waiting, the bridge wrote torch's blocks (history) before it; on, there must be none. */
    if (d->nblocks && v->on)
        return vt_df_fail(p, "'tracker torch on' after torch's block records");
    v->present = 1;
    return vt_df_rest(p, &v->detail);
}

static int vt_df_rec_allocator(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->allocators, d->nallocators, cap->allocators);
    struct vt_df_allocator *v = &d->allocators[d->nallocators];
    if (vt_df_nfields(p, VT_F_ALLOCATOR_NF) < 0 || vt_df_word(p, VT_F_ALLOCATOR_NAME, v->name, sizeof v->name) < 0 ||
        vt_df_int(p, VT_F_ALLOCATOR_DEV, &v->device, -1, 1023) < 0 ||
        vt_df_word(p, VT_F_ALLOCATOR_BACKEND, v->backend, sizeof v->backend) < 0 ||
        vt_df_u64(p, VT_F_ALLOCATOR_ALLOCATED, &v->allocated, 1) < 0 ||
        vt_df_u64(p, VT_F_ALLOCATOR_RESERVED, &v->reserved, 1) < 0)
        return -1;
    d->nallocators++;
    return 0;
}

static int vt_df_rec_segment(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->segments, d->nsegments, cap->segments);
    struct vt_df_segment *v = &d->segments[d->nsegments];
    memset(v, 0, sizeof *v);
    if (vt_df_nfields(p, VT_F_SEGMENT_NF) < 0 || vt_df_u64(p, VT_F_SEGMENT_ADDR, &v->addr, 0) < 0 ||
        vt_df_size(p, VT_F_SEGMENT_SIZE, &v->size) < 0 || vt_df_int(p, VT_F_SEGMENT_DEV, &v->device, -1, 1023) < 0 ||
        vt_df_word(p, VT_F_SEGMENT_ALLOCATOR, v->allocator, sizeof v->allocator) < 0 ||
        vt_df_word(p, VT_F_SEGMENT_TYPE, v->type, sizeof v->type) < 0 ||
        vt_df_word(p, VT_F_SEGMENT_POOL, v->pool, sizeof v->pool) < 0)
        return -1;
    if (strcmp(p->field[VT_F_SEGMENT_LAYOUT], "expandable") && strcmp(p->field[VT_F_SEGMENT_LAYOUT], "fixed"))
        return vt_df_fail(p, "segment must be expandable or fixed, not '%s'", p->field[VT_F_SEGMENT_LAYOUT]);
    if (v->addr + v->size < v->addr)
        return vt_df_fail(p, "segment runs past the end of the address space");
    v->expandable = !strcmp(p->field[VT_F_SEGMENT_LAYOUT], "expandable");
    v->line = p->line;
    v->first_block = d->nblocks;
    d->nsegments++;
    return 0;
}

static int vt_df_rec_block(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    static const char *const states[] = {"active_allocated", "active_pending_free", "inactive"};
    VT_DF_GROW(d->blocks, d->nblocks, cap->blocks);
    struct vt_df_block *v = &d->blocks[d->nblocks];
    if (!d->nsegments)
        return vt_df_fail(p, "a block before any segment");
    if (d->tracker.on)
        return vt_df_fail(p, "a 'block' record with torch's tracker on: its blocks are entries");
    if (vt_df_nfields(p, VT_F_BLOCK_NF) < 0 || vt_df_u64(p, VT_F_BLOCK_ADDR, &v->addr, 0) < 0 ||
        vt_df_size(p, VT_F_BLOCK_SIZE, &v->size) < 0 || vt_df_size(p, VT_F_BLOCK_REQUESTED, &v->requested) < 0 ||
        vt_df_u32(p, VT_F_BLOCK_PYSTACK, &v->pystack) < 0)
        return -1;
    for (v->state = 0; v->state < 3 && strcmp(states[v->state], p->field[VT_F_BLOCK_STATE]); v->state++)
        ;
    if (v->state == 3)
        return vt_df_fail(p, "unknown block state '%s'", p->field[VT_F_BLOCK_STATE]);
    struct vt_df_segment *seg = &d->segments[d->nsegments - 1];
    if (v->addr < seg->addr || v->size > seg->size || v->addr - seg->addr > seg->size - v->size)
        return vt_df_fail(p, "block 0x%llx (%llu bytes) is not inside its segment 0x%llx (%llu bytes)",
                          (unsigned long long)v->addr, (unsigned long long)v->size,
                          (unsigned long long)seg->addr, (unsigned long long)seg->size);
    v->line = p->line;
    v->segment = d->nsegments - 1;
    seg->nblocks++;
    d->nblocks++;
    return 0;
}

static int vt_df_rec_pyframe(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->pyframes, d->npyframes, cap->pyframes);
    struct vt_df_pyframe *v = &d->pyframes[d->npyframes];
    memset(v, 0, sizeof *v);
    if (p->nf != VT_F_PYFRAME_FILE || !p->rest)
        return vt_df_fail(p, "'pyframe' record needs an id, a line, a function and a file");
    if (vt_df_u32(p, VT_F_PYFRAME_ID, &v->id) < 0 || vt_df_u32(p, VT_F_PYFRAME_LINE, &v->line) < 0)
        return -1;
    if (!v->id)
        return vt_df_fail(p, "pyframe id 0 is reserved");
    if (!(v->func = strdup(p->field[VT_F_PYFRAME_FUNCTION])) || !(v->file = strdup(p->rest))) {
        free(v->func);
        return vt_df_fail(p, "out of memory");
    }
    d->npyframes++;
    return 0;
}

static int vt_df_rec_held(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->held, d->nheld, cap->held);
    struct vt_df_held *v = &d->held[d->nheld];
    if (vt_df_nfields(p, VT_F_HELD_NF) < 0 ||
        vt_df_word(p, VT_F_HELD_ALLOCATOR, v->allocator, sizeof v->allocator) < 0 ||
        vt_df_int(p, VT_F_HELD_DEV, &v->device, -1, 1023) < 0 || vt_df_u64(p, VT_F_HELD_COUNT, &v->count, 0) < 0 ||
        vt_df_u64(p, VT_F_HELD_BYTES, &v->bytes, 0) < 0 || vt_df_u32(p, VT_F_HELD_PYSTACK, &v->pystack) < 0)
        return -1;
    v->line = p->line;
    d->nheld++;
    return 0;
}

static int vt_df_rec_running(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->running, d->nrunning, cap->running);
    struct vt_df_running *v = &d->running[d->nrunning];
    /* The thread's id and when its stack was read, from version 7 on ('-': not known). */
    int has_tid = d->version >= 7;
    v->tid = -1;
    v->at = VT_DF_UNKNOWN;
    if (vt_df_nfields(p, has_tid ? VT_F_RUNNING_NF : VT_F_RUNNING_TID) < 0 ||
        vt_df_u32(p, VT_F_RUNNING_PYSTACK, &v->pystack) < 0)
        return -1;
    if (has_tid && strcmp(p->field[VT_F_RUNNING_TID], "-") && vt_df_int(p, VT_F_RUNNING_TID, &v->tid, 1, INT32_MAX) < 0)
        return -1;
    if (has_tid && vt_df_u64(p, VT_F_RUNNING_AT, &v->at, 1) < 0)
        return -1;
    if (!v->pystack)
        return vt_df_fail(p, "'running' needs a pystack id, not 0");
    v->line = p->line;
    d->nrunning++;
    return 0;
}

static int vt_df_rec_pystack(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->pystacks, d->npystacks, cap->pystacks);
    struct vt_df_pystack *v = &d->pystacks[d->npystacks];
    if (p->nf < 3 || vt_df_u32(p, 1, &v->id) < 0 || vt_df_u32(p, 2, &v->n) < 0)
        return p->nf < 3 ? vt_df_fail(p, "'pystack' record needs an id and a frame count") : -1;
    if (!v->id)
        return vt_df_fail(p, "pystack id 0 is reserved");
    if (v->n == 0 || (int)v->n != p->nf - 3)
        return vt_df_fail(p, "pystack %u says %u frames but has %d", v->id, v->n, p->nf - 3);
    v->line = p->line;
    if (!(v->frames = malloc(v->n * sizeof *v->frames)))
        return vt_df_fail(p, "out of memory");
    for (uint32_t i = 0; i < v->n; i++)
        if (vt_df_u32(p, 3 + (int)i, &v->frames[i]) < 0) {
            free(v->frames);
            return -1;
        }
    d->npystacks++;
    return 0;
}

static int vt_df_header(struct vt_df_parser *p, struct vt_dumpfile *d, const char *key, int *seen)
{
    if (!strcmp(key, VT_REC_PID) || !strcmp(key, VT_REC_PPID)) {
        int v;
        if (vt_df_nfields(p, VT_F_PID_NF) < 0 || vt_df_int(p, VT_F_PID_N, &v, 0, 0x7fffffff) < 0)
            return -1;
        *(key[0] == 'p' && key[1] == 'p' ? &d->ppid : &d->pid) = v;
        if (key[1] == 'i')
            *seen |= 1;
    } else if (!strcmp(key, VT_REC_REASON)) {
#define VT_REASON_WORD(e, word) word,
        static const char *const ok[] = {VT_REASONS(VT_REASON_WORD)};
#undef VT_REASON_WORD
        if (vt_df_nfields(p, VT_F_REASON_NF) < 0)
            return -1;
        size_t i;
        for (i = 0; i < sizeof ok / sizeof ok[0] && strcmp(ok[i], p->field[VT_F_REASON_R]); i++)
            ;
        if (i == sizeof ok / sizeof ok[0])
            return vt_df_fail(p, "unknown dump reason '%s'", p->field[VT_F_REASON_R]);
        strcpy(d->reason, p->field[VT_F_REASON_R]);
        *seen |= 2;
    } else if (!strcmp(key, VT_REC_SEQ)) {
        uint64_t v;
        if (vt_df_nfields(p, VT_F_SEQ_NF) < 0 || vt_df_u64(p, VT_F_SEQ_N, &v, 0) < 0)
            return -1;
        d->seq = (unsigned long)v;
    } else if (!strcmp(key, VT_REC_TIME) || !strcmp(key, VT_REC_START)) {
        uint64_t w, m;
        if (vt_df_nfields(p, VT_F_TIME_NF) < 0 || vt_df_u64(p, VT_F_TIME_WALL, &w, 0) < 0 ||
            vt_df_u64(p, VT_F_TIME_MONO, &m, 0) < 0)
            return -1;
        if (key[0] == 't') {
            d->time_wall = w;
            d->time_mono = m;
        } else {
            d->start_wall = w;
            d->start_mono = m;
        }
    } else if (!strcmp(key, VT_REC_DEPTH)) {
        if (vt_df_nfields(p, VT_F_DEPTH_NF) < 0 || vt_df_int(p, VT_F_DEPTH_N, &d->depth, 0, 1024) < 0)
            return -1;
    } else {
        return 1;
    }
    return 0;
}

_Static_assert(sizeof(struct vt_df_alloc) == 56 || sizeof(void *) != 8, "an entry stays 56 bytes (vt_dumpfile.h)");

/* An `alloc` record: most of a large dump's lines, so read before the other records are tried. */
static int vt_df_alloc_record(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    if (d->nallocs >= UINT32_MAX - 1) /* the reader counts them in 32 bits (vt_views.c) */
        return vt_df_fail(p, "more than %u allocations", UINT32_MAX - 1);
    VT_DF_GROW(d->allocs, d->nallocs, cap->allocs);
    struct vt_df_alloc *v = &d->allocs[d->nallocs];
    uint64_t unused;
    int kind, device;
    if (vt_df_nfields(p, VT_F_ALLOC_NF) < 0 || vt_df_u64(p, VT_F_ALLOC_ADDR, &v->addr, 0) < 0 ||
        vt_df_size(p, VT_F_ALLOC_SIZE, &v->size) < 0 || vt_df_kind_field(p, VT_F_ALLOC_KIND, 0, &kind) < 0 ||
        vt_df_name(p, d, VT_F_ALLOC_API, VT_DF_API_LEN, &v->api) < 0 ||
        vt_df_int(p, VT_F_ALLOC_DEV, &device, -1, 1023) < 0 || vt_df_u64(p, VT_F_ALLOC_STREAM, &unused, 0) < 0 ||
        vt_df_u64(p, VT_F_ALLOC_POOL, &unused, 0) < 0 || vt_df_u64(p, VT_F_ALLOC_HANDLE, &v->handle, 0) < 0 ||
        vt_df_u64(p, VT_F_ALLOC_OFFSET, &unused, 0) < 0 || vt_df_u32(p, VT_F_ALLOC_STACK, &v->stack) < 0 ||
        vt_df_u64(p, VT_F_ALLOC_SEQ, &unused, 0) < 0 || vt_df_u64(p, VT_F_ALLOC_TIME, &v->time_ns, 0) < 0 ||
        vt_df_int(p, VT_F_ALLOC_TID, &v->tid, 0, 0x7fffffff) < 0)
        return -1;
    if (kind < 0)
        return vt_df_fail(p, "unknown allocation kind '%s'", p->field[VT_F_ALLOC_KIND]);
    v->kind = (uint8_t)kind;
    v->device = (int16_t)device;
    v->line = p->line < UINT32_MAX ? (uint32_t)p->line : UINT32_MAX;
    d->nallocs++;
    return 0;
}

static int vt_df_rec_exe(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    const char *key = p->field[0];
    (void)cap;
    if (p->nf != 1 || !p->rest)
        return vt_df_fail(p, "'%s' record needs its text", key);
    char **to = key[0] == 'e' ? &d->exe : &d->cmdline;
    if (*to)
        return vt_df_fail(p, "a second '%s' record", key);
    if (!(*to = strdup(p->rest)))
        return vt_df_fail(p, "out of memory");
    return 0;
}

static int vt_df_rec_device(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->devices, d->ndevices, cap->devices);
    struct vt_df_device *v = &d->devices[d->ndevices];
    if (vt_df_nfields(p, VT_F_DEVICE_NF) < 0 || vt_df_int(p, VT_F_DEVICE_ORD, &v->ordinal, 0, 1023) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_TOTAL, &v->total, 1) < 0 || vt_df_u64(p, VT_F_DEVICE_FREE, &v->free, 1) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_RESERVED, &v->reserved, 0) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_PEAK, &v->reserved_peak, 0) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_PROCESS_USED, &v->process_used, 1) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_GRAPH_RESERVED, &v->graph_reserved, 1) < 0 ||
        vt_df_u64(p, VT_F_DEVICE_GRAPH_USED, &v->graph_used, 1) < 0)
        return -1;
    for (size_t i = 0; i < d->ndevices; i++)
        if (d->devices[i].ordinal == v->ordinal)
            return vt_df_fail(p, "device %d is listed twice", v->ordinal);
    v->has_limits = 0;
    v->malloc_heap = v->stack_per_thread = v->resident_threads = v->printf_fifo = VT_DF_UNKNOWN;
    d->ndevices++;
    return 0;
}

static int vt_df_rec_peak(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->peaks, d->npeaks, cap->peaks);
    struct vt_df_peak *v = &d->peaks[d->npeaks];
    if (vt_df_nfields(p, VT_F_PEAK_NF) < 0 || vt_df_int(p, VT_F_PEAK_DEV, &v->device, 0, 1023) < 0 ||
        vt_df_size(p, VT_F_PEAK_BYTES, &v->bytes) < 0 || vt_df_u64(p, VT_F_PEAK_TIME, &v->time_ns, 1) < 0)
        return -1;
    for (size_t i = 0; i < d->npeaks; i++)
        if (d->peaks[i].device == v->device)
            return vt_df_fail(p, "device %d has a second peak", v->device);
    v->line = p->line;
    d->npeaks++;
    return 0;
}

static int vt_df_rec_peak_freed(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->peak_freed, d->npeak_freed, cap->peak_freed);
    struct vt_df_peak_freed *v = &d->peak_freed[d->npeak_freed];
    int kind, phys_kind;
    if (vt_df_nfields(p, VT_F_PEAK_FREED_NF) < 0 || vt_df_int(p, VT_F_PEAK_FREED_DEV, &v->device, 0, 1023) < 0 ||
        vt_df_u32(p, VT_F_PEAK_FREED_STACK, &v->stack) < 0 ||
        vt_df_kind_field(p, VT_F_PEAK_FREED_KIND, 0, &kind) < 0 ||
        vt_df_kind_field(p, VT_F_PEAK_FREED_KIND, 1, &phys_kind) < 0 ||
        vt_df_name(p, d, VT_F_PEAK_FREED_API, VT_DF_API_LEN, &v->api) < 0 ||
        vt_df_size(p, VT_F_PEAK_FREED_BYTES, &v->bytes) < 0)
        return -1;
    v->kind = kind >= 0 ? kind : phys_kind;
    if (v->kind < 0 || !vt_kind_reserved((enum vt_kind)v->kind))
        return vt_df_fail(p, "'%s' is no kind of reserved memory", p->field[VT_F_PEAK_FREED_KIND]);
    v->line = p->line;
    d->npeak_freed++;
    return 0;
}

static int vt_df_rec_limits(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    (void)cap;
    int ord;
    if (vt_df_nfields(p, VT_F_LIMITS_NF) < 0 || vt_df_int(p, VT_F_LIMITS_ORD, &ord, 0, 1023) < 0)
        return -1;
    struct vt_df_device *v = d->ndevices && d->devices[d->ndevices - 1].ordinal == ord ? &d->devices[d->ndevices - 1] : NULL;
    if (!v)
        return vt_df_fail(p, "limits of device %d, which is not the device record above", ord);
    if (vt_df_u64(p, VT_F_LIMITS_MALLOC_HEAP, &v->malloc_heap, 1) < 0 ||
        vt_df_u64(p, VT_F_LIMITS_STACK_PER_THREAD, &v->stack_per_thread, 1) < 0 ||
        vt_df_u64(p, VT_F_LIMITS_RESIDENT_THREADS, &v->resident_threads, 1) < 0 ||
        vt_df_u64(p, VT_F_LIMITS_PRINTF_FIFO, &v->printf_fifo, 1) < 0)
        return -1;
    v->has_limits = 1;
    return 0;
}

static int vt_df_rec_pool(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->pools, d->npools, cap->pools);
    struct vt_df_pool *v = &d->pools[d->npools];
    if (vt_df_nfields(p, VT_F_POOL_NF) < 0 || vt_df_u64(p, VT_F_POOL_HANDLE, &v->handle, 0) < 0 ||
        vt_df_int(p, VT_F_POOL_DEV, &v->device, -1, 1023) < 0)
        return -1;
    if (strcmp(p->field[VT_F_POOL_TYPE], "default") && strcmp(p->field[VT_F_POOL_TYPE], "explicit"))
        return vt_df_fail(p, "pool kind must be default or explicit, not '%s'", p->field[VT_F_POOL_TYPE]);
    v->is_default = !strcmp(p->field[VT_F_POOL_TYPE], "default");
    if (vt_df_u64(p, VT_F_POOL_RESERVED, &v->reserved, 1) < 0 || vt_df_u64(p, VT_F_POOL_USED, &v->used, 1) < 0 ||
        vt_df_u64(p, VT_F_POOL_RESERVED_HIGH, &v->reserved_high, 1) < 0 ||
        vt_df_u64(p, VT_F_POOL_USED_HIGH, &v->used_high, 1) < 0 ||
        vt_df_u64(p, VT_F_POOL_THRESHOLD, &v->threshold, 1) < 0)
        return -1;
    v->threshold_known = strcmp(p->field[VT_F_POOL_THRESHOLD], "-") != 0;
    for (size_t i = 0; i < d->npools; i++)
        if (d->pools[i].handle == v->handle)
            return vt_df_fail(p, "pool 0x%llx is listed twice", (unsigned long long)v->handle);
    d->npools++;
    return 0;
}

static int vt_df_rec_counter(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    const char *key = p->field[0];
    int is_counter = key[0] == 'c';
    struct vt_df_named **arr = is_counter ? &d->counters : &d->unwatched;
    size_t *n = is_counter ? &d->ncounters : &d->nunwatched;
    VT_DF_GROW(*arr, *n, *(is_counter ? &cap->counters : &cap->unwatched));
    struct vt_df_named *v = &(*arr)[*n];
    memset(v, 0, sizeof *v);
    if (vt_df_nfields(p, VT_F_COUNTER_NF) < 0 || vt_df_word(p, VT_F_COUNTER_NAME, v->name, sizeof v->name) < 0 ||
        vt_df_u64(p, VT_F_COUNTER_VALUE, &v->count, 0) < 0)
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, v->name))
            return vt_df_fail(p, "%s '%s' is listed twice", key, v->name);
    (*n)++;
    return 0;
}

static int vt_df_rec_kind(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->kinds, d->nkinds, cap->kinds);
    struct vt_df_kind *v = &d->kinds[d->nkinds];
    if (vt_df_nfields(p, VT_F_KIND_NF) < 0 || vt_df_word(p, VT_F_KIND_NAME, v->name, sizeof v->name) < 0 ||
        vt_df_u64(p, VT_F_KIND_COUNT, &v->count, 0) < 0 || vt_df_u64(p, VT_F_KIND_BYTES, &v->bytes, 0) < 0 ||
        vt_df_u64(p, VT_F_KIND_ALLOCS, &v->allocs, 0) < 0 || vt_df_u64(p, VT_F_KIND_FREES, &v->frees, 0) < 0 ||
        vt_df_u64(p, VT_F_KIND_BYTES_ALLOC, &v->bytes_alloc, 0) < 0 ||
        vt_df_u64(p, VT_F_KIND_BYTES_FREED, &v->bytes_freed, 0) < 0)
        return -1;
    for (size_t i = 0; i < d->nkinds; i++)
        if (!strcmp(d->kinds[i].name, v->name))
            return vt_df_fail(p, "kind '%s' is listed twice", v->name);
    d->nkinds++;
    return 0;
}

static int vt_df_rec_api(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->apis, d->napis, cap->apis);
    struct vt_df_api *v = &d->apis[d->napis];
    if (vt_df_nfields(p, VT_F_API_NF) < 0 || vt_df_word(p, VT_F_API_NAME, v->name, sizeof v->name) < 0 ||
        vt_df_u64(p, VT_F_API_CALLS, &v->calls, 0) < 0 || vt_df_u64(p, VT_F_API_ALLOCS, &v->allocs, 0) < 0 ||
        vt_df_u64(p, VT_F_API_FREES, &v->frees, 0) < 0 || vt_df_u64(p, VT_F_API_BYTES_ALLOC, &v->bytes_alloc, 0) < 0 ||
        vt_df_u64(p, VT_F_API_BYTES_FREED, &v->bytes_freed, 0) < 0 || vt_df_u64(p, VT_F_API_FAILED, &v->failed, 0) < 0)
        return -1;
    for (size_t i = 0; i < d->napis; i++)
        if (!strcmp(d->apis[i].name, v->name))
            return vt_df_fail(p, "api '%s' is listed twice", v->name);
    d->napis++;
    return 0;
}

static int vt_df_rec_failed(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    const char *key = p->field[0];
    if (!((!strcmp(key, "oom") && d->version <= 3) || (!strcmp(key, VT_REC_FAILED) && d->version >= 4)))
        return vt_df_fail(p, "unknown record '%s'", key);
    int old = key[0] == 'o';
    if (old && d->nfailed)
        return vt_df_fail(p, "a second 'oom' record");
    VT_DF_GROW(d->failed, d->nfailed, cap->failed);
    struct vt_df_failed *v = &d->failed[d->nfailed];
    memset(v, 0, sizeof *v);
    if (vt_df_nfields(p, old ? 8 : VT_F_FAILED_NF) < 0 || vt_df_u64(p, VT_F_FAILED_SEQ, &v->seq, 0) < 0 ||
        vt_df_word(p, VT_F_FAILED_API, v->api, sizeof v->api) < 0 || vt_df_u64(p, VT_F_FAILED_SIZE, &v->size, 0) < 0 ||
        vt_df_int(p, VT_F_FAILED_DEV, &v->device, -1, 1023) < 0 || vt_df_u32(p, VT_F_FAILED_STACK, &v->stack) < 0 ||
        vt_df_int(p, VT_F_FAILED_RESULT, &v->result, -0x7fffffffL, 0x7fffffff) < 0)
        return -1;
    if (old) {
        v->count = 1;
        v->free_then = VT_DF_UNKNOWN;
        if (vt_df_u64(p, 7, &v->first_ns, 0) < 0) /* version 3's oom: its time where COUNT is now */
            return -1;
        v->last_ns = v->first_ns;
    } else if (vt_df_u64(p, VT_F_FAILED_COUNT, &v->count, 0) < 0 ||
        vt_df_u64(p, VT_F_FAILED_FIRST, &v->first_ns, 0) < 0 || vt_df_u64(p, VT_F_FAILED_LAST, &v->last_ns, 0) < 0 ||
        vt_df_u64(p, VT_F_FAILED_FREE, &v->free_then, 1) < 0) {
        return -1;
    } else if (!v->count || v->last_ns < v->first_ns) {
        return vt_df_fail(p, "a failed request needs a count of at least 1 and a last time not before its first");
    }
    v->line = p->line;
    d->nfailed++;
    return 0;
}

static int vt_df_rec_module(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->modules, d->nmodules, cap->modules);
    struct vt_df_module *v = &d->modules[d->nmodules];
    memset(v, 0, sizeof *v);
    if (p->nf != VT_F_MODULE_PATH || !p->rest)
        return vt_df_fail(p, "'module' record needs an index, three addresses, a build-id and a path");
    if (vt_df_int(p, VT_F_MODULE_IDX, &v->index, 0, 0x7fffffff) < 0 || vt_df_u64(p, VT_F_MODULE_BASE, &v->base, 0) < 0 ||
        vt_df_u64(p, VT_F_MODULE_LO, &v->lo, 0) < 0 || vt_df_u64(p, VT_F_MODULE_HI, &v->hi, 0) < 0 ||
        vt_df_word(p, VT_F_MODULE_BUILD_ID, v->build_id, sizeof v->build_id) < 0)
        return -1;
    for (size_t i = 0; i < d->nmodules; i++)
        if (d->modules[i].index == v->index)
            return vt_df_fail(p, "module %d is listed twice", v->index);
    if (!(v->path = strdup(p->rest)))
        return vt_df_fail(p, "out of memory");
    d->nmodules++;
    return 0;
}

static int vt_df_rec_stack(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->stacks, d->nstacks, cap->stacks);
    struct vt_df_stack *v = &d->stacks[d->nstacks];
    int py = d->version >= 3; /* a last field: the Python stack */
    if (p->nf < 3 + py || vt_df_u32(p, 1, &v->id) < 0 || vt_df_u32(p, 2, &v->n) < 0)
        return p->nf < 3 + py ? vt_df_fail(p, "'stack' record needs an id, a frame count%s",
                                          py ? " and a Python stack" : "") : -1;
    if ((int)v->n != p->nf - 3 - py)
        return vt_df_fail(p, "stack %u says %u frames but has %d", v->id, v->n, p->nf - 3 - py);
    v->pystack = 0;
    if (py && vt_df_u32(p, p->nf - 1, &v->pystack) < 0)
        return -1;
    if (v->n == 0 && !v->pystack)
        return vt_df_fail(p, "stack %u has no frames", v->id);
    v->line = p->line;
    if (!(v->pc = malloc((v->n ? v->n : 1) * sizeof *v->pc)))
        return vt_df_fail(p, "out of memory");
    for (uint32_t i = 0; i < v->n; i++)
        if (vt_df_u64(p, 3 + (int)i, &v->pc[i], 0) < 0) {
            free(v->pc);
            return -1;
        }
    d->nstacks++;
    return 0;
}

static int vt_df_rec_frame(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->frames, d->nframes, cap->frames);
    struct vt_df_frame *v = &d->frames[d->nframes];
    if (vt_df_nfields(p, 3) < 0 || vt_df_u64(p, 1, &v->pc, 0) < 0)
        return -1;
    v->name = NULL;
    if (strcmp(p->field[2], "-") && !(v->name = strdup(p->field[2])))
        return vt_df_fail(p, "out of memory");
    d->nframes++;
    return 0;
}

static int vt_df_rec_pool_segment(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->pool_segments, d->npool_segments, cap->pool_segments);
    struct vt_df_pool_segment *v = &d->pool_segments[d->npool_segments];
    if (vt_df_nfields(p, VT_F_POOL_SEGMENT_NF) < 0 || vt_df_u64(p, VT_F_POOL_SEGMENT_ADDR, &v->addr, 0) < 0 ||
        vt_df_word(p, VT_F_POOL_SEGMENT_ALLOCATOR, v->allocator, sizeof v->allocator) < 0)
        return -1;
    d->npool_segments++;
    return 0;
}

static int vt_df_rec_phys(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap)
{
    VT_DF_GROW(d->phys, d->nphys, cap->phys);
    struct vt_df_phys *v = &d->phys[d->nphys];
    int kind;
    if (vt_df_nfields(p, VT_F_PHYS_NF) < 0 || vt_df_u64(p, VT_F_PHYS_HANDLE, &v->handle, 0) < 0 ||
        vt_df_size(p, VT_F_PHYS_SIZE, &v->size) < 0 || vt_df_kind_field(p, VT_F_PHYS_KIND, 1, &kind) < 0 ||
        vt_df_name(p, d, VT_F_PHYS_API, VT_DF_API_LEN, &v->api) < 0 ||
        vt_df_int(p, VT_F_PHYS_DEV, &v->device, -1, 0x7fffffff) < 0 ||
        vt_df_int(p, VT_F_PHYS_REFS, &v->refs, -1000000, 1000000) < 0 ||
        vt_df_int(p, VT_F_PHYS_MAPS, &v->maps, -1000000, 1000000) < 0 || vt_df_u32(p, VT_F_PHYS_STACK, &v->stack) < 0 ||
        vt_df_u64(p, VT_F_PHYS_SEQ, &v->seq, 0) < 0 || vt_df_u64(p, VT_F_PHYS_TIME, &v->time_ns, 0) < 0 ||
        vt_df_int(p, VT_F_PHYS_TID, &v->tid, 0, 0x7fffffff) < 0)
        return -1;
    if (kind < 0)
        return vt_df_fail(p, "unknown physical memory kind '%s'", p->field[VT_F_PHYS_KIND]);
    v->kind = (enum vt_kind)kind;
    v->line = p->line;
    d->nphys++;

    return 0;
}

/* Every record after the header's, by its first word: one parse function each (the format's words are
 * common/vt_format.h's). */
static const struct {
    const char *word;
    int (*parse)(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap);
} vt_df_records[] = {
    {VT_REC_EXE, vt_df_rec_exe},
    {VT_REC_CMDLINE, vt_df_rec_exe},
    {VT_REC_DEVICE, vt_df_rec_device},
    {VT_REC_LIMITS, vt_df_rec_limits},
    {VT_REC_PEAK, vt_df_rec_peak},
    {VT_REC_PEAK_FREED, vt_df_rec_peak_freed},
    {VT_REC_POOL, vt_df_rec_pool},
    {VT_REC_COUNTER, vt_df_rec_counter},
    {VT_REC_UNWATCHED, vt_df_rec_counter},
    {VT_REC_KIND, vt_df_rec_kind},
    {VT_REC_API, vt_df_rec_api},
    {VT_REC_FAILED, vt_df_rec_failed},
    {"oom", vt_df_rec_failed},
    {VT_REC_MODULE, vt_df_rec_module},
    {VT_REC_STACK, vt_df_rec_stack},
    {VT_REC_FRAME, vt_df_rec_frame},
    {VT_REC_POOL_SEGMENT, vt_df_rec_pool_segment},
    {VT_REC_PHYS, vt_df_rec_phys},
    {VT_REC_PYTHON, vt_df_rec_python},
    {VT_REC_HISTORY, vt_df_rec_history},
    {VT_REC_INTERPRETER, vt_df_rec_interpreter},
    {VT_REC_BRIDGE, vt_df_rec_bridge},
    {VT_REC_TRACKER, vt_df_rec_tracker},
    {VT_REC_ALLOCATOR, vt_df_rec_allocator},
    {VT_REC_SEGMENT, vt_df_rec_segment},
    {VT_REC_BLOCK, vt_df_rec_block},
    {VT_REC_PYFRAME, vt_df_rec_pyframe},
    {VT_REC_HELD, vt_df_rec_held},
    {VT_REC_RUNNING, vt_df_rec_running},
    {VT_REC_PYSTACK, vt_df_rec_pystack},
};

/* The header's records, in the order every dump has them, before any other record: a record that a
 * name might have forged can then never stand in for one (cmdline from version 4 on). */
static const char *const vt_df_head[] = {VT_REC_PID,    VT_REC_PPID, VT_REC_EXE,   VT_REC_CMDLINE, VT_REC_REASON,
                                         VT_REC_SEQ,    VT_REC_TIME, VT_REC_START, VT_REC_DEPTH};
#define VT_DF_HEAD_N (sizeof vt_df_head / sizeof vt_df_head[0])

static int vt_df_head_order(struct vt_df_parser *p, const char *key)
{
    if (p->head < VT_DF_HEAD_N && !strcmp(vt_df_head[p->head], VT_REC_CMDLINE) && p->version < 4)
        p->head++;
    if (p->head < VT_DF_HEAD_N) {
        if (strcmp(key, vt_df_head[p->head]))
            return vt_df_fail(p, "'%s' where the header's '%s' record belongs: a dump starts with its header, "
                                 "in order", key, vt_df_head[p->head]);
        p->head++;
        return 0;
    }
    for (size_t i = 0; i < VT_DF_HEAD_N; i++)
        if (!strcmp(key, vt_df_head[i]))
            return vt_df_fail(p, "a second '%s' record", key);
    return 0;
}

static int vt_df_record(struct vt_df_parser *p, struct vt_dumpfile *d, struct vt_df_caps *cap, int *seen)
{
    const char *key = p->field[0];
    if (!strcmp(key, VT_REC_ALLOC) && p->head >= VT_DF_HEAD_N)
        return vt_df_alloc_record(p, d, cap);
    if (vt_df_head_order(p, key) < 0)
        return -1;
    int r = vt_df_header(p, d, key, seen);
    if (r <= 0)
        return r;
    for (size_t i = 0; i < sizeof vt_df_records / sizeof vt_df_records[0]; i++)
        if (!strcmp(key, vt_df_records[i].word))
            return vt_df_records[i].parse(p, d, cap);
    return vt_df_fail(p, "unknown record '%s'", key);
}

static int vt_df_parse_all(FILE *f, const char *path, struct vt_dumpfile *d, char *err, size_t errlen,
                           vt_df_progress_fn progress, void *arg);

int vt_dumpfile_read_progress(const char *path, struct vt_dumpfile *d, char *err, size_t errlen,
                              vt_df_progress_fn progress, void *arg)
{
    memset(d, 0, sizeof *d);
    /* Only a regular file is read: a FIFO or a device named as a dump would block or never end. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (%s): not read", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                                        : "a device");
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    int r = vt_df_parse_all(f, path, d, err, errlen, progress, arg);
    fclose(f);
    return r;
}

int vt_dumpfile_read(const char *path, struct vt_dumpfile *d, char *err, size_t errlen)
{
    return vt_dumpfile_read_progress(path, d, err, errlen, NULL, NULL);
}

static int vt_stack_cmp(const void *a, const void *b)
{
    const struct vt_df_stack *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int vt_frame_cmp(const void *a, const void *b)
{
    const struct vt_df_frame *x = a, *y = b;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int vt_pyframe_cmp(const void *a, const void *b)
{
    const struct vt_df_pyframe *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int vt_pystack_cmp(const void *a, const void *b)
{
    const struct vt_df_pystack *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* After the last line: index stacks and frames for look-ups, and check what refers to what. */
static int vt_df_finish(struct vt_df_parser *p, struct vt_dumpfile *d)
{
    if (d->nstacks)
        qsort(d->stacks, d->nstacks, sizeof *d->stacks, vt_stack_cmp);
    if (d->nframes)
        qsort(d->frames, d->nframes, sizeof *d->frames, vt_frame_cmp);
    for (size_t i = 1; i < d->nstacks; i++)
        if (d->stacks[i].id == d->stacks[i - 1].id) {
            p->line = d->stacks[i].line > d->stacks[i - 1].line ? d->stacks[i].line : d->stacks[i - 1].line;
            return vt_df_fail(p, "stack %u is defined twice", d->stacks[i].id);
        }
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].stack && !vt_df_stack(d, d->allocs[i].stack)) {
            p->line = d->allocs[i].line;
            return vt_df_fail(p, "refers to stack %u, which the dump does not have", d->allocs[i].stack);
        }
    for (size_t i = 0; i < d->nfailed; i++)
        if (d->failed[i].stack && !vt_df_stack(d, d->failed[i].stack)) {
            p->line = d->failed[i].line;
            return vt_df_fail(p, "refers to stack %u, which the dump does not have", d->failed[i].stack);
        }
    for (size_t i = 0; i < d->nphys; i++)
        if (d->phys[i].stack && !vt_df_stack(d, d->phys[i].stack)) {
            p->line = d->phys[i].line;
            return vt_df_fail(p, "refers to stack %u, which the dump does not have", d->phys[i].stack);
        }
    if (d->npyframes)
        qsort(d->pyframes, d->npyframes, sizeof *d->pyframes, vt_pyframe_cmp);
    if (d->npystacks)
        qsort(d->pystacks, d->npystacks, sizeof *d->pystacks, vt_pystack_cmp);
    for (size_t i = 1; i < d->npyframes; i++)
        if (d->pyframes[i].id == d->pyframes[i - 1].id)
            return vt_df_fail(p, "pyframe %u is defined twice", d->pyframes[i].id);
    for (size_t i = 0; i < d->npystacks; i++) {
        p->line = d->pystacks[i].line;
        if (i && d->pystacks[i].id == d->pystacks[i - 1].id)
            return vt_df_fail(p, "pystack %u is defined twice", d->pystacks[i].id);
        for (uint32_t j = 0; j < d->pystacks[i].n; j++)
            if (!vt_df_pyframe(d, d->pystacks[i].frames[j]))
                return vt_df_fail(p, "refers to pyframe %u, which the dump does not have", d->pystacks[i].frames[j]);
    }
    for (size_t i = 0; i < d->nstacks; i++)
        if (d->stacks[i].pystack && !vt_df_pystack(d, d->stacks[i].pystack)) {
            p->line = d->stacks[i].line;
            return vt_df_fail(p, "refers to pystack %u, which the dump does not have", d->stacks[i].pystack);
        }
    for (size_t i = 0; i < d->nblocks; i++)
        if (d->blocks[i].pystack && !vt_df_pystack(d, d->blocks[i].pystack)) {
            p->line = d->blocks[i].line;
            return vt_df_fail(p, "refers to pystack %u, which the dump does not have", d->blocks[i].pystack);
        }
    for (size_t i = 0; i < d->nheld; i++)
        if (d->held[i].pystack && !vt_df_pystack(d, d->held[i].pystack)) {
            p->line = d->held[i].line;
            return vt_df_fail(p, "refers to pystack %u, which the dump does not have", d->held[i].pystack);
        }
    for (size_t i = 0; i < d->nrunning; i++)
        if (!vt_df_pystack(d, d->running[i].pystack)) {
            p->line = d->running[i].line;
            return vt_df_fail(p, "refers to pystack %u, which the dump does not have", d->running[i].pystack);
        }
    return 0;
}

/* Reads one line (with its newline, if it has one) into *buf; at most VT_DF_MAX_LINE bytes. Returns its
 * length, -1 at the end of the file, -2 for a line too long. */
static ssize_t vt_df_getline(FILE *f, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) { /* one reader per stream: no lock per character */
        if (n + 2 > *cap) {
            if (*cap >= VT_DF_MAX_LINE)
                return -2;
            size_t nc = *cap ? 2 * *cap : 4096;
            char *nb = realloc(*buf, nc);
            if (!nb)
                return -3;
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (!n)
        return -1;
    (*buf)[n] = 0;
    return (ssize_t)n;
}

/* Every address or handle appears once per table (an allocation listed twice would count twice). */
struct vt_df_key {
    uint64_t a, b;
    unsigned long line;
};

static int vt_df_key_cmp(const void *x, const void *y)
{
    const struct vt_df_key *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->line < q->line ? -1 : p->line > q->line;
}

/* 0, or the index of the second of a duplicated pair (keys sorted in place). */
static size_t vt_df_dup(struct vt_df_key *k, size_t n)
{
    if (n > 1)
        qsort(k, n, sizeof *k, vt_df_key_cmp);
    for (size_t i = 1; i < n; i++)
        if (k[i].a == k[i - 1].a && k[i].b == k[i - 1].b)
            return i;
    return 0;
}

static int vt_df_sums(struct vt_df_parser *p, struct vt_dumpfile *d)
{
    uint64_t total = 0, on_dev[1024] = {0};
    for (size_t i = 0; i < d->nallocs + d->nphys; i++) {
        int in_alloc = i < d->nallocs;
        enum vt_kind kind = in_alloc ? d->allocs[i].kind : d->phys[i - d->nallocs].kind;
        uint64_t size = in_alloc ? d->allocs[i].size : d->phys[i - d->nallocs].size;
        int dev = in_alloc ? d->allocs[i].device : d->phys[i - d->nallocs].device;
        p->line = in_alloc ? d->allocs[i].line : d->phys[i - d->nallocs].line;
        if (__builtin_add_overflow(total, size, &total))
            return vt_df_fail(p, "the entries' sizes add up past 2^64 bytes: the dump is damaged");
        if (!vt_kind_bounded(kind) || dev < 0 || dev >= 1024)
            continue;
        on_dev[dev] += size;
        for (size_t k = 0; k < d->ndevices; k++)
            if (d->devices[k].ordinal == dev && d->devices[k].total != VT_DF_UNKNOWN && on_dev[dev] > d->devices[k].total)
                return vt_df_fail(p, "device %d's memory held here adds up to %llu bytes, more than the %llu the device "
                                     "has: the dump is damaged", dev, (unsigned long long)on_dev[dev],
                                  (unsigned long long)d->devices[k].total);
    }
    return 0;
}

/* Duplicated entries of the large tables: named by the line of the second one (the small ones are
 * checked as they are read). */
static int vt_df_unique(struct vt_df_parser *p, struct vt_dumpfile *d)
{
    size_t n = d->nallocs > d->nphys ? d->nallocs : d->nphys;
    n = d->nsegments > n ? d->nsegments : n;
    struct vt_df_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return vt_df_fail(p, "out of memory");
    size_t at;
    int r = 0;
    for (size_t i = 0; i < d->nallocs; i++)
        k[i] = (struct vt_df_key){d->allocs[i].addr, vt_kind_space(d->allocs[i].kind), d->allocs[i].line};
    if ((at = vt_df_dup(k, d->nallocs))) {
        p->line = k[at].line;
        r = vt_df_fail(p, "allocation 0x%llx is listed twice (also at line %lu)", (unsigned long long)k[at].a, k[at - 1].line);
        goto out;
    }
    for (size_t i = 0; i < d->nphys; i++)
        k[i] = (struct vt_df_key){d->phys[i].handle, 0, d->phys[i].line};
    if ((at = vt_df_dup(k, d->nphys))) {
        p->line = k[at].line;
        r = vt_df_fail(p, "physical handle 0x%llx is listed twice (also at line %lu)", (unsigned long long)k[at].a,
                       k[at - 1].line);
        goto out;
    }
    for (size_t i = 0; i < d->nsegments; i++)
        k[i] = (struct vt_df_key){d->segments[i].addr, 0, d->segments[i].line};
    if ((at = vt_df_dup(k, d->nsegments))) {
        p->line = k[at].line;
        r = vt_df_fail(p, "segment 0x%llx is listed twice (also at line %lu)", (unsigned long long)k[at].a, k[at - 1].line);
        goto out;
    }
out:
    free(k);
    return r;
}

/* A line of a dump older than version 6 that holds a raw control character or a byte that is not UTF-8,
 * escaped in place (its backslashes kept: the cmdline record already had \xHH escapes). */
static int vt_df_escape_old(char **line, size_t *cap, size_t len)
{
    size_t need = 4 * len + 1;
    char *out = malloc(need);
    if (!out)
        return -1;
    vt_text_escape(out, need, *line, len, VT_TEXT_KEEP_BSLASH);
    free(*line);
    *line = out;
    *cap = need < VT_DF_MAX_LINE ? need : VT_DF_MAX_LINE; /* the next line is still held to the limit */
    return 0;
}

int vt_dumpfile_parse(FILE *f, const char *path, struct vt_dumpfile *d, char *err, size_t errlen)
{
    return vt_df_parse_all(f, path, d, err, errlen, NULL, NULL);
}

static int vt_df_parse_all(FILE *f, const char *path, struct vt_dumpfile *d, char *err, size_t errlen,
                           vt_df_progress_fn progress, void *arg)
{
    struct stat st;
    uint64_t size = progress && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    struct vt_df_parser p = {.path = path, .err = err, .errlen = errlen};
    struct vt_df_caps cap = {0};
    memset(d, 0, sizeof *d);
    char *line = NULL;
    size_t linecap = 0;
    ssize_t len;
    int ended = 0, seen = 0, r = 0;
    while (r == 0 && (len = vt_df_getline(f, &line, &linecap)) != -1) {
        p.line++;
        if (size && !(p.line & 0xffff)) {
            off_t at = ftello(f);
            progress(arg, at > 0 ? (uint64_t)at : 0, size);
        }
        if (len < 0) {
            r = len == -2 ? vt_df_fail(&p, "line longer than %u bytes: not a vramtrace dump", VT_DF_MAX_LINE)
                          : vt_df_fail(&p, "out of memory");
            break;
        }
        if (ended) {
            r = vt_df_fail(&p, "text after the closing 'end'");
            break;
        }
        if (len == 0 || line[len - 1] != '\n') {
            r = vt_df_fail(&p, "truncated line (no newline): the dump is incomplete");
            break;
        }
        line[--len] = 0;
        if (memchr(line, 0, (size_t)len)) {
            r = vt_df_fail(&p, "NUL byte in the line");
            break;
        }
        if (len && line[len - 1] == '\r') {
            r = vt_df_fail(&p, "the line ends with a carriage return: the file was converted to CRLF (Windows) line "
                               "endings after it was written");
            break;
        }
        /* Names are escaped since version 6 (vt_text.h): a control character, a byte that is not UTF-8
         * or a stray backslash is a damaged or forged file. An older dump's line is escaped here, so
         * that no name read from any dump reaches a terminal, a page or a metric raw. */
        if (d->version >= 6 && !vt_text_is_escaped(line)) {
            r = vt_df_fail(&p, "a control character, a byte that is not UTF-8 or a backslash that starts no \\xHH "
                               "escape: names are escaped in format version %d", d->version);
            break;
        }
        if (p.line > 1 && d->version < 6 && vt_text_needs_escape(line)) {
            if (vt_df_escape_old(&line, &linecap, (size_t)len) < 0) {
                r = vt_df_fail(&p, "out of memory");
                break;
            }
        }
        /* Records that end in free text (a path) are split only up to it. */
        int max = vt_df_text_fields(line);
        vt_df_split(&p, line, max);
        if (p.line == 1) {
            if (p.nf != 2 || strcmp(p.field[0], VT_DUMP_MAGIC)) {
                r = vt_df_fail(&p, "not a vramtrace dump (no 'vramtrace-dump VERSION' line)");
            } else if (vt_df_int(&p, 1, &d->version, 1, 1000000) == 0 && d->version > VRAMTRACE_FORMAT_VERSION) {
                r = vt_df_fail(&p, "format version %d is newer than this reader (%d): use a newer vramtrace",
                               d->version, VRAMTRACE_FORMAT_VERSION);
            } else if (!d->version) {
                r = -1;
            }
            p.version = d->version;
            continue;
        }
        if (p.nf == 0) {
            r = vt_df_fail(&p, "empty line");
        } else if (p.nf == 1 && !p.rest && !strcmp(p.field[0], VT_DUMP_END)) {
            ended = 1;
        } else if (max == VT_DF_MAX_FIELDS && p.rest) {
            r = vt_df_fail(&p, "too many fields");
        } else {
            r = vt_df_record(&p, d, &cap, &seen);
        }
    }
    if (r == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        r = -1;
    }
    free(line);
    if (r == 0 && p.line == 0) {
        snprintf(err, errlen, "%s:1: empty file: not a vramtrace dump", path);
        r = -1;
    } else if (r == 0 && !ended) {
        p.line++;
        r = vt_df_fail(&p, "no closing 'end' line: the dump is truncated");
    } else if (r == 0 && (seen & 3) != 3) {
        snprintf(err, errlen, "%s:%lu: the header lacks its %s line", path, p.line, (seen & 1) ? "reason" : "pid");
        r = -1;
    } else if (r == 0 && (d->time_mono < d->start_mono || !d->pid)) {
        snprintf(err, errlen, "%s: the header is impossible (%s): not a dump vramtrace wrote", path,
                 d->pid ? "its time is before its start" : "pid 0");
        r = -1;
    }
    if (r == 0)
        r = vt_df_finish(&p, d);
    if (r == 0)
        r = vt_df_unique(&p, d);
    if (r == 0)
        r = vt_df_sums(&p, d);
    if (r != 0)
        vt_dumpfile_free(d);
    return r;
}

void vt_dumpfile_shed(struct vt_dumpfile *d)
{
    free(d->allocs);
    free(d->phys);
    d->allocs = NULL;
    d->phys = NULL;
    d->nallocs = d->nphys = 0;
    for (size_t i = 0; i < d->nstacks; i++)
        free(d->stacks[i].pc);
    for (size_t i = 0; i < d->nframes; i++)
        free(d->frames[i].name);
    free(d->stacks);
    free(d->frames);
    d->stacks = NULL;
    d->frames = NULL;
    d->nstacks = d->nframes = 0;
}

void vt_dumpfile_free(struct vt_dumpfile *d)
{
    for (int i = 0; d->names && i < VT_DF_NAME_SLOTS; i++)
        free(d->names->v[i]);
    free(d->names);
    free(d->exe);
    free(d->cmdline);
    for (size_t i = 0; i < d->nmodules; i++)
        free(d->modules[i].path);
    for (size_t i = 0; i < d->nstacks; i++)
        free(d->stacks[i].pc);
    for (size_t i = 0; i < d->nframes; i++)
        free(d->frames[i].name);
    free(d->devices);
    free(d->pools);
    free(d->counters);
    free(d->apis);
    free(d->kinds);
    free(d->unwatched);
    free(d->modules);
    free(d->stacks);
    free(d->frames);
    free(d->allocs);
    free(d->phys);
    free(d->failed);
    free(d->python.detail);
    free(d->python.history_detail);
    free(d->tracker.detail);
    for (size_t i = 0; i < d->nbridges; i++)
        free(d->bridges[i].detail);
    free(d->bridges);
    free(d->allocators);
    free(d->segments);
    free(d->blocks);
    free(d->running);
    free(d->held);
    free(d->pool_segments);
    free(d->peaks);
    free(d->peak_freed);
    for (size_t i = 0; i < d->npyframes; i++) {
        free(d->pyframes[i].func);
        free(d->pyframes[i].file);
    }
    free(d->pyframes);
    for (size_t i = 0; i < d->npystacks; i++)
        free(d->pystacks[i].frames);
    free(d->pystacks);
    memset(d, 0, sizeof *d);
}

const struct vt_df_stack *vt_df_stack(const struct vt_dumpfile *d, uint32_t id)
{
    struct vt_df_stack key = {.id = id};
    return d->nstacks ? bsearch(&key, d->stacks, d->nstacks, sizeof key, vt_stack_cmp) : NULL;
}

const char *vt_df_frame_name(const struct vt_dumpfile *d, uint64_t pc)
{
    struct vt_df_frame key = {.pc = pc};
    const struct vt_df_frame *f = d->nframes ? bsearch(&key, d->frames, d->nframes, sizeof key, vt_frame_cmp) : NULL;
    return f ? f->name : NULL;
}

uint64_t vt_df_counter(const struct vt_dumpfile *d, const char *name)
{
    for (size_t i = 0; i < d->ncounters; i++)
        if (!strcmp(d->counters[i].name, name))
            return d->counters[i].count;
    return 0;
}

const struct vt_df_api *vt_df_api(const struct vt_dumpfile *d, const char *name)
{
    for (size_t i = 0; i < d->napis; i++)
        if (!strcmp(d->apis[i].name, name))
            return &d->apis[i];
    return NULL;
}

const struct vt_df_kind *vt_df_kind(const struct vt_dumpfile *d, const char *name)
{
    for (size_t i = 0; i < d->nkinds; i++)
        if (!strcmp(d->kinds[i].name, name))
            return &d->kinds[i];
    return NULL;
}

const struct vt_df_pystack *vt_df_pystack(const struct vt_dumpfile *d, uint32_t id)
{
    struct vt_df_pystack key = {.id = id};
    return d->npystacks ? bsearch(&key, d->pystacks, d->npystacks, sizeof key, vt_pystack_cmp) : NULL;
}

const struct vt_df_pyframe *vt_df_pyframe(const struct vt_dumpfile *d, uint32_t id)
{
    struct vt_df_pyframe key = {.id = id};
    return d->npyframes ? bsearch(&key, d->pyframes, d->npyframes, sizeof key, vt_pyframe_cmp) : NULL;
}

const struct vt_df_module *vt_df_module_of(const struct vt_dumpfile *d, uint64_t pc)
{
    for (size_t i = 0; i < d->nmodules; i++)
        if (pc >= d->modules[i].lo && pc < d->modules[i].hi)
            return &d->modules[i];
    return NULL;
}
