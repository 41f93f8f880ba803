/* The dump writer. Everything is copied from the table first; the file is then written with no lock
 * held, into a 0600 temporary file of an unpredictable name (mkostemps: O_EXCL, so never through a
 * planted link) beside its final name, and linked into place only when complete, so a reader never
 * sees half a dump. The final name is the next sequence number not taken in the directory; when
 * someone takes it between our look and our link, the dump is written again under the next one, so
 * the header's seq always matches the file name and a planted name never stops dumping. Temporary
 * files that processes killed mid-dump left behind are removed (the first dump of a process looks). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"
#include "vt_clock.h"
#include "vt_format.h"
#include "vt_records.h"
#include "vt_blocks.h"
#include "vt_config.h"
#include "vt_devices.h"
#include "vt_dump.h"
#include "vt_unload.h"
#include "vt_fd.h"
#include "vt_selfcost.h"
#include "vt_post.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_out.h"
#include "vt_paths.h"
#include "vt_pycapture.h"
#include "vt_pystack.h"
#include "vt_real.h"
#include "vt_sigguard.h"
#include "vt_stack.h"
#include "vt_table.h"
#include "vt_torch.h"
#include "vt_module.h"

#define VT_REASON_WORD(e, word) word,
static const char *const vt_reason_names[] = {VT_REASONS(VT_REASON_WORD)};
#undef VT_REASON_WORD
static uint64_t vt_start_mono, vt_start_wall;
static unsigned long vt_dump_seq;
static char vt_private[PATH_MAX]; /* the private directory, once made and checked */
static int vt_cleaned;            /* stale temporary files looked for */

static uint64_t vt_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Process start, for the header (monotonic and wall clock, ns). */
static void vt_dump_init(void)
{
    vt_start_mono = vt_now_ns();
    vt_start_wall = vt_wall_ns();
}

static void vt_dump_atfork_child(void)
{
    vt_dump_seq = 0;
    vt_cleaned = 0;
    vt_dump_init();
}

/* The directory for this dump: the configured one, else the private one (made the first time; when
 * someone else holds its name, a fresh one of a random name). NULL with why when there is none. */
static const char *vt_dump_dir(char *why, size_t len)
{
    if (vt_cfg.dir[0])
        return vt_cfg.dir;
    if (vt_private[0])
        return vt_private;
    char path[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    if (vt_private_dir(path, sizeof path, geteuid(), tmpdir) < 0) {
        snprintf(why, len, "TMPDIR is too long");
        return NULL;
    }
    if (vt_private_dir_check(path, geteuid(), 1, why, len) == 0) {
        strcpy(vt_private, path);
        return vt_private;
    }
    char fresh[PATH_MAX];
    if (snprintf(fresh, sizeof fresh, "%s-XXXXXX", path) < (int)sizeof fresh && mkdtemp(fresh)) {
        vt_say("%s; dumps go to %s instead", why, fresh);
        strcpy(vt_private, fresh);
        return vt_private;
    }
    return NULL;
}

uint64_t vt_dump_start_wall_ns(void)
{
    return vt_start_wall;
}

const char *vt_dump_dir_used(void)
{
    return vt_cfg.dir[0] ? vt_cfg.dir : vt_private[0] ? vt_private : NULL;
}

/* Removes .vramtrace.<pid>.*.tmp files of ours whose process is gone. */
static void vt_clean_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        long pid;
        struct stat st;
        if (vt_tmp_name_parse(e->d_name, &pid) < 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
            unlink(path);
    }
    closedir(d);
}

static void vt_put_u64(struct vt_out *f, uint64_t v)
{
    if (v == VT_UNKNOWN)
        vt_outs(f, " -");
    else
        vt_outf(f, " %llu", (unsigned long long)v);
}

static int vt_cmp_pc(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The highest id of the records "<prefix> ID ..." in text (the bridges' pyframes and pystacks). */
static uint32_t vt_max_id(const char *text, const char *prefix)
{
    uint32_t max = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, prefix, len)) {
            unsigned long v = strtoul(p + len, NULL, 10);
            if (v > max && v < UINT32_MAX / 2)
                max = (uint32_t)v;
        }
    return max;
}

