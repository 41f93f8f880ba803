/* vt_metrics_file.h. The figures are the reports' own: the dumper writes the same dump it would write
 * for a signal into a memory file, and the reader's parser, model and Prometheus renderer (analyze/, built
 * into the library) turn it into the text `vramtrace report --prometheus` prints. Native frames are named
 * as the command names them, by file and line: the command's own symbolizer (libdw), built on its own
 * beside the library, is loaded on the dumper thread at the first rendering; the names it gives are kept
 * from one interval to the next while the process's modules stay the same, and it is opened (libdw reads
 * the modules' symbols and lines) only in a rendering that meets an address not named yet, and closed
 * after the next rendering that meets none. Where it cannot be loaded (not installed, libdw missing),
 * frames keep the names the dump carries, said once. That costs the dumper thread about what reading the
 * dump costs the command (~1.4 ms at a serving loop's few hundred sites, ~0.45 s and ~60 MiB at a million
 * live allocations), once an interval, outside every lock.
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
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>

#include "vt_config.h"
#include "vt_dump.h"
#include "vt_dumper.h"
#include "vt_dumpfile.h"
#include "vt_labels.h"
#include "vt_log.h"
#include "vt_metrics.h"
#include "vt_metrics_file.h"
#include "vt_module.h"
#include "vt_post.h"
#include "vt_real.h"
#include "vt_sigguard.h"
#include "vt_table.h"

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

/* The command's symbolizer, from VT_SYMBOLIZER_SO beside this library (as trusted as the library: a
 * regular file, not a link, that only its owner, root or this user, may write); NULL, said once, where it
 * cannot be. */
static const struct vt_symbolizer_ops *vt_mf_load_symbolizer(void)
{
    Dl_info self;
    char path[4096], why[4400] = "";
    const char *slash;
    struct stat st;
    void *h = NULL;
    const struct vt_symbolizer_ops *ops = NULL;
    if (!dladdr((void *)vt_mf_load_symbolizer, &self) || !self.dli_fname || !(slash = strrchr(self.dli_fname, '/')) ||
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - self.dli_fname), self.dli_fname, VT_SYMBOLIZER_SO) >=
            (int)sizeof path)
        snprintf(why, sizeof why, "this library's own folder is not known");
    else if (lstat(path, &st) != 0) /* a link is refused below: not a regular file */
        snprintf(why, sizeof why, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode) || (st.st_mode & 022) || (st.st_uid != 0 && st.st_uid != geteuid()))
        snprintf(why, sizeof why, "%s is not a file that only root or this user may write", path);
    else if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
        snprintf(why, sizeof why, "%s", dlerror());
    else if (vt_real_dlsym_resolve(), !vt_real_dlsym || !(ops = vt_real_dlsym(h, VT_SYMBOLIZER_OPS)))
        snprintf(why, sizeof why, "%s has no %s", path, VT_SYMBOLIZER_OPS);
    if (why[0])
        vt_say_once(VT_ONCE_SYMBOLS, "the metrics file names native frames by symbol, not by line (%s)", why);
    return ops; /* the library stays loaded (nodelete), as the process lives */
}

static const struct vt_symbolizer_ops *vt_mf_plug;
static struct vt_symbolizer *vt_mf_sym; /* opened at an address not named yet, until a rendering needs none */
static uint64_t vt_mf_sym_key;          /* the modules the names below are of */
static const struct vt_dumpfile *vt_mf_dump; /* the dump being rendered, to open the symbolizer for */
static int vt_mf_sym_failed;                 /* it could not be opened in this rendering */
static int vt_mf_missed;                     /* this rendering met an address not named yet */

