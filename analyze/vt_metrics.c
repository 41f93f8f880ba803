/* A report as Prometheus metrics (the text exposition format that node_exporter's textfile collector
 * reads): per device the accounting (reserved, allocated, cached, ...) as gauges (a figure the dump cannot
 * tell is left out, never written as 0), the process's counters, and the live bytes of its largest call sites. Every
 * series carries the process (pid, and its program's name), so files of several processes can sit in
 * one textfile directory. Call sites are named as the text report names them ("handle (serve.py:88)"),
 * and sites that share that name, kind and class are added up: the labels stay few and stable from
 * one scrape to the next (top N only; a site's full stack is in the dump). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_format.h"
#include "vt_hash.h"
#include "vt_metrics.h"
#include "vt_text.h"

/* A label value, always valid UTF-8 with no control character (vt_text.h: a name that came from a
 * symbol table may hold anything), then escaped as the format asks (backslash, double quote). */
static void vt_label(FILE *f, const char *key, const char *v)
{
    char safe[4 * 1024 + 1];
    size_t n = strlen(v);
    vt_text_escape(safe, sizeof safe, v, n < 1024 ? n : 1024, VT_TEXT_KEEP_BSLASH);
    fprintf(f, ",%s=\"", key);
    for (const char *c = safe; *c; c++) {
        if (*c == '\\' || *c == '"')
            fputc('\\', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static const char *vt_program(const struct vt_result *r)
{
    const char *exe = r->exe ? r->exe : "";
    const char *slash = strrchr(exe, '/');
    return slash ? slash + 1 : exe;
}

/* A series' name and the labels every series starts with. */
static void vt_process_labels(FILE *f, const char *name, const struct vt_result *r)
{
    fprintf(f, "%s{pid=\"%ld\"", name, r->pid);
    vt_label(f, "program", vt_program(r));
}

static void vt_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Per device, one family after another: each family's lines together, as the format wants. */
static void vt_device_family(FILE *f, const struct vt_model *m, const char *name, const char *help, size_t field)
{
    int any = 0;
    for (int i = 0; i < m->ndev; i++) {
        const struct vt_dev *v = &m->dev[m->devidx[i]];
        uint64_t x = *(const uint64_t *)((const char *)v + field);
        if (v->device < 0 || x == VT_DF_UNKNOWN)
            continue;
        if (!any++)
            vt_family(f, name, "gauge", help);
        vt_process_labels(f, name, &m->result);
        fprintf(f, ",device=\"%d\"} %llu\n", v->device, (unsigned long long)x);
    }
}

static void vt_process_value(FILE *f, const struct vt_model *m, const char *name, const char *type, const char *help,
                             uint64_t x)
{
    vt_family(f, name, type, help);
    vt_process_labels(f, name, &m->result);
    fprintf(f, "} %llu\n", (unsigned long long)x);
}

/* A call site's series: its name, kind, class and device; sites that share them are one. */
struct vt_msite {
    UT_hash_handle hh;
    const struct vt_site *first;
    uint64_t bytes, count;
    char key[];
};

static const char *vt_msite_name(const struct vt_site *s)
{
    const char *n = vt_site_name(s);
    return n ? n : "<no stack>";
}

static int vt_msite_cmp(const void *a, const void *b)
{
    const struct vt_msite *x = *(const struct vt_msite *const *)a, *y = *(const struct vt_msite *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->key, y->key);
}

/* Sites as Prometheus series: one for each set of labels, summed, largest first. */
struct vt_mseries {
    struct vt_msite *set, **order;
    size_t n;
};

static void vt_mseries_free(struct vt_mseries *r)
{
    struct vt_msite *e, *t;
    free(r->order);
    HASH_ITER(hh, r->set, e, t) {
        HASH_DEL(r->set, e);
        free(e);
    }
}

/* The n sites into series by their labels (name and kind, and with_class their class and device: sites
 * named alike, native frames with no line, are one series), summing bytes (peak: their bytes at the
 * peak) and count. 0, or -1 when out of memory (free r with vt_mseries_free either way). */
static int vt_mseries_of(const struct vt_site *const *sites, size_t n, int with_class, int peak, struct vt_mseries *r)
{
    memset(r, 0, sizeof *r);
    struct vt_msite *e, *t;
    for (size_t i = 0; i < n; i++) {
        const struct vt_site *s = sites[i];
        char key[1200];
        int len = with_class ? snprintf(key, sizeof key, "%s|%s|%s|%d", vt_msite_name(s), s->kind, vt_site_class(s), s->device)
                             : snprintf(key, sizeof key, "%s|%s", vt_msite_name(s), s->kind);
        if (len < 0 || (size_t)len >= sizeof key)
            len = (int)strlen(key);
        HASH_FIND(hh, r->set, key, (size_t)len, e);
        if (!e) {
            if (!(e = calloc(1, sizeof *e + (size_t)len + 1)))
                return -1;
            memcpy(e->key, key, (size_t)len);
            e->first = s;
            HASH_ADD(hh, r->set, key, (size_t)len, e);
            r->n++;
        }
        e->bytes += peak ? s->peak_bytes : s->bytes;
        e->count += s->count;
    }
    if (r->n && !(r->order = malloc(r->n * sizeof *r->order)))
        return -1;
    size_t k = 0;
    HASH_ITER(hh, r->set, e, t) r->order[k++] = e;
    if (k)
        qsort(r->order, k, sizeof *r->order, vt_msite_cmp);
    return 0;
}

static int vt_sites(FILE *f, const struct vt_model *m, int top)
{
    const struct vt_site **live = m->nsites ? malloc(m->nsites * sizeof *live) : NULL;
    size_t n = 0;
    if (m->nsites && !live)
        return -1;
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].role != VT_ROLE_CACHE && m->sites[i].bytes)
            live[n++] = &m->sites[i];
    struct vt_mseries r;
    int oom = vt_mseries_of(live, n, 1, 0, &r) < 0;
    free(live);
    size_t shown = oom ? 0 : r.n < (size_t)top ? r.n : (size_t)top;
    static const char *const names[] = {"vramtrace_site_live_bytes", "vramtrace_site_live_allocations"};
    static const char *const helps[] = {
        "Live bytes at one of the process's largest call sites (named as vramtrace report names it).",
        "Live allocations (or an allocator's blocks) at one of the process's largest call sites."};
    for (int w = 0; w < 2 && shown; w++) {
        vt_family(f, names[w], "gauge", helps[w]);
        for (size_t i = 0; i < shown; i++) {
            const struct vt_site *s = r.order[i]->first;
            vt_process_labels(f, names[w], &m->result);
            if (s->device >= 0)
                fprintf(f, ",device=\"%d\"", s->device);
            vt_label(f, "site", vt_msite_name(s));
            vt_label(f, "kind", s->kind);
            vt_label(f, "class", vt_site_class(s));
            fprintf(f, "} %llu\n", (unsigned long long)(w ? r.order[i]->count : r.order[i]->bytes));
        }
    }
    vt_mseries_free(&r);
    return oom ? -1 : 0;
}

/* When each device's peak was (Unix time), and the sites that held it then, the largest top of each
 * device, one series per name as the live sites' (vt_sites). 0, or -1 when out of memory. */
static int vt_peaks(FILE *f, const struct vt_model *m, int top)
{
    const struct vt_dumpfile *d = m->d;
    int any = 0;
    for (int i = 0; i < m->ndev; i++) {
        const struct vt_dev *v = &m->dev[m->devidx[i]];
        if (v->device < 0 || !v->peak || v->peak_time_ns == VT_DF_UNKNOWN || v->peak_time_ns < d->start_mono)
            continue;
        if (!any++)
            vt_family(f, "vramtrace_device_peak_timestamp_seconds", "gauge",
                      "When the process held the most device memory (Unix time).");
        vt_process_labels(f, "vramtrace_device_peak_timestamp_seconds", &m->result);
        fprintf(f, ",device=\"%d\"} %.3f\n", v->device,
                (double)(d->start_wall + (v->peak_time_ns - d->start_mono)) / 1e9);
    }
    any = 0;
    for (int i = 0; i < m->ndev; i++) {
        const struct vt_dev *v = &m->dev[m->devidx[i]];
        if (v->device < 0 || !v->peak_sites)
            continue;
        size_t n = vt_model_peak_sites(m, v->device, NULL, 0);
        const struct vt_site **all = n ? malloc(n * sizeof *all) : NULL;
        if (n && !all)
            return -1;
        n = vt_model_peak_sites(m, v->device, all, n);
        struct vt_mseries r;
        int oom = vt_mseries_of(all, n, 0, 1, &r) < 0;
        free(all);
        for (size_t j = 0; !oom && j < r.n && j < (size_t)top; j++) {
            if (!any++)
                vt_family(f, "vramtrace_peak_site_bytes", "gauge",
                          "Bytes one of the largest call sites held when the device's reserved memory was at its peak.");
            vt_process_labels(f, "vramtrace_peak_site_bytes", &m->result);
            fprintf(f, ",device=\"%d\"", v->device);
            vt_label(f, "site", vt_msite_name(r.order[j]->first));
            vt_label(f, "kind", r.order[j]->first->kind);
            fprintf(f, "} %llu\n", (unsigned long long)r.order[j]->bytes);
        }
        vt_mseries_free(&r);
        if (oom)
            return -1;
    }
    return 0;
}

int vt_metrics_claim(struct vt_metrics_out *o, const char *file, char *why, size_t len)
{
    memset(o, 0, sizeof o[0]);
    struct stat st;
    if (strlen(file) >= sizeof o->path) {
        snprintf(why, len, "%.200s...: the name is too long", file);
        return -1;
    }
    /* The file is created here, never opened: an existing one (a file, a device, a link) is not ours. */
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(why, len, "%s exists already: vramtrace writes only a file of its own there (one a process of "
                     "this job keeps, or one an earlier run left: remove it)", file);
        else
            snprintf(why, len, "cannot create %s: %s", file, strerror(errno));
        return -1;
    }
    int r = fstat(fd, &st);
    close(fd);
    if (r != 0) {
        snprintf(why, len, "cannot create %s: %s", file, strerror(errno));
        unlink(file);
        return -1;
    }
    strcpy(o->path, file);
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->claimed = 1;
    return 0;
}