/* Each device's peak of reserved memory and when it was; with the entries live now that were made by
 * then, what was freed since of the memory live at it, by site: what was live at the peak (vt_peak.h). */
static void vt_write_peaks(struct vt_out *f, const struct vt_snapshot *s, const struct vt_ticks_scale *scale)
{
    for (int d = 0; d < VT_MAX_DEVICES; d++) {
        if (!s->c.reserved_peak[d])
            continue;
        vt_outf(f, VT_REC_PEAK " %d %llu", d, (unsigned long long)s->c.reserved_peak[d]);
        /* UINT64_MAX: the peak is the dump's moment (vt_table.h); 0: made before its entry was stamped. */
        uint64_t at = s->peak_stamp[d];
        vt_put_u64(f, at == UINT64_MAX || !at ? VT_UNKNOWN : vt_ticks_at(scale, at));
        vt_outs(f, "\n");
    }
    for (size_t i = 0; i < s->npeak_freed; i++) {
        const struct vt_peak_freed *x = &s->peak_freed[i];
        if (x->device < 0 || x->device >= VT_MAX_DEVICES || s->peak_stamp[x->device] == UINT64_MAX)
            continue;
        vt_outf(f, VT_REC_FMT(PEAK_FREED), x->device, x->stack, vt_kind_word((enum vt_kind)x->kind),
                vt_fn_name((enum vt_fn)x->api), (unsigned long long)x->bytes);
    }
    if (s->peak_lost)
        vt_outf(f, VT_COUNTER_LINE(VT_CTR_PEAK_LOST), 1ull);
}

/* Stacks referenced by live entries (or a failed request, or memory live at a peak and freed since),
 * their frames' dladdr names, and their Python stacks, numbered after the bridges' own. */
static void vt_write_stacks(struct vt_out *f, const struct vt_snapshot *s, const char *bridge)
{
    uint32_t count;
    const struct vt_stack *head = vt_stack_all(&count);
    if (!count)
        return;
    /* Read after the native stacks: every Python stack they refer to is older. */
    uint32_t pycount = vt_pystack_count();
    unsigned char *used = calloc(count + 1, 1), *pyused = calloc((size_t)pycount + 1, 1);
    if (!used || !pyused) {
        free(used);
        free(pyused);
        vt_say_once(VT_ONCE_NOMEM, "out of memory while writing a dump; its stacks are left out");
        return;
    }
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].stack <= count)
            used[s->allocs[i].stack] = 1;
    for (size_t i = 0; i < s->nphys; i++)
        if (s->phys[i].stack <= count)
            used[s->phys[i].stack] = 1;
    for (size_t i = 0; i < s->nfailed; i++)
        if (s->failed[i].stack <= count)
            used[s->failed[i].stack] = 1;
    for (size_t i = 0; i < s->npeak_freed; i++)
        if (s->peak_freed[i].stack <= count)
            used[s->peak_freed[i].stack] = 1;
    used[0] = 0;

    uint32_t frame_base = vt_max_id(bridge, "pyframe "), stack_base = vt_max_id(bridge, "pystack ");
    size_t npc = 0;
    for (const struct vt_stack *st = head; st; st = st->next) {
        if (!used[st->id])
            continue;
        vt_outf(f, VT_REC_STACK " %u %u", st->id, st->n);
        int old = st->gen != vt_unload_gen();
        for (uint32_t j = 0; j < st->n; j++)
            vt_outf(f, " 0x%lx", old && vt_unload_stale(st->pc[j], st->gen) ? (unsigned long)VT_PC_UNLOADED
                                                                            : (unsigned long)st->pc[j]);
        vt_outf(f, " %u\n", st->py ? stack_base + st->py : 0);
        if (st->py <= pycount)
            pyused[st->py] = 1;
        npc += st->n;
    }
    vt_pystack_write(f, pyused, pycount, frame_base, stack_base);
    free(pyused);
    uintptr_t *pcs = malloc((npc ? npc : 1) * sizeof *pcs);
    if (pcs) {
        size_t k = 0;
        for (const struct vt_stack *st = head; st; st = st->next)
            if (used[st->id])
                for (uint32_t j = 0; j < st->n; j++)
                    pcs[k++] = st->pc[j];
        qsort(pcs, k, sizeof *pcs, vt_cmp_pc);
        for (size_t j = 0; j < k; j++) {
            if (j && pcs[j] == pcs[j - 1])
                continue;
            Dl_info di;
            /* A return address: the call is the byte before it. */
            if (dladdr((void *)(pcs[j] - 1), &di) && di.dli_sname && di.dli_saddr) {
                vt_outf(f, VT_REC_FRAME " 0x%lx ", (unsigned long)pcs[j]);
                vt_out_text(f, di.dli_sname, 1);
                vt_outf(f, "+0x%lx\n", (unsigned long)(pcs[j] - (uintptr_t)di.dli_saddr));
            } else
                vt_outf(f, VT_REC_FRAME " 0x%lx -\n", (unsigned long)pcs[j]);
        }
        free(pcs);
    }
    free(used);
}

