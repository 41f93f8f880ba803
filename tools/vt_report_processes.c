/* vramtrace report DUMP DUMP...: one dump per process (a job's ranks, a launcher's workers), shown per
 * process and added up per device, with the call sites of all processes merged by their frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_json.h"
#include "vt_model.h"
#include "vt_site_out.h"
#include "vt_units.h"

#define uthash_fatal(msg) exit((fputs("vramtrace: out of memory\n", stderr), 1))
#include <uthash.h>

/* A device's figures added up over the processes; a figure unknown in any of them is unknown. */
struct vt_total {
    int device;
    uint64_t process_used, overhead, reserved, allocated, cached;
    struct vt_libs libs;
};

/* A call site of all processes: the same frames on the same device. */
struct vt_merged {
    UT_hash_handle hh;
    char *key;
    const struct vt_site *site; /* the first process's, for its frames and labels */
    uint64_t count, bytes;
    long pids[8];
    int npids, more_pids;
};

static void vt_add_known(uint64_t *sum, uint64_t v)
{
    *sum = *sum == VT_DF_UNKNOWN || v == VT_DF_UNKNOWN ? VT_DF_UNKNOWN : *sum + v;
}

static struct vt_total *vt_total_of(struct vt_total *t, int *nt, int device)
{
    for (int i = 0; i < *nt; i++)
        if (t[i].device == device)
            return &t[i];
    if (*nt == VT_MAX_DEV + 1)
        return NULL;
    struct vt_total *n = &t[(*nt)++];
    memset(n, 0, sizeof *n);
    n->device = device;
    return n;
}

static void vt_total_add(struct vt_total *t, const struct vt_dev *v)
{
    vt_add_known(&t->process_used, v->process_used);
    vt_add_known(&t->overhead, v->overhead);
    vt_add_known(&t->reserved, v->reserved);
    vt_add_known(&t->allocated, v->allocated);
    vt_add_known(&t->cached, v->cached);
    for (int j = 0; j < v->libs.n; j++)
        vt_libs_add(&t->libs, v->libs.v[j].name, v->libs.v[j].bytes);
}

static int vt_merged_cmp(const void *a, const void *b)
{
    const struct vt_merged *x = *(const struct vt_merged *const *)a, *y = *(const struct vt_merged *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->key, y->key);
}

static void vt_fig_total(const char *label, uint64_t v)
{
    char b[32];
    if (v != VT_DF_UNKNOWN)
        vt_human(v, b, sizeof b);
    printf("  %-13s %s\n", label, v != VT_DF_UNKNOWN ? b : "unknown (in at least one process)");
}

static void vt_text(char **paths, const struct vt_model *m, int n, const struct vt_total *t, int nt,
                    struct vt_merged **ms, size_t nm, long top, int full)
{
    char a[32], b[32], c[32];
    printf("%d processes, one dump each\n", n);
    for (int i = 0; i < n; i++) {
        const struct vt_result *r = &m[i].result;
        printf("\nprocess %ld (%s), reason %s, dump #%lu, %.1f s after start\n  dump %s\n", r->pid, r->exe ? r->exe : "-",
               r->reason, r->seq, (double)r->uptime_ns / 1e9, paths[i]);
        for (int k = 0; k < m[i].ndev; k++) {
            const struct vt_dev *v = &m[i].dev[m[i].devidx[k]];
            vt_human(v->reserved, a, sizeof a);
            vt_human(v->allocated, b, sizeof b);
            printf("  device %d: reserved %s, allocated %s", v->device, a, b);
            if (v->process_used != VT_DF_UNKNOWN) {
                vt_human(v->process_used, c, sizeof c);
                printf(", process used %s", c);
            }
            if (v->libs.n) {
                printf("; ");
                vt_libs_text(&v->libs);
            }
            putchar('\n');
        }
    }
    printf("\nall processes, per device\n");
    for (int k = 0; k < nt; k++) {
        if (t[k].device >= 0)
            printf("device %d\n", t[k].device);
        else
            printf("no device known\n");
        vt_fig_total("process used", t[k].process_used);
        vt_fig_total("overhead", t[k].overhead);
        vt_fig_total("reserved", t[k].reserved);
        vt_fig_total("allocated", t[k].allocated);
        vt_fig_total("cached", t[k].cached);
        if (t[k].libs.n) {
            printf("  %-13s ", "libraries");
            vt_libs_text(&t[k].libs);
            putchar('\n');
        }
    }
    printf("\ntop call sites by live bytes, all processes:\n");
    for (size_t i = 0; i < nm && (long)i < top; i++) {
        const struct vt_site *s = ms[i]->site;
        vt_human(ms[i]->bytes, a, sizeof a);
        printf("%11s in %llu × %s (%s)", a, (unsigned long long)ms[i]->count, s->kind, s->api);
        if (s->device >= 0)
            printf(", device %d", s->device);
        if (s->library[0])
            printf(", taken by %s", s->library);
        printf(", process%s", ms[i]->npids + ms[i]->more_pids == 1 ? "" : "es");
        for (int j = 0; j < ms[i]->npids; j++)
            printf("%s %ld", j ? "," : "", ms[i]->pids[j]);
        if (ms[i]->more_pids)
            printf(" and %d more", ms[i]->more_pids);
        putchar('\n');
        vt_site_print_frames(s, "             ", 12, full);
    }
    if (!nm)
        printf("  none\n");
}

