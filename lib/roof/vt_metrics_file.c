/* vt_metrics_file.h. The figures are the reports' own: the dumper writes the same dump it would write
 * for a signal into a memory file, and the reader's parser, model and Prometheus renderer (analyze/, built
 * into the library) turn it into the text `vramtrace report --prometheus` prints, without symbolizing
 * (the library gives the model no symbolizer). That costs the dumper thread about what reading the dump costs the command (~1.4 ms at
 * a serving loop's few hundred sites, ~0.45 s and ~60 MiB at a million live allocations), once an
 * interval, outside every lock.
 *
 * One file, one process: "%p" in the name becomes the pid, so that each process of a job (which inherit
 * the setting) keeps its own. The file is created (O_EXCL) before anything is written to it, and that is
 * the only lock: without %p, the first process of a job keeps the file and the others say so once; a
 * path that exists already (a file of someone else's, a device) is refused, never replaced. It is
 * written beside itself and renamed into place, so a collector never reads half of it, and removed at
 * exit while it is still the file this process put there; nothing else is left behind. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt_config.h"
#include "vt_dump.h"
#include "vt_dumpfile.h"
#include "vt_labels.h"
#include "vt_log.h"
#include "vt_metrics.h"
#include "vt_metrics_file.h"
#include "vt_real.h"
#include "vt_sigguard.h"
#include "vt_table.h"
#include "vt_module.h"

static int vt_mf_state;              /* 0: not decided yet; 1: this process keeps the file; -1: it does not */
static struct vt_metrics_out vt_mf_out; /* the file, once claimed */
static char vt_mf_path[4096];        /* the setting with %p replaced */

/* The setting's name with "%p" as the pid and "%%" as "%"; -1 when it does not fit. has_pid: whether
 * it named the pid. */
static int vt_mf_expand(const char *tmpl, char *out, size_t len, int *has_pid)
{
    size_t n = 0;
    *has_pid = 0;
    for (const char *c = tmpl; *c; c++) {
        char pid[24];
        const char *piece = NULL;
        if (c[0] == '%' && c[1] == 'p') {
            snprintf(pid, sizeof pid, "%ld", (long)getpid());
            piece = pid;
            *has_pid = 1;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            piece = "%";
            c++;
        }
        size_t k = piece ? strlen(piece) : 1;
        if (n + k >= len)
            return -1;
        memcpy(out + n, piece ? piece : c, k);
        n += k;
    }
    out[n] = 0;
    return 0;
}

static int vt_mf_decide(void)
{
    int has_pid;
    char why[4400];
    if (vt_mf_expand(vt_cfg.metrics, vt_mf_path, sizeof vt_mf_path, &has_pid) < 0) {
        vt_say_once(VT_ONCE_METRICS, "VRAMTRACE_METRICS=%.200s... is too long: no metrics file is kept", vt_cfg.metrics);
        return -1;
    }
    if (vt_metrics_claim(&vt_mf_out, vt_mf_path, why, sizeof why) < 0) {
        vt_say_once(VT_ONCE_METRICS, "%s: this process keeps no metrics file%s", why,
                    has_pid ? "" : " (put %p in VRAMTRACE_METRICS for one file a process)");
        return -1;
    }
    return 1;
}

int vt_metrics_file_on(void)
{
    if (!vt_cfg.metrics[0])
        return 0;
    if (!vt_mf_state)
        vt_mf_state = vt_mf_decide();
    return vt_mf_state > 0;
}

/* The process's own C++ demangler (libstdc++'s, where a C++ program has it loaded; none otherwise, and
 * names stay as dladdr gave them): C++ frames named as the reports name them. */
static char *vt_mf_demangle(const char *mangled)
{
    /* Looked up once, on the dumper thread (the only one that renders), past our own dlsym hook. */
    static char *(*fn)(const char *, char *, size_t *, int *);
    static int looked;
    if (!looked) {
        vt_real_dlsym_resolve();
        if (vt_real_dlsym)
            *(void **)&fn = vt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
        looked = 1;
    }
    int st = -1;
    char *dem = fn ? fn(mangled, NULL, NULL, &st) : NULL;
    if (st == 0 && dem)
        return dem;
    free(dem);
    return NULL;
}

/* The metrics of the dump in fd (read from its start) into the file (vt_metrics_put). */
static int vt_mf_render(int fd, char *why, size_t len)
{
    struct vt_dumpfile d;
    FILE *in = lseek(fd, 0, SEEK_SET) == 0 ? fdopen(fd, "r") : NULL;
    if (!in) {
        snprintf(why, len, "cannot read the dump back: %s", strerror(errno));
        close(fd);
        return -1;
    }
    int r = vt_dumpfile_parse(in, "the metrics' dump", &d, why, len);
    fclose(in);
    if (r < 0)
        return -1;
    vt_labels_alloc_fns(vt_cfg.alloc_fns); /* sites named as the reports name them */
    vt_model_use_demangler(vt_mf_demangle);
    r = vt_metrics_put(&d, &vt_mf_out, vt_cfg.metrics_top, VT_MODEL_NO_SYMBOLS, why, len);
    vt_dumpfile_free(&d);
    return r;
}

void vt_metrics_file_write(const char *bridge, struct vt_snapshot *snap)
{
    char why[4400] = "";
    struct vt_sigguard g;
    vt_sigguard_begin(&g); /* a write past a file size limit raises no SIGXFSZ in the program */
    int fd = memfd_create("vramtrace-metrics", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(why, sizeof why, "no memory file for its dump: %s", strerror(errno));
        if (snap)
            vt_snapshot_free(snap);
    } else if (vt_dump_write_fd(fd, VT_REASON_INTERVAL, bridge, snap) < 0) {
        snprintf(why, sizeof why, "its dump could not be written: %s", strerror(errno));
        close(fd);
    } else {
        vt_mf_render(fd, why, sizeof why);
    }
    vt_sigguard_end(&g);
    if (why[0])
        vt_say_once(VT_ONCE_METRICS, "metrics file not written: %s (said once)", why);
}

void vt_metrics_file_remove(void)
{
    if (vt_mf_state > 0)
        vt_metrics_release(&vt_mf_out);
}

static void vt_metrics_file_atfork_child(void)
{
    /* The file is the parent's: the child keeps one of its own (%p) or, claiming the same path, none. */
    memset(&vt_mf_out, 0, sizeof vt_mf_out);
    vt_mf_state = 0;
}

VT_MODULE(metrics_file, .child = vt_metrics_file_atfork_child);