/* The command line, arguments apart by single spaces, each escaped as a word (a space in one is \x20),
 * so the record stays one line and arguments stay apart. */
static void vt_write_cmdline(struct vt_out *f)
{
    char buf[8192];
    ssize_t n = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    vt_outs(f, VT_REC_CMDLINE " ");
    if (n <= 0) {
        vt_outs(f, "-\n");
        return;
    }
    buf[n] = 0;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
        if (i)
            vt_outs(f, " ");
        if (buf[i])
            vt_out_text(f, buf + i, 1);
    }
    vt_outs(f, "\n");
}

static void vt_write_body(struct vt_out *f, enum vt_reason reason, unsigned long seq, struct vt_snapshot *s,
                          const char *bridge)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;

    vt_outf(f, VT_DUMP_MAGIC " %d\n", VRAMTRACE_FORMAT_VERSION);
    vt_outf(f, VT_REC_FMT(PID), (long)getpid());
    vt_outf(f, VT_REC_FMT(PPID), (long)getppid());
    vt_outs(f, VT_REC_EXE " ");
    vt_out_text(f, n > 0 ? exe : NULL, 0);
    vt_outs(f, "\n");
    vt_write_cmdline(f);
    vt_outf(f, VT_REC_FMT(REASON), vt_reason_names[reason]);
    vt_outf(f, VT_REC_FMT(SEQ), seq);
    vt_outf(f, VT_REC_FMT(TIME), (unsigned long long)vt_wall_ns(), (unsigned long long)vt_now_ns());
    vt_outf(f, VT_REC_FMT(START), (unsigned long long)vt_start_wall, (unsigned long long)vt_start_mono);
    vt_outf(f, VT_REC_FMT(DEPTH), vt_cfg.depth);

    /* At exit the driver may already be torn down (it is finalized before a preloaded library):
     * the exit dump asks it nothing. */
    int ask_driver = reason != VT_REASON_EXIT;
    /* Nor, while a CUDA graph is being captured, anything of a context: that could break the capture. */
    int capturing = ask_driver ? vt_devices_settle_captures() : 0;
    struct vt_devinfo devs[VT_MAX_DEVICES];
    int ndev = ask_driver ? vt_devices_query(devs, VT_MAX_DEVICES, s->c.max_device, !capturing) : 0;
    if (capturing)
        vt_outf(f, VT_COUNTER_LINE(VT_CTR_CAPTURING), (unsigned long long)capturing);
    if (ask_driver && vt_real_driver_is_fake())
        vt_outf(f, VT_COUNTER_LINE(VT_CTR_FAKE_DRIVER), 1ull);
    for (int d = 0; d < ndev; d++) {
        vt_outf(f, VT_REC_DEVICE " %d", devs[d].ordinal);
        vt_put_u64(f, devs[d].total);
        vt_put_u64(f, devs[d].free);
        vt_outf(f, " %llu %llu", (unsigned long long)s->c.reserved[d], (unsigned long long)s->c.reserved_peak[d]);
        vt_put_u64(f, devs[d].process_used);
        vt_put_u64(f, devs[d].graph_reserved);
        vt_put_u64(f, devs[d].graph_used);
        vt_outs(f, "\n");
        if (devs[d].free != VT_UNKNOWN) {
            vt_outf(f, VT_REC_LIMITS " %d", devs[d].ordinal);
            vt_put_u64(f, devs[d].malloc_heap);
            vt_put_u64(f, devs[d].stack_per_thread);
            vt_put_u64(f, devs[d].resident_threads);
            vt_put_u64(f, devs[d].printf_fifo);
            vt_outs(f, "\n");
        }
    }
    struct vt_poolinfo pools[VT_MAX_DEVICES + 64];
    size_t npools = capturing ? 0 : vt_pools_query(devs, ndev, s->pools, s->npools, pools, sizeof pools / sizeof pools[0]);
    for (size_t i = 0; i < npools; i++) {
        vt_outf(f, VT_REC_POOL " 0x%llx %d %s", (unsigned long long)pools[i].handle, pools[i].device,
                pools[i].is_default ? "default" : "explicit");
        vt_put_u64(f, pools[i].reserved);
        vt_put_u64(f, pools[i].used);
        vt_put_u64(f, pools[i].reserved_high);
        vt_put_u64(f, pools[i].used_high);
        if (pools[i].threshold_known)
            vt_outf(f, " %llu\n", (unsigned long long)pools[i].threshold);
        else
            vt_outs(f, " -\n");
    }

    if (bridge)
        vt_outs(f, bridge);
    vt_torch_write(f);

    static const struct { const char *name; size_t off; } counters[] = {
        {"unknown_frees", offsetof(struct vt_counters, unknown_frees)},
        {"unwatched_lookups", offsetof(struct vt_counters, unwatched_lookups)},
        {"dropped", offsetof(struct vt_counters, dropped)},
        {"replaced", offsetof(struct vt_counters, replaced)},
        {"batch_freed", offsetof(struct vt_counters, batch_freed)},
        {VT_CTR_OOM_EVENTS, offsetof(struct vt_counters, oom_events)},
        {"last_seq", offsetof(struct vt_counters, seq)},
        {"snapshot_hold_ns", offsetof(struct vt_counters, snap_hold_ns)},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        vt_outf(f, VT_REC_FMT(COUNTER), counters[i].name,
                (unsigned long long)*(const uint64_t *)((const char *)&s->c + counters[i].off));
    struct vt_selfcost self;
    vt_selfcost_read(&self);
    vt_outf(f,
            VT_COUNTER_LINE(VT_CTR_SELF_HOOK_SAMPLES) VT_COUNTER_LINE(VT_CTR_SELF_HOOK_OUTLIERS)
                VT_COUNTER_LINE(VT_CTR_SELF_HOOK_NS)
                VT_COUNTER_LINE(VT_CTR_SELF_PY_NS) VT_COUNTER_LINE(VT_CTR_SELF_NATIVE_NS)
                    VT_COUNTER_LINE(VT_CTR_SELF_THREADS_NS) VT_COUNTER_LINE(VT_CTR_PROCESS_CPU_NS),
            (unsigned long long)self.hook_samples, (unsigned long long)self.hook_outliers,
            (unsigned long long)self.hook_ns, (unsigned long long)self.py_ns,
            (unsigned long long)self.native_ns, (unsigned long long)self.threads_ns,
            (unsigned long long)self.process_ns);
    vt_outf(f, VT_COUNTER_LINE(VT_CTR_NATIVE_REUSED), (unsigned long long)vt_stack_reused());
    for (int a = 0; a < VT_FN_COUNT; a++) {
        const struct vt_api_counters *ac = &s->c.api[a];
        if (!ac->calls && !ac->allocs && !ac->frees && !ac->failed)
            continue;
        vt_outf(f, VT_REC_FMT(API), vt_fn_name((enum vt_fn)a),
                (unsigned long long)ac->calls, (unsigned long long)ac->allocs, (unsigned long long)ac->frees,
                (unsigned long long)ac->bytes_alloc, (unsigned long long)ac->bytes_freed,
                (unsigned long long)ac->failed);
    }
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        const struct vt_kind_counters *kc = &s->c.kind[k];
        vt_outf(f, VT_REC_FMT(KIND), vt_kind_word((enum vt_kind)k),
                (unsigned long long)s->c.live_count[k], (unsigned long long)s->c.live_bytes[k],
                (unsigned long long)kc->allocs, (unsigned long long)kc->frees, (unsigned long long)kc->bytes_alloc,
                (unsigned long long)kc->bytes_freed);
    }
    vt_pycapture_write(f);
    for (size_t i = 0; i < s->nunwatched; i++) {
        /* The name a caller asked cuGetProcAddress for: any string it liked. */
        vt_outs(f, VT_REC_UNWATCHED " ");
        vt_out_text(f, s->unwatched[i].name, 1);
        vt_outf(f, " %llu\n", (unsigned long long)s->unwatched[i].count);
    }
    for (size_t i = 0; i < s->nfailed; i++) {
        const struct vt_failed *o = &s->failed[i];
        vt_outf(f, VT_REC_FAILED " %llu %s %llu %d %u %d %llu %llu %llu", (unsigned long long)o->seq, vt_fn_name(o->api),
                (unsigned long long)o->size, o->device, o->stack, o->result, (unsigned long long)o->count,
                (unsigned long long)o->first_ns, (unsigned long long)o->last_ns);
        vt_put_u64(f, o->free_then);
        vt_outs(f, "\n");
    }

    vt_modules_write(f);
    vt_write_stacks(f, s, bridge);

    if (ask_driver && !capturing)
        vt_devices_resolve(s->allocs, s->nallocs);
    struct vt_ticks_scale scale;
    vt_ticks_scale(&scale);
    for (size_t i = 0; i < s->nallocs; i++) {
        const struct vt_alloc *a = &s->allocs[i];
        /* A block's API field names its allocator. The fields of one kind only are 0 for the others. */
        int block = a->kind == VT_KIND_BLOCK, async = a->kind == VT_KIND_ASYNC, map = a->kind == VT_KIND_VMM_MAP;
        vt_outf(f, VT_REC_FMT(ALLOC),
                (unsigned long long)a->addr, (unsigned long long)a->size, vt_kind_word(a->kind),
                block ? vt_block_owner(a->x.owner) : vt_fn_name(a->api), a->device,
                (unsigned long long)(async ? a->x.async.stream : 0), (unsigned long long)(async ? a->x.async.pool : 0),
                (unsigned long long)(map ? a->x.map.handle : 0), (unsigned long long)(map ? a->x.map.offset : 0),
                a->stack, (unsigned long long)a->seq, (unsigned long long)vt_ticks_at(&scale, a->stamp), a->tid);
        if (a->kind == VT_KIND_DEVICE && a->x.owner)
            vt_outf(f, VT_REC_FMT(POOL_SEGMENT), (unsigned long long)a->addr, vt_block_owner(a->x.owner));
    }
    for (size_t i = 0; i < s->nphys; i++) {
        const struct vt_phys *p = &s->phys[i];
        vt_outf(f, VT_REC_FMT(PHYS), (unsigned long long)p->handle,
                (unsigned long long)p->size, vt_kind_word(p->kind), vt_fn_name(p->api), p->device, p->refs,
                p->maps, p->stack, (unsigned long long)p->seq, (unsigned long long)vt_ticks_at(&scale, p->stamp), p->tid);
    }
    vt_write_peaks(f, s, &scale);
    vt_outs(f, VT_DUMP_END "\n");
}