/* A device's five figures, as ,"key":value pairs (null for unknown). */
static void vt_json_figures(uint64_t process_used, uint64_t overhead, uint64_t reserved, uint64_t allocated,
                            uint64_t cached)
{
    static const char *const keys[] = {"process_used", "overhead", "reserved", "allocated", "cached"};
    const uint64_t vals[] = {process_used, overhead, reserved, allocated, cached};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        printf(",\"%s\":", keys[i]);
        vt_json_u64(stdout, vals[i]);
    }
}

static void vt_json(char **paths, const struct vt_model *m, int n, const struct vt_total *t, int nt,
                    struct vt_merged **ms, size_t nm, long top)
{
    printf("{\"processes\":[");
    for (int i = 0; i < n; i++) {
        const struct vt_result *r = &m[i].result;
        printf("%s{\"pid\":%ld,\"dump\":", i ? "," : "", r->pid);
        vt_json_str(stdout, paths[i]);
        printf(",\"exe\":");
        vt_json_str(stdout, r->exe ? r->exe : "");
        printf(",\"reason\":");
        vt_json_str(stdout, r->reason);
        printf(",\"seq\":%lu,\"devices\":[", r->seq);
        for (int k = 0; k < m[i].ndev; k++) {
            const struct vt_dev *v = &m[i].dev[m[i].devidx[k]];
            printf("%s{\"device\":%d", k ? "," : "", v->device);
            vt_json_figures(v->process_used, v->overhead, v->reserved, v->allocated, v->cached);
            putchar('}');
        }
        printf("]}");
    }
    printf("],\"devices\":[");
    for (int k = 0; k < nt; k++) {
        printf("%s{\"device\":%d", k ? "," : "", t[k].device);
        vt_json_figures(t[k].process_used, t[k].overhead, t[k].reserved, t[k].allocated, t[k].cached);
        printf(",\"libraries\":");
        vt_libs_json(stdout, &t[k].libs);
        putchar('}');
    }
    printf("],\"sites\":[");
    for (size_t i = 0; i < nm && (long)i < top; i++) {
        const struct vt_site *s = ms[i]->site;
        printf("%s{", i ? "," : "");
        vt_site_json_head(stdout, s);
        vt_site_json_place(stdout, s);
        printf(",\"live_count\":%llu,\"live_bytes\":%llu,\"pids\":[", (unsigned long long)ms[i]->count,
               (unsigned long long)ms[i]->bytes);
        for (int j = 0; j < ms[i]->npids; j++)
            printf("%s%ld", j ? "," : "", ms[i]->pids[j]);
        printf("]}");
    }
    printf("]}\n");
}

/* Each process's sites as folded stacks under a frame of its own ("process 1234 (python3)"): a flame graph
 * of the job, one tower per process. */
static void vt_folded(const struct vt_model *m, int n, int device)
{
    for (int i = 0; i < n; i++) {
        const char *exe = m[i].result.exe ? m[i].result.exe : "", *slash = strrchr(exe, '/');
        for (size_t j = 0; j < m[i].nsites; j++) {
            const struct vt_site *s = &m[i].sites[j];
            if (s->role == VT_ROLE_CACHE || (device != -2 && s->device != device))
                continue;
            printf("process %ld (", m[i].result.pid);
            for (const char *c = slash ? slash + 1 : exe; *c; c++)
                putchar(*c == ';' ? ',' : *c);
            fputs(");", stdout);
            vt_site_folded(stdout, s);
            printf(" %llu\n", (unsigned long long)s->bytes);
        }
    }
}

