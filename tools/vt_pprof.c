/* A report as pprof's profile (profile.proto, gzipped): one sample per call site holding live memory,
 * with two values, inuse_objects (count) and inuse_space (bytes), as Go's heap profiles have; its
 * frames as locations, innermost first, each with one line of one function (the name, file and line
 * the reader already resolved: the profile says it is symbolized, so pprof never tries again); and
 * labels for what the site is: kind, api, class (allocated, segment, imported), library and device
 * (`pprof -tagfocus class=allocated` keeps what the program holds, leaving out allocators' segments).
 * Then `pprof -top`, `pprof -base OLD NEW` (growth by call site) and `pprof -http` work on dumps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "vt_frame.h"
#include "vt_pprof.h"
#include "vt_proto.h"

#define uthash_fatal(msg) exit((fputs("vramtrace: out of memory\n", stderr), 1))
#include <uthash.h>

/* profile.proto's field numbers (github.com/google/pprof, proto/profile.proto). */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING, P_TIME = 9, P_DURATION,
       P_PERIOD_TYPE, P_PERIOD, P_COMMENT, P_DEFAULT_TYPE };
enum { VT_TYPE = 1, VT_UNIT };
enum { S_LOCATION = 1, S_VALUE, S_LABEL };
enum { L_KEY = 1, L_STR };
enum { M_ID = 1, M_START, M_LIMIT, M_OFFSET, M_FILE, M_BUILD_ID, M_HAS_FUNCTIONS, M_HAS_FILENAMES, M_HAS_LINES };
enum { LOC_ID = 1, LOC_MAPPING, LOC_ADDRESS, LOC_LINE };
enum { LN_FUNCTION = 1, LN_LINE };
enum { F_ID = 1, F_NAME, F_SYSTEM_NAME, F_FILE };

/* A string of the string table, a function or a location: its key and its number. */
struct vt_num {
    UT_hash_handle hh;
    uint64_t id;
    size_t len;
    char key[];
};

struct vt_pprof {
    struct vt_pb out, msg, sub;
    struct vt_num *strings, *functions, *locations;
    uint64_t nstrings, nfunctions, nlocations;
};

/* The number of key[0..len), new ones numbered from 1 (or from 0 for the string table) and handed to
 * made, which writes the new entry; 0 when out of memory. */
static uint64_t vt_number(struct vt_num **set, uint64_t *count, const char *key, size_t len, int *made)
{
    struct vt_num *e;
    HASH_FIND(hh, *set, key, len, e);
    *made = 0;
    if (e)
        return e->id;
    if (!(e = malloc(sizeof *e + len + 1)))
        return 0;
    memcpy(e->key, key, len);
    e->key[len] = 0;
    e->len = len;
    e->id = (*count)++;
    HASH_ADD(hh, *set, key, len, e);
    *made = 1;
    return e->id;
}

static uint64_t vt_str(struct vt_pprof *p, const char *s, size_t len)
{
    int made;
    uint64_t id = vt_number(&p->strings, &p->nstrings, s, len, &made);
    if (made)
        vt_pb_bytes(&p->out, P_STRING, s, len);
    return id;
}

static uint64_t vt_cstr(struct vt_pprof *p, const char *s)
{
    return vt_str(p, s, strlen(s));
}

static void vt_value_type(struct vt_pprof *p, unsigned field, const char *type, const char *unit)
{
    vt_pb_reset(&p->msg);
    vt_pb_uint(&p->msg, VT_TYPE, vt_cstr(p, type));
    vt_pb_uint(&p->msg, VT_UNIT, vt_cstr(p, unit));
    vt_pb_msg(&p->out, field, &p->msg);
}

/* The function named by a frame's parts (name and file), written the first time. */
static uint64_t vt_function(struct vt_pprof *p, const struct vt_frame_parts *fp)
{
    char key[4096];
    size_t nl = fp->name_len < 2048 ? fp->name_len : 2048, fl = fp->file_len < 2000 ? fp->file_len : 2000;
    memcpy(key, fp->name, nl);
    key[nl] = 0;
    if (fp->file)
        memcpy(key + nl + 1, fp->file, fl);
    int made;
    uint64_t id = vt_number(&p->functions, &p->nfunctions, key, nl + 1 + (fp->file ? fl : 0), &made);
    if (made) {
        uint64_t name = vt_str(p, fp->name, nl);
        vt_pb_reset(&p->msg);
        vt_pb_uint(&p->msg, F_ID, id);
        vt_pb_uint(&p->msg, F_NAME, name);
        vt_pb_uint(&p->msg, F_SYSTEM_NAME, name);
        if (fp->file)
            vt_pb_uint(&p->msg, F_FILE, vt_str(p, fp->file, fl));
        vt_pb_msg(&p->out, P_FUNCTION, &p->msg);
    }
    return id;
}

/* The location of one frame, written the first time; its address is its number, inside the one
 * mapping (pprof needs an address to tell locations apart when it merges profiles). */
static uint64_t vt_location(struct vt_pprof *p, const char *frame)
{
    int made;
    uint64_t id = vt_number(&p->locations, &p->nlocations, frame, strlen(frame), &made);
    if (made) {
        struct vt_frame_parts fp;
        vt_frame_parts(frame, &fp);
        uint64_t fn = vt_function(p, &fp);
        vt_pb_reset(&p->sub);
        vt_pb_uint(&p->sub, LN_FUNCTION, fn);
        if (fp.file)
            vt_pb_uint(&p->sub, LN_LINE, fp.line);
        vt_pb_reset(&p->msg);
        vt_pb_uint(&p->msg, LOC_ID, id);
        vt_pb_uint(&p->msg, LOC_MAPPING, 1);
        vt_pb_uint(&p->msg, LOC_ADDRESS, id);
        vt_pb_msg(&p->msg, LOC_LINE, &p->sub);
        vt_pb_msg(&p->out, P_LOCATION, &p->msg);
    }
    return id;
}