/* A module as the dump maps it: where, what file, which build. */
static uint64_t vt_mf_module_hash(const struct vt_df_module *m)
{
    uint64_t h = (1469598103934665603ull ^ m->base) * 1099511628211ull;
    h = (h ^ m->lo) * 1099511628211ull;
    h = (h ^ m->hi) * 1099511628211ull;
    for (const char *c = m->path; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    for (const char *c = m->build_id; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h | 1; /* 0: no module */
}

static uint64_t vt_mf_modules_key(const struct vt_dumpfile *d)
{
    uint64_t h = 1469598103934665603ull ^ d->nmodules;
    for (size_t i = 0; i < d->nmodules; i++)
        h = (h ^ vt_mf_module_hash(&d->modules[i])) * 1099511628211ull;
    return h;
}

static int vt_mf_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The symbolizer's answer for each address met, kept from one rendering to the next while the modules
 * are the same. The symbolizer itself is opened only in a rendering that meets an address not named
 * yet, and closed at the end of the first rendering after it that met none: open, it holds each module's
 * symbol table and names (libelf's mapping of the file, the index), which in a PyTorch process was
 * +90 MiB of resident memory (docs/validation.md). A serving process's sites come again and again, so
 * its symbolizer is closed after its first few renderings; one whose stacks keep changing keeps it open
 * (reading the tables again at every rendering would cost more than holding them). */
struct vt_mf_name {
    uint64_t pc;
    uint64_t module; /* vt_mf_module_hash of the module it lies in; 0: none */
    char *frames;    /* NULL: the symbolizer has no name for it */
    UT_hash_handle hh;
};
static struct vt_mf_name *vt_mf_names;
static unsigned vt_mf_nnames;
#define VT_MF_NAMES_MAX 100000 /* past this, forgotten at the next rendering and asked again */

static void vt_mf_names_clear(void)
{
    struct vt_mf_name *n, *tmp;
    HASH_ITER(hh, vt_mf_names, n, tmp) {
        HASH_DEL(vt_mf_names, n);
        free(n->frames);
        free(n);
    }
    vt_mf_nnames = 0;
}

/* The modules changed (one loaded, one unloaded): the names of addresses in a module that is gone, or
 * in none, are forgotten (an address there may now be other code); the rest are still right. */
static void vt_mf_names_prune(const struct vt_dumpfile *d)
{
    uint64_t *have = d->nmodules ? malloc(d->nmodules * sizeof *have) : NULL;
    if (d->nmodules && !have) {
        vt_mf_names_clear();
        return;
    }
    for (size_t i = 0; i < d->nmodules; i++)
        have[i] = vt_mf_module_hash(&d->modules[i]);
    qsort(have, d->nmodules, sizeof *have, vt_mf_u64_cmp);
    struct vt_mf_name *n, *tmp;
    HASH_ITER(hh, vt_mf_names, n, tmp) {
        if (n->module && have && bsearch(&n->module, have, d->nmodules, sizeof *have, vt_mf_u64_cmp))
            continue;
        HASH_DEL(vt_mf_names, n);
        free(n->frames);
        free(n);
        vt_mf_nnames--;
    }
    free(have);
}

/* The module of the dump being rendered that holds pc, as vt_mf_module_hash; 0: none. */
static uint64_t vt_mf_module_of(uint64_t pc)
{
    for (size_t i = 0; vt_mf_dump && i < vt_mf_dump->nmodules; i++) {
        const struct vt_df_module *m = &vt_mf_dump->modules[i];
        if (pc >= m->lo && pc < m->hi)
            return vt_mf_module_hash(m);
    }
    return 0;
}

/* A token the model holds while it renders: the real symbolizer is opened behind it when needed. */
static char vt_mf_token;

/* The model opens a symbolizer for each dump and closes it after: here it gets the token; when the
 * modules changed, the names of those gone are dropped and a symbolizer opened for them closed. */
static struct vt_symbolizer *vt_mf_sym_open(const struct vt_dumpfile *d)
{
    /* Never during a rendering: the model holds the names it was given until it closes. */
    uint64_t key = vt_mf_modules_key(d);
    if (vt_mf_nnames >= VT_MF_NAMES_MAX)
        vt_mf_names_clear();
    else if (key != vt_mf_sym_key)
        vt_mf_names_prune(d);
    if (key != vt_mf_sym_key && vt_mf_sym) { /* opened for other modules */
        vt_mf_plug->close(vt_mf_sym);
        vt_mf_sym = NULL;
    }
    vt_mf_sym_key = key;
    vt_mf_dump = d;
    vt_mf_sym_failed = 0;
    vt_mf_missed = 0;
    return (struct vt_symbolizer *)&vt_mf_token;
}

/* Each address a step forward: a rendering that reads many modules' symbols is slow, not stuck, to an
 * exit dump waiting behind it (vt_dumper.c's watch). Once exit() has begun the file is about to be
 * removed: the rest of its frames keep the dump's names, and the exit dump waits no longer for them. */
static const char *vt_mf_sym_frames(struct vt_symbolizer *s, uint64_t pc)
{
    (void)s;
    struct vt_mf_name *n;
    HASH_FIND(hh, vt_mf_names, &pc, sizeof pc, n);
    if (n)
        return n->frames;
    vt_post_progress();
    vt_mf_missed = 1;
    if (vt_dumper_exiting() || vt_mf_sym_failed)
        return NULL;
    if (!vt_mf_sym) {
        vt_mf_sym = vt_mf_plug->open(vt_mf_dump);
        vt_post_progress();
        if (!vt_mf_sym) {
            vt_mf_sym_failed = 1;
            return NULL;
        }
    }
    const char *f = vt_mf_plug->frames(vt_mf_sym, pc);
    if (vt_dumper_exiting())
        return f; /* perhaps cut short: not kept */
    n = vt_mf_nnames < VT_MF_NAMES_MAX ? malloc(sizeof *n) : NULL;
    char *copy = f ? strdup(f) : NULL;
    if (!n || (f && !copy)) {
        free(n);
        free(copy);
        return f; /* valid until the close below */
    }
    n->pc = pc;
    n->module = vt_mf_module_of(pc);
    n->frames = copy;
    HASH_ADD(hh, vt_mf_names, pc, sizeof n->pc, n);
    vt_mf_nnames++;
    return copy;
}

static void vt_mf_sym_close(struct vt_symbolizer *s)
{
    (void)s;
    if (vt_mf_sym && !vt_mf_missed) {
        vt_mf_plug->close(vt_mf_sym);
        vt_mf_sym = NULL;
    }
    vt_mf_dump = NULL;
}

static const struct vt_symbolizer_ops vt_mf_kept = {vt_mf_sym_open, vt_mf_sym_frames, vt_mf_sym_close};

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
    static int looked;
    if (!looked) {
        vt_mf_plug = vt_mf_load_symbolizer();
        vt_model_use_symbolizer(vt_mf_plug ? &vt_mf_kept : NULL);
        looked = 1;
    }
    r = vt_metrics_put(&d, &vt_mf_out, vt_cfg.metrics_top, vt_mf_plug ? 0 : VT_MODEL_NO_SYMBOLS, why, len);
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