int vt_report_processes(char **paths, int n, long top, int device, int json, int folded, int full)
{
    struct vt_dumpfile *d = calloc((size_t)n, sizeof *d);
    struct vt_model *m = calloc((size_t)n, sizeof *m);
    struct vt_total *t = calloc(VT_MAX_DEV + 1, sizeof *t);
    int loaded = 0, built = 0, status = 0, nt = 0;
    struct vt_merged *head = NULL, *e, *tmp;
    if (!d || !m || !t) {
        fprintf(stderr, "vramtrace: out of memory\n");
        status = 1;
        goto out;
    }
    for (; loaded < n; loaded++)
        if (vt_load(paths[loaded], &d[loaded]) < 0) {
            status = VT_EXIT_USAGE;
            goto out;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (d[i].pid == d[j].pid) {
                status = vt_usage_error("report", "%s and %s are dumps of one process (%ld): report takes one dump per "
                                        "process; diff or trend compare dumps of one process", paths[j], paths[i],
                                        d[i].pid);
                goto out;
            }
    for (; built < n; built++)
        if (vt_model_build(&d[built], full ? VT_MODEL_FULL_STACKS : 0, &m[built]) < 0) {
            fprintf(stderr, "vramtrace: out of memory\n");
            status = 1;
            goto out;
        }
    size_t nm = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < m[i].ndev; k++) {
            const struct vt_dev *v = &m[i].dev[m[i].devidx[k]];
            struct vt_total *tt = device == -2 || v->device == device ? vt_total_of(t, &nt, v->device) : NULL;
            if (tt)
                vt_total_add(tt, v);
        }
        for (size_t j = 0; j < m[i].nsites; j++) {
            const struct vt_site *s = &m[i].sites[j];
            if (s->role == VT_ROLE_CACHE || (device != -2 && s->device != device))
                continue;
            char dev[16];
            int dl = snprintf(dev, sizeof dev, "%d|", s->device);
            size_t kl = (size_t)dl + strlen(s->key) + 1;
            char *key = malloc(kl);
            if (!key) {
                fprintf(stderr, "vramtrace: out of memory\n");
                status = 1;
                goto out;
            }
            snprintf(key, kl, "%s%s", dev, s->key);
            HASH_FIND_STR(head, key, e);
            if (e) {
                free(key);
            } else {
                if (!(e = calloc(1, sizeof *e))) {
                    free(key);
                    fprintf(stderr, "vramtrace: out of memory\n");
                    status = 1;
                    goto out;
                }
                e->key = key;
                e->site = s;
                HASH_ADD_KEYPTR(hh, head, e->key, strlen(e->key), e);
                nm++;
            }
            e->count += s->count;
            e->bytes += s->bytes;
            if (e->npids && e->pids[e->npids - 1] == d[i].pid)
                continue;
            if (e->npids < 8)
                e->pids[e->npids++] = d[i].pid;
            else
                e->more_pids++;
        }
    }
    struct vt_merged **ms = malloc((nm ? nm : 1) * sizeof *ms);
    if (!ms) {
        fprintf(stderr, "vramtrace: out of memory\n");
        status = 1;
        goto out;
    }
    size_t k = 0;
    HASH_ITER(hh, head, e, tmp) ms[k++] = e;
    qsort(ms, nm, sizeof *ms, vt_merged_cmp);
    if (json)
        vt_json(paths, m, n, t, nt, ms, nm, top);
    else if (folded)
        vt_folded(m, n, device);
    else
        vt_text(paths, m, n, t, nt, ms, nm, top, full);
    free(ms);
out:
    HASH_ITER(hh, head, e, tmp) {
        HASH_DEL(head, e);
        free(e->key);
        free(e);
    }
    for (int i = 0; i < built; i++)
        vt_model_free(&m[i]);
    for (int i = 0; i < loaded; i++)
        vt_dumpfile_free(&d[i]);
    free(d);
    free(m);
    free(t);
    return status;
}
