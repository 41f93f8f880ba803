/* vt_endnote.h. The dumps are found by listing the directory, not from the library's own count:
 * `vramtrace metrics` deletes the dumps it asked for, and a user may have moved some. A process that wrote
 * none (a launcher such as torchrun or a shell script, whose children do the CUDA work) names the
 * newest dump other processes wrote there since it started. */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_config.h"
#include "vt_dump.h"
#include "vt_endnote.h"
#include "vt_hot.h"
#include "vt_module.h"
#include "vt_log.h"
#include "vt_paths.h"

static int vt_is_cudart(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    return info->dlpi_name && strstr(info->dlpi_name, "libcudart") != NULL;
}

/* Why a program made no CUDA call, where it can be told: it loaded a CUDA runtime, which found no driver
 * (a machine with no GPU, and the bundled fake driver not on the library path: it lies beside this
 * library, in fake/). A program that loaded no runtime either may simply not use CUDA. */
static void vt_no_call_why(char *out, size_t len)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    if (h || !dl_iterate_phdr(vt_is_cudart, NULL)) {
        snprintf(out, len, " (it made no CUDA call)");
        return;
    }
    Dl_info me;
    char fake[4096] = "";
    struct stat st;
    if (dladdr((void *)vt_no_call_why, &me) && me.dli_fname) {
        const char *slash = strrchr(me.dli_fname, '/');
        if (slash && (size_t)(slash - me.dli_fname) + 32 < sizeof fake) {
            snprintf(fake, sizeof fake, "%.*s/fake", (int)(slash - me.dli_fname), me.dli_fname);
            if (stat(fake, &st) != 0 || !S_ISDIR(st.st_mode))
                fake[0] = 0;
        }
    }
    if (fake[0])
        snprintf(out, len, " (it made no CUDA call: its CUDA runtime found no driver; with no GPU here, the "
                           "bundled fake driver is in %s: LD_LIBRARY_PATH=%s)", fake, fake);
    else
        snprintf(out, len, " (it made no CUDA call: its CUDA runtime found no driver)");
}

struct vt_found {
    unsigned long n, first, last; /* this process's dumps: how many, lowest and highest seq */
    unsigned long others;         /* other processes' dumps written since this one started */
    long other_pid;               /* the newest of those */
    unsigned long other_seq;
    int64_t other_mtime_ns;
};

static void vt_endnote_scan(const char *dir, struct vt_found *f)
{
    memset(f, 0, sizeof *f);
    DIR *d = opendir(dir);
    if (!d)
        return;
    long me = (long)getpid();
    int64_t start = (int64_t)vt_dump_start_wall_ns();
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        long pid;
        unsigned long seq;
        struct stat st;
        if (vt_dump_name_parse(e->d_name, &pid, &seq) < 0)
            continue;
        if (pid == me) {
            f->first = f->n && f->first < seq ? f->first : seq;
            f->last = f->last > seq ? f->last : seq;
            f->n++;
            continue;
        }
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path || stat(path, &st) != 0)
            continue;
        int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        if (mtime < start)
            continue;
        f->others++;
        if (mtime >= f->other_mtime_ns) {
            f->other_mtime_ns = mtime;
            f->other_pid = pid;
            f->other_seq = seq;
        }
    }
    closedir(d);
}

void vt_endnote_say(void)
{
    long me = (long)getpid();
    if (vt_cfg.end_note_pid <= 0 || vt_cfg.end_note_pid != me)
        return;
    /* Said even by a process that never used CUDA, whose messages are otherwise held. */
    vt_log_release();
    /* The closing line comes last: what the program wrote to a piped stdout (buffered until exit flushes
     * it, after this destructor) goes first. Never waiting for stdout's lock: exit() may have been called
     * from a signal handler that interrupted the program's own stdio. */
    if (ftrylockfile(stdout) == 0) {
        fflush_unlocked(stdout);
        funlockfile(stdout);
    }
    /* No dump of ours yet and no directory set: the private one, where the children's went if any. */
    char priv[4096];
    const char *dir = vt_dump_dir_used();
    if (!dir && vt_private_dir(priv, sizeof priv, geteuid(), getenv("TMPDIR")) == 0)
        dir = priv;
    struct vt_found f;
    if (!dir) {
        vt_say("pid %ld wrote no dump", me);
        return;
    }
    vt_endnote_scan(dir, &f);
    char a[4096], b[4096];
    if (f.n == 1) {
        vt_dump_path(a, sizeof a, dir, me, f.last);
        vt_say("1 dump in %s; read it with: vramtrace report %s", dir, a);
    } else if (f.n == 2) {
        vt_dump_path(a, sizeof a, dir, me, f.first);
        vt_dump_path(b, sizeof b, dir, me, f.last);
        vt_say("2 dumps in %s; see what grew with: vramtrace diff %s %s", dir, a, b);
    } else if (f.n > 2) {
        /* trend orders the dumps by the time they were taken, so the shell's order of the glob is fine. */
        vt_dump_glob(a, sizeof a, dir, -1, me);
        vt_say("%lu dumps in %s; see what grows with: vramtrace trend %s", f.n, dir, a);
    } else if (f.others) {
        vt_dump_path(a, sizeof a, dir, f.other_pid, f.other_seq);
        vt_say("pid %ld wrote no dump%s; the processes it started wrote %lu in %s, the last: vramtrace report %s", me,
               atomic_load(&vt_hotdata.active) == 2 ? "" : " (it made no CUDA call)", f.others, dir, a);
    } else {
        char why[4200] = "";
        if (atomic_load(&vt_hotdata.active) != 2)
            vt_no_call_why(why, sizeof why);
        vt_say("pid %ld wrote no dump in %s%s", me, dir, why);
    }
}