static void vt_label_str(struct vt_pprof *p, struct vt_pb *sample, const char *key, const char *value)
{
    vt_pb_reset(&p->sub);
    vt_pb_uint(&p->sub, L_KEY, vt_cstr(p, key));
    vt_pb_uint(&p->sub, L_STR, vt_cstr(p, value));
    vt_pb_msg(sample, S_LABEL, &p->sub);
}

static void vt_sample(struct vt_pprof *p, const struct vt_site *s)
{
    uint64_t ids[1024];
    size_t n = 0;
    char none[96];
    if (!s->nframes) {
        snprintf(none, sizeof none, "<no stack> [%s %s]", s->kind, s->api);
        ids[n++] = vt_location(p, none);
    }
    for (uint32_t i = 0; i < s->nframes && n < sizeof ids / sizeof ids[0]; i++)
        ids[n++] = vt_location(p, s->frames[i]);
    struct vt_pb sample = {0};
    vt_pb_packed(&sample, S_LOCATION, ids, n);
    const uint64_t values[] = {s->count, s->bytes};
    vt_pb_packed(&sample, S_VALUE, values, 2);
    vt_label_str(p, &sample, "kind", s->kind);
    vt_label_str(p, &sample, "api", s->api);
    vt_label_str(p, &sample, "class", vt_site_class(s));
    if (s->library[0])
        vt_label_str(p, &sample, "library", s->library);
    if (s->device >= 0) {
        /* A string: pprof drops a number label whose value is 0, the first device. */
        char dev[16];
        snprintf(dev, sizeof dev, "%d", s->device);
        vt_label_str(p, &sample, "device", dev);
    }
    vt_pb_msg(&p->out, P_SAMPLE, &sample);
    vt_pb_free(&sample);
}

static void vt_nums_free(struct vt_num **set)
{
    struct vt_num *e, *t;
    HASH_ITER(hh, *set, e, t) {
        HASH_DEL(*set, e);
        free(e);
    }
}

/* The profile's bytes into p->out. */
static void vt_profile(struct vt_pprof *p, const struct vt_model *m, int device, const char *path)
{
    const struct vt_result *r = &m->result;
    vt_cstr(p, ""); /* string_table[0] must be "" */
    vt_value_type(p, P_SAMPLE_TYPE, "inuse_objects", "count");
    vt_value_type(p, P_SAMPLE_TYPE, "inuse_space", "bytes");
    for (size_t i = 0; i < m->nsites; i++) {
        const struct vt_site *s = &m->sites[i];
        if (s->role != VT_ROLE_CACHE && (device == -2 || s->device == device))
            vt_sample(p, s);
    }
    /* One mapping for every location, marked symbolized (functions, files, lines), so pprof keeps the
     * names it is given and looks for no binary. */
    vt_pb_reset(&p->msg);
    vt_pb_uint(&p->msg, M_ID, 1);
    vt_pb_uint(&p->msg, M_START, 0);
    vt_pb_uint(&p->msg, M_LIMIT, p->nlocations + 1);
    vt_pb_uint(&p->msg, M_FILE, vt_cstr(p, r->exe ? r->exe : "vramtrace"));
    vt_pb_uint(&p->msg, M_HAS_FUNCTIONS, 1);
    vt_pb_uint(&p->msg, M_HAS_FILENAMES, 1);
    vt_pb_uint(&p->msg, M_HAS_LINES, 1);
    vt_pb_msg(&p->out, P_MAPPING, &p->msg);
    vt_pb_uint(&p->out, P_TIME, r->time_wall);
    vt_pb_uint(&p->out, P_DURATION, r->uptime_ns);
    vt_value_type(p, P_PERIOD_TYPE, "space", "bytes");
    vt_pb_uint(&p->out, P_PERIOD, 1);
    char note[4200];
    snprintf(note, sizeof note, "vramtrace dump %s: process %ld, %s, reason %s", path, r->pid,
             r->exe ? r->exe : "-", r->reason);
    vt_pb_uint(&p->out, P_COMMENT, vt_cstr(p, note));
    vt_pb_uint(&p->out, P_DEFAULT_TYPE, vt_cstr(p, "inuse_space"));
}

int vt_pprof_write(const char *out, const struct vt_model *m, int device, const char *dump_path)
{
    struct vt_pprof p = {0};
    p.nfunctions = p.nlocations = 1; /* ids from 1; strings from 0 */
    vt_profile(&p, m, device, dump_path);
    int rc = 0;
    if (p.out.oom || p.msg.oom || p.sub.oom) {
        fprintf(stderr, "vramtrace: out of memory writing %s\n", out);
        rc = -1;
    } else {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        gzFile gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
        if (!gz) {
            fprintf(stderr, "vramtrace: cannot write %s: %s\n", out, strerror(errno ? errno : ENOMEM));
            if (fd >= 0)
                close(fd);
            rc = -1;
        } else {
            int wrote = p.out.n == 0 || gzwrite(gz, p.out.b, (unsigned)p.out.n) == (int)p.out.n;
            int closed = gzclose(gz) == Z_OK;
            if (!wrote || !closed) {
                fprintf(stderr, "vramtrace: cannot write %s: %s\n", out, strerror(errno ? errno : EIO));
                rc = -1;
            }
        }
    }
    vt_nums_free(&p.strings);
    vt_nums_free(&p.functions);
    vt_nums_free(&p.locations);
    vt_pb_free(&p.out);
    vt_pb_free(&p.msg);
    vt_pb_free(&p.sub);
    return rc;
}