/* The next sequence number whose file name is free in dir. */
static unsigned long vt_next_seq(const char *dir, char *final, size_t len)
{
    unsigned long seq = vt_dump_seq;
    struct stat st;
    for (int tries = 0; tries < 100000; tries++) {
        seq++;
        if (vt_dump_path(final, len, dir, (long)getpid(), seq) < 0)
            return 0;
        if (lstat(final, &st) != 0 && errno == ENOENT)
            break;
    }
    vt_dump_seq = seq;
    return seq;
}

/* Puts tmp in place as final without ever replacing a file: link() where the file system has hard
 * links, else rename() of a name just seen free. */
static int vt_place(const char *tmp, const char *final)
{
    if (link(tmp, final) == 0)
        return 0;
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    struct stat st;
    if (lstat(final, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(tmp, final) == 0 ? 1 : -1;
}

static int vt_fail(char *why, size_t whylen, const char *fmt, const char *a, const char *b)
{
    char text[PATH_MAX + 256];
    snprintf(text, sizeof text, fmt, a, b);
    vt_say_once(VT_ONCE_WRITE, "%s; the program runs on without this dump", text);
    if (why && whylen)
        snprintf(why, whylen, "%s", text);
    return -1;
}

int vt_dump_write(enum vt_reason reason, const char *bridge, struct vt_snapshot *given, char *path, size_t len,
                  char *why, size_t whylen, int *keep)
{
    if (keep)
        *keep = -1;
    struct vt_snapshot s;
    if (given)
        s = *given;
    else if (vt_table_snapshot(&s) < 0)
        return vt_fail(why, whylen, "out of memory: no dump written%s%s", "", "");
    vt_post_progress();
    char dirwhy[PATH_MAX + 128];
    const char *dir = vt_dump_dir(dirwhy, sizeof dirwhy);
    if (!dir) {
        vt_snapshot_free(&s);
        return vt_fail(why, whylen, "no directory for dumps: %s%s", dirwhy, "");
    }
    if (!vt_cleaned) {
        vt_cleaned = 1;
        vt_clean_stale(dir);
    }
    char tmp[PATH_MAX + 64], final[PATH_MAX + 64];
    struct vt_sigguard g;
    vt_sigguard_begin(&g);
    int fd = -1, r = -1;
    if (vt_tmp_template(tmp, sizeof tmp, dir, (long)getpid()) == 0)
        fd = mkostemps(tmp, VT_TMP_SUFFIX_LEN, O_CLOEXEC);
    else
        errno = ENAMETOOLONG;
    if (fd < 0) {
        vt_fail(why, whylen, "cannot write dumps in %s: %s", dir, strerror(errno));
        goto out;
    }
    int said = 0;
    for (int attempt = 0; attempt < 8; attempt++, said = 0) {
        unsigned long seq = vt_next_seq(dir, final, sizeof final);
        struct vt_out o;
        if (!seq || (attempt && (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)) || vt_out_open(&o, fd) < 0) {
            said = vt_fail(why, whylen, "cannot write a dump in %s: %s", dir, seq ? strerror(errno) : "no free name");
            break;
        }
        vt_write_body(&o, reason, seq, &s, bridge);
        if (vt_out_finish(&o) < 0) {
            said = vt_fail(why, whylen, "cannot write a dump in %s: %s", dir,
                           errno == EFBIG ? "the file size limit (ulimit -f) was reached" : strerror(errno));
            break;
        }
        int placed = vt_place(tmp, final);
        if (placed >= 0) {
            r = 0;
            if (placed == 1)
                tmp[0] = 0; /* renamed: nothing left to remove */
            break;
        }
        if (errno != EEXIST) {
            said = vt_fail(why, whylen, "cannot put a dump in place in %s: %s", dir, strerror(errno));
            break;
        }
        /* Someone took the name after we looked: write it again under the next one. */
    }
    if (r < 0 && !said)
        vt_fail(why, whylen, "cannot put a dump in place in %s: %s", dir, "every name tried was taken meanwhile");
    if (r == 0 && keep)
        *keep = vt_fd_high(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    close(fd);
    if (tmp[0])
        unlink(tmp);
    if (r == 0 && path && len) {
        strncpy(path, final, len - 1);
        path[len - 1] = 0;
    }
out:
    vt_sigguard_end(&g);
    vt_snapshot_free(&s);
    return r;
}

int vt_dump_write_fd(int fd, enum vt_reason reason, const char *bridge, struct vt_snapshot *given)
{
    struct vt_snapshot s;
    if (given)
        s = *given;
    else if (vt_table_snapshot(&s) < 0)
        return -1;
    struct vt_out o;
    int r = -1;
    if (vt_out_open(&o, fd) == 0) {
        /* Seq 0: no file of the series; the reader takes any number. */
        vt_write_body(&o, reason, 0, &s, bridge);
        r = vt_out_finish(&o);
    }
    vt_snapshot_free(&s);
    return r;
}

VT_MODULE(dump, .init = vt_dump_init, .child = vt_dump_atfork_child);