void vt_metrics_release(struct vt_metrics_out *o)
{
    struct stat st;
    /* Removed only while it is still the file we put there last. */
    if (o->claimed && lstat(o->path, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino)
        unlink(o->path);
    o->claimed = 0;
}

int vt_metrics_put(const struct vt_dumpfile *d, struct vt_metrics_out *o, int top, int flags, char *why, size_t len)
{
    struct vt_model m;
    if (vt_model_build(d, flags, &m) < 0) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    char tmp[sizeof o->path + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX.tmp", o->path);
    int fd = mkostemps(tmp, 4, O_CLOEXEC); /* a name of its own, created O_EXCL: nothing planted is opened */
    FILE *f = fd >= 0 && fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
    int err = f ? 0 : errno;
    struct stat st;
    if (f) {
        int oom = vt_metrics_text(f, &m, top) < 0;
        if (fflush(f) != 0 || ferror(f) || fstat(fileno(f), &st) != 0)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err)
            err = errno;
        if (!err && oom)
            err = ENOMEM;
        if (!err && rename(tmp, o->path) != 0)
            err = errno;
        if (!err) {
            o->dev = st.st_dev;
            o->ino = st.st_ino;
        }
    } else if (fd >= 0) {
        close(fd);
    }
    if (err) {
        if (err == ENOMEM)
            snprintf(why, len, "out of memory");
        else
            snprintf(why, len, "cannot write %s: %s", o->path, strerror(err));
        if (fd >= 0)
            unlink(tmp);
    }
    vt_model_free(&m);
    return err ? -1 : 0;
}

int vt_metrics_text(FILE *f, const struct vt_model *m, int top)
{
    const struct vt_result *r = &m->result;
    vt_hash_oom = 0;
    static const struct {
        const char *name, *help;
        size_t field;
    } devs[] = {
        {"vramtrace_process_used_bytes", "Device memory of the process as nvidia-smi shows it (NVML).",
         offsetof(struct vt_dev, process_used)},
        {"vramtrace_reserved_bytes", "Device memory the process holds from the driver.", offsetof(struct vt_dev, reserved)},
        {"vramtrace_allocated_bytes", "Reserved memory handed to the program and still live.",
         offsetof(struct vt_dev, allocated)},
        {"vramtrace_cached_bytes", "Reserved memory a caching allocator keeps free (reserved - allocated).",
         offsetof(struct vt_dev, cached)},
        {"vramtrace_releasable_bytes", "Cached memory in wholly free segments: what empty_cache() would return.",
         offsetof(struct vt_dev, releasable)},
        {"vramtrace_fragmented_bytes", "Cached memory inside partly used segments.", offsetof(struct vt_dev, fragmented)},
        {"vramtrace_overhead_bytes", "Process used - reserved: the CUDA context, modules and driver internals.",
         offsetof(struct vt_dev, overhead)},
        {"vramtrace_device_total_bytes", "The device's memory.", offsetof(struct vt_dev, total)},
        {"vramtrace_device_free_bytes", "The device's free memory, all processes.", offsetof(struct vt_dev, free)},
        {"vramtrace_device_peak_bytes", "The most device memory the process held from the driver (reserved) at once.",
         offsetof(struct vt_dev, peak)},
    };
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        vt_device_family(f, m, devs[i].name, devs[i].help, devs[i].field);
    if (vt_peaks(f, m, top) < 0)
        return -1;
    vt_process_value(f, m, "vramtrace_allocations_total", "counter", "Allocations the process made (every API).",
                     r->api_allocs);
    vt_process_value(f, m, "vramtrace_frees_total", "counter", "Frees the process made (every API).", r->api_frees);
    vt_process_value(f, m, "vramtrace_failures_total", "counter", "Allocation and free calls that failed.",
                     r->api_failed);
    vt_process_value(f, m, "vramtrace_oom_events_total", "counter", "Allocations refused for want of memory.",
                     r->oom_events);
    vt_process_value(f, m, "vramtrace_host_pinned_bytes", "gauge", "Pinned host memory the process allocated.",
                     m->host_pinned);
    if (m->self.has) {
        vt_family(f, "vramtrace_self_cpu_seconds_total", "counter",
                  "CPU time vramtrace spent in the process: its hooks (sampled) and its threads.");
        vt_process_labels(f, "vramtrace_self_cpu_seconds_total", r);
        fprintf(f, "} %.6f\n", (double)(m->self.hook_ns + m->self.threads_ns) / 1e9);
    }
    vt_process_value(f, m, "vramtrace_dump_timestamp_seconds", "gauge", "When the figures were taken (Unix time).",
                     r->time_wall / 1000000000u);
    return vt_sites(f, m, top) < 0 || vt_hash_oom ? -1 : 0;
}
