/* vt_metrics_file.h. The figures are the reports' own: the dumper writes the same dump it would write
 * for a signal into a memory file, and the reader's parser, model and Prometheus renderer (tools/, linked
 * into the library) turn it into the text `vramtrace report --prometheus` prints, without symbolizing
 * (vt_sym_none.c). That costs the dumper thread about what reading the dump costs the command (~1.4 ms at
 * a serving loop's few hundred sites, ~0.45 s and ~60 MiB at a million live allocations), once an
 * interval, outside every lock.
 *
 * One file, one process: "%p" in the name becomes the pid, so that each process of a job (which inherit
 * the setting) keeps its own; without it, the first process to take an advisory lock on FILE.lock keeps
 * the file and the others say so once. The file is written beside itself and renamed into place, so a
 * collector never reads half of it, and it is removed at exit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt_config.h"
#include "vt_dump.h"
#include "vt_dumpfile.h"
#include "vt_log.h"
#include "vt_metrics.h"
#include "vt_metrics_file.h"
#include "vt_sigguard.h"
#include "vt_table.h"

static int vt_mf_state;       /* 0: not decided yet; 1: this process keeps the file; -1: it does not */
static int vt_mf_written;     /* the file is in place */
static int vt_mf_lock = -1;   /* FILE.lock, held while this process keeps a file without %p */
static char vt_mf_path[4096]; /* the setting with %p replaced */

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
    if (vt_mf_expand(vt_cfg.metrics, vt_mf_path, sizeof vt_mf_path, &has_pid) < 0) {
        vt_say_once(VT_ONCE_METRICS, "VRAMTRACE_METRICS=%s is too long: no metrics file is kept", vt_cfg.metrics);
        return -1;
    }
    if (has_pid)
        return 1;
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", vt_mf_path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int why = errno;
        if (fd >= 0)
            close(fd);
        if (why == EWOULDBLOCK)
            vt_say_once(VT_ONCE_METRICS, "another process keeps %s: this one keeps no metrics file (put %%p in "
                        "VRAMTRACE_METRICS for one file a process)", vt_mf_path);
        else
            vt_say_once(VT_ONCE_METRICS, "cannot take %s: %s; no metrics file is kept", lock, strerror(why));
        return -1;
    }
    vt_mf_lock = fd;
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
    r = vt_metrics_put(&d, vt_mf_path, vt_cfg.metrics_top, why, len);
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
    } else if (vt_mf_render(fd, why, sizeof why) == 0) {
        vt_mf_written = 1;
    }
    vt_sigguard_end(&g);
    if (why[0])
        vt_say_once(VT_ONCE_METRICS, "metrics file not written: %s (said once)", why);
}

void vt_metrics_file_remove(void)
{
    if (vt_mf_state > 0 && vt_mf_written)
        unlink(vt_mf_path);
    vt_mf_written = 0;
}

void vt_metrics_file_atfork_child(void)
{
    /* The child keeps its own file (%p) or none (the lock stays the parent's: its open file is closed
     * here, and a lock taken anew conflicts with the parent's). */
    if (vt_mf_lock >= 0)
        close(vt_mf_lock);
    vt_mf_lock = -1;
    vt_mf_state = 0;
    vt_mf_written = 0;
}
