/* Torch's trace tracker (vt_torch.h): found, attached, checked, and each entry it gets made into our
 * table's blocks and the segments kept here.
 *
 * Found: the first segment c10's allocator asks for (a cudaMalloc, or an expandable segment's address
 * reservation or physical memory, from libc10_cuda) means its device allocators exist. Its allocator
 * object is c10::cuda::CUDACachingAllocator::allocator (exported); the tracker is attached through the
 * object's own virtual attachAllocatorTraceTracker, as torch's inline attachAllocatorTraceTracker() calls
 * it: at its slot in the vtable, which torch's header fixes per version (its classes export no names).
 * Before anything is called the vtable must be that version's: as many slots, all in libc10_cuda's code
 * but c10::Allocator::is_simple_data_ptr (libc10's, exported) at its own; then its last, name(), must
 * say "native": the cudaMallocAsync backend's and a pluggable allocator's attachAllocatorTraceTracker
 * throw, and their tensors are driver allocations we see anyway.
 * Checked: torch's TraceEntry is read at the offsets of a layout known per torch version. The first entry
 * must be the segment our hook saw made on the same thread just before (its action, address, size and
 * device); the version's own layout is tried first, the others after. Until then the tracker is pending;
 * if the check fails it is off (the entries it still gets are dropped) and torch's block history is
 * used as before. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_blocks.h"
#include "vt_call.h"
#include "vt_config.h"
#include "vt_format.h"
#include "vt_lock.h"
#include "vt_module.h"
#include "vt_modules.h"
#include "vt_real.h"
#include "vt_records.h"
#include "vt_stack.h"
#include "vt_text.h"
#include "vt_thread.h"
#include "vt_torch.h"

/* c10::cuda::CUDACachingAllocator::allocator, a std::atomic<CUDAAllocator*>. */
#define VT_C10_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator9allocatorE"
#define VT_C10_LIB "libc10_cuda.so"
/* c10::Allocator::is_simple_data_ptr, the one slot of the vtable a name is exported for. */
#define VT_C10_SIMPLE "_ZNK3c109Allocator18is_simple_data_ptrERKNS_7DataPtrE"

/* The CUDA allocator's vtable as a torch version's c10/cuda/CUDACachingAllocator.h lays it out: c10::Allocator's
 * six slots (two destructors, allocate, is_simple_data_ptr, raw_deleter, copy_data), DeviceAllocator's
 * seven, then CUDAAllocator's own in the order declared, name() last. Read from the installed header and
 * the live vtable on the GPU machine (docs/runs/2026-12-07/torch_vtable.txt). */
struct vt_vtable {
    const char *versions; /* version prefixes, apart by spaces */
    int slots, simple, attach, name;
};
static const struct vt_vtable vt_vtables[] = {
    {"2.11", 50, 3, 44, 49},
};

/* The actions of an entry we act on. */
enum { VT_ACT_ALLOC, VT_ACT_FREE, VT_ACT_SEG_ALLOC, VT_ACT_SEG_FREE, VT_ACT_SEG_MAP, VT_ACT_SEG_UNMAP, VT_ACT_FREE_DONE, VT_ACTS };

/* Where a torch version keeps an entry's fields: byte offsets, the device's width (c10::DeviceIndex is
 * one byte; an int before), and the values of the actions (its enum). pool: offset of the MempoolId_t
 * (two 64-bit ids), 0 when the entry has none. */
struct vt_layout {
    const char *name;     /* the versions whose headers it was read from */
    const char *versions; /* version prefixes it is tried first for, apart by spaces */
    uint8_t action, device, device_bytes, addr, size, pool;
    int8_t act[VT_ACTS];
};

static const struct vt_layout vt_layouts[] = {
    /* action_ (enum), device_ (DeviceIndex), addr_, context_ (shared_ptr), stream_, size_, mempool_, time_,
     * compile_context_, user_metadata_. */
    {"2.6-2.11", "2.6 2.7 2.8 2.9 2.10 2.11", 0, 4, 1, 8, 40, 48, {0, 1, 3, 4, 5, 6, 2}},
    /* action_, device_ (int), addr_, context_, stream_, size_. */
    {"2.1-2.5", "2.1 2.2 2.3 2.4 2.5", 0, 4, 4, 8, 40, 0, {0, 1, 3, 4, 5, 6, 2}},
};
#define VT_NLAYOUTS (sizeof vt_layouts / sizeof vt_layouts[0])

enum { VT_TORCH_WATCH, VT_TORCH_PENDING, VT_TORCH_ON, VT_TORCH_OFF };
static atomic_int vt_state;
static const struct vt_layout *vt_layout; /* set before the state turns ON (release) */
static char vt_why[400];                  /* what the dump says; written before the state changes */
static char vt_version[48];
static uint64_t vt_owner;                 /* "torch" among the block owners (vt_blocks.h) */
static uintptr_t vt_c10_lo, vt_c10_hi;    /* libc10_cuda's code: the allocator's own frames */

/* On the thread that attached (the first entry comes to it), what its hooks saw made since: the range
 * of its last segment, or of the mappings an expandable segment made in a row. */
static __thread struct {
    uint64_t lo, hi;
    int device, set, attacher;
} vt_made __attribute__((tls_model("initial-exec")));

/* Torch's segments: fixed ones as they were made, an expandable one's mapped ranges merged. */
struct vt_tseg {
    uint64_t addr, size, pool[2];
    int16_t device;
    uint8_t expandable, has_pool;
};
static pthread_mutex_t vt_seg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vt_tseg *vt_segs;
static size_t vt_nsegs, vt_capsegs;
static int vt_segs_lost; /* out of memory once: the list is not whole */
/* The large pool's blocks held in fixed segments, in address order (vt_block_size). */
struct vt_span {
    uint64_t lo, hi;
};
static struct vt_span *vt_held;
static size_t vt_nheld, vt_capheld;
static int vt_held_lost; /* out of memory once: large blocks' sizes may be short since */

static void vt_torch_init(void)
{
    if (vt_cfg.torch_tracker) {
        atomic_store(&vt_hotdata.torch_watch, 1);
    } else {
        snprintf(vt_why, sizeof vt_why, "VRAMTRACE_TORCH_TRACKER=off");
        atomic_store(&vt_state, VT_TORCH_OFF);
    }
}

static void vt_decided(int state)
{
    atomic_store_explicit(&vt_state, state, memory_order_release);
    atomic_store(&vt_hotdata.torch_watch, 0);
}

__attribute__((format(printf, 1, 2))) static void vt_off(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(vt_why, sizeof vt_why, fmt, ap);
    va_end(ap);
    vt_decided(VT_TORCH_OFF);
}

int vt_torch_tracking(void)
{
    int s = atomic_load_explicit(&vt_state, memory_order_acquire);
    return s == VT_TORCH_ON ? 1 : s == VT_TORCH_PENDING ? -1 : 0;
}

static int vt_is_c10(const char *path)
{
    const char *b = strrchr(path, '/');
    return !strncmp(b ? b + 1 : path, VT_C10_LIB, sizeof VT_C10_LIB - 1);
}

/* torch/version.py beside torch/lib/libc10_cuda.so: __version__ = '2.11.0+cu130'. Only a version's
 * layout is tried first; every layout is checked the same (a file someone planted picks nothing). */
static void vt_read_version(const char *c10)
{
    snprintf(vt_version, sizeof vt_version, "unknown");
    char path[PATH_MAX];
    const char *lib = strrchr(c10, '/');
    int n = lib ? snprintf(path, sizeof path, "%.*s/../version.py", (int)(lib - c10), c10) : -1;
    if (n < 0 || (size_t)n >= sizeof path)
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    char text[4096];
    ssize_t got = -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        got = read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return;
    text[got] = 0;
    /* The line that sets it (an earlier one may list the name: __all__ = ['__version__', ...]). */
    const char *v = NULL;
    for (const char *line = text; line && !v; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, "__version__", 11)) {
            const char *q = line + 11 + strspn(line + 11, " ");
            v = *q == '=' ? q + 1 + strspn(q + 1, " ") : NULL;
        }
    if (!v || (*v != '\'' && *v != '"'))
        return;
    size_t len = strcspn(v + 1, "'\"\n");
    char word[sizeof vt_version];
    if (len == 0 || len >= sizeof word || v[1 + len] != v[0])
        return;
    memcpy(word, v + 1, len);
    word[len] = 0;
    vt_text_escape(vt_version, sizeof vt_version, word, len, 1);
}

static int vt_version_in(const char *versions)
{
    /* "2.11.0+cu130" is 2.11's, not 2.1's: a prefix must end at a dot. */
    char want[64];
    for (const char *p = versions; *p;) {
        size_t n = strcspn(p, " ");
        if (n + 2 < sizeof want) {
            snprintf(want, sizeof want, "%.*s.", (int)n, p);
            if (!strncmp(vt_version, want, n + 1))
                return 1;
        }
        p += n + (p[n] == ' ');
    }
    return 0;
}

/* What the allocator's name() says, into out: 0, or -1 where it cannot be called here or says too much.
 * It returns a std::string, as libstdc++'s C++11 ABI (torch's) lays it out: its characters, their count,
 * then 16 bytes holding them where they fit. On x86-64 a function returning one is passed the address to
 * build it at first, the object second (Itanium C++ ABI); elsewhere that address goes another way. */
static int vt_call_name(void *fn, void *self, char *out, size_t len)
{
#if defined(__x86_64__)
    struct {
        char *p;
        size_t len;
        char buf[16];
    } s = {0};
    ((void (*)(void *, void *))fn)(&s, self);
    /* A name too long for its 16 bytes is on torch's heap: copied, and left there (once a process), as
     * freeing it is its operator delete's business. */
    if (!s.p || s.len >= len)
        return -1;
    memcpy(out, s.p, s.len);
    out[s.len] = 0;
    return 0;
#else
    (void)fn, (void)self, (void)out, (void)len;
    return -1;
#endif
}

/* The allocator's attachAllocatorTraceTracker, at its slot of this version's vtable once the vtable is
 * seen to be laid out as that version's, and the object is torch's native caching allocator. NULL with why
 * filled when it cannot be used: nothing of the object is called then. */
static void *vt_find_attach(void *obj, const Dl_info *c10, char *why, size_t len)
{
    const struct vt_vtable *t = NULL;
    for (size_t i = 0; i < sizeof vt_vtables / sizeof vt_vtables[0] && !t; i++)
        if (vt_version_in(vt_vtables[i].versions))
            t = &vt_vtables[i];
    if (!t) {
        snprintf(why, len, "the CUDA allocator's vtable is not known for this version (known: %s)", vt_vtables[0].versions);
        return NULL;
    }
    void *const *vtbl = *(void *const *const *)obj;
    Dl_info si;
    if (!vtbl || !dladdr((const void *)vtbl, &si) || si.dli_fbase != c10->dli_fbase) {
        snprintf(why, len, "the CUDA allocator object's vtable is not in %s", VT_C10_LIB);
        return NULL;
    }
    for (int i = 0; i <= t->slots; i++) {
        /* A word read only where c10 maps it: the one past a vtable of fewer slots may be the mapping's end. */
        if (!dladdr((const void *)&vtbl[i], &si) || si.dli_fbase != c10->dli_fbase) {
            snprintf(why, len, "the CUDA allocator's vtable is not laid out as torch %s's (it ends at slot %d)", t->versions, i);
            return NULL;
        }
        uintptr_t f = (uintptr_t)vtbl[i];
        int code = f >= vt_c10_lo && f < vt_c10_hi;
        int simple = i == t->simple && dladdr((const void *)f, &si) && si.dli_sname && (uintptr_t)si.dli_saddr == f &&
                     !strcmp(si.dli_sname, VT_C10_SIMPLE);
        if (i < t->slots ? !(code || simple) || (i == t->simple) != simple : code) {
            snprintf(why, len, "the CUDA allocator's vtable is not laid out as torch %s's (slot %d)", t->versions, i);
            return NULL;
        }
    }
    char name[32];
    if (vt_call_name(vtbl[t->name], obj, name, sizeof name) < 0) {
        snprintf(why, len, "the CUDA allocator's name() could not be read on this machine");
        return NULL;
    }
    if (strcmp(name, "native")) {
        char safe[sizeof name * 4];
        vt_text_escape(safe, sizeof safe, name, strlen(name), 1);
        snprintf(why, len, "torch's CUDA allocator is '%s', not its native caching allocator (backend:cudaMallocAsync "
                 "or a pluggable allocator): no trace tracker; its memory is the driver's allocations", safe);
        return NULL;
    }
    return vtbl[t->attach];
}

static void vt_attach(const Dl_info *c10)
{
    uintptr_t lo, hi;
    vt_modules_code_range(c10->dli_fbase, &lo, &hi); /* its first mapping starts at its base */
    vt_c10_lo = lo;
    vt_c10_hi = hi;
    vt_stack_allocator_code(lo, hi);
    char why[sizeof vt_why];
    vt_read_version(c10->dli_fname);
    vt_real_dlsym_resolve();
    void *h = dlopen(c10->dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    void *const *slot = h && vt_real_dlsym ? vt_real_dlsym(h, VT_C10_ALLOCATOR) : NULL;
    void *obj = slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : NULL;
    if (h)
        dlclose(h);
    if (!obj) {
        vt_off("torch %s: no CUDA allocator object (%s) in %s", vt_version, "CUDACachingAllocator::allocator", VT_C10_LIB);
        return;
    }
    void *attach = vt_find_attach(obj, c10, why, sizeof why);
    if (!attach) {
        vt_off("torch %s: %s", vt_version, why);
        return;
    }
    vt_owner = vt_block_owner_of("torch");
    vt_made.attacher = 1;
    vt_made.set = 0;
    vt_torch_call_attach(attach, obj);
}

void vt_torch_look(enum vt_fn api)
{
    if (api != VT_FN_cudaMalloc && api != VT_FN_cuMemAlloc_v2 && api != VT_FN_cuMemCreate &&
        api != VT_FN_cuMemAddressReserve)
        return;
    if (atomic_load(&vt_state) != VT_TORCH_WATCH)
        return;
    /* The code of the last module this thread's allocating calls came from that is not c10's: a program
     * without torch asks dladdr once a module, not at every allocation. dladdr and what follows take the
     * loader's lock, which a dump's module map needs: while this thread holds it, it counts as holding one
     * of ours, so that exit() from a signal handler here writes no exit dump rather than wait for a
     * dumper that waits for this thread (vt_lifecycle.c). */
    static __thread uintptr_t not_lo __attribute__((tls_model("initial-exec")));
    static __thread uintptr_t not_hi __attribute__((tls_model("initial-exec")));
    uintptr_t caller = vt_stack_caller();
    if (!caller || (caller >= not_lo && caller < not_hi))
        return;
    Dl_info di;
    vt_locks_held++;
    int found = dladdr((const void *)caller, &di) && di.dli_fname;
    if (found && !vt_is_c10(di.dli_fname)) {
        uintptr_t lo, hi;
        vt_modules_code_range((const void *)caller, &lo, &hi);
        not_lo = lo;
        not_hi = hi;
        found = 0;
    }
    vt_locks_held--;
    if (!found)
        return;
    int watch = VT_TORCH_WATCH;
    if (!atomic_compare_exchange_strong(&vt_state, &watch, VT_TORCH_PENDING))
        return;
    int saved = errno;
    vt_locks_held++; /* the loader's lock, taken by what it looks up (above) */
    vt_attach(&di);
    vt_locks_held--;
    errno = saved;
}

void vt_torch_saw(uint64_t addr, uint64_t size, int device)
{
    if (atomic_load(&vt_state) != VT_TORCH_PENDING || !vt_made.attacher || !size)
        return;
    /* Mappings made in a row (an expandable segment maps page by page) are one range. */
    if (vt_made.set && addr == vt_made.hi && device == vt_made.device) {
        vt_made.hi = addr + size;
        return;
    }
    vt_made.lo = addr;
    vt_made.hi = addr + size;
    vt_made.device = device;
    vt_made.set = 1;
}

static int64_t vt_field(const void *e, unsigned off, unsigned bytes)
{
    int64_t v = 0;
    if (bytes == 1) {
        int8_t b;
        memcpy(&b, (const char *)e + off, 1);
        v = b;
    } else if (bytes == 4) {
        int32_t w;
        memcpy(&w, (const char *)e + off, 4);
        v = w;
    } else {
        memcpy(&v, (const char *)e + off, 8);
    }
    return v;
}

struct vt_entry {
    int action; /* VT_ACT_*, -1 for the others */
    uint64_t addr, size, pool[2];
    int device, has_pool;
};

static void vt_read(const void *e, const struct vt_layout *l, struct vt_entry *out)
{
    int raw = (int)vt_field(e, l->action, 4);
    out->action = -1;
    for (int a = 0; a < VT_ACTS; a++)
        if (l->act[a] == raw)
            out->action = a;
    out->device = (int)vt_field(e, l->device, l->device_bytes);
    out->addr = (uint64_t)vt_field(e, l->addr, 8);
    out->size = (uint64_t)vt_field(e, l->size, 8);
    out->has_pool = l->pool != 0;
    out->pool[0] = l->pool ? (uint64_t)vt_field(e, l->pool, 8) : 0;
    out->pool[1] = l->pool ? (uint64_t)vt_field(e, l->pool + 8, 8) : 0;
}

/* The entry is the segment just made: a fixed one is the cudaMalloc itself, an expandable one's mapping
 * ends where the mappings made in a row end. */
static int vt_matches(const struct vt_entry *e)
{
    if (!vt_made.set || (vt_made.device >= 0 && e->device != vt_made.device))
        return 0;
    if (e->action == VT_ACT_SEG_ALLOC)
        return e->addr == vt_made.lo && e->size == vt_made.hi - vt_made.lo;
    if (e->action == VT_ACT_SEG_MAP)
        return e->addr <= vt_made.lo && e->size && e->addr + e->size == vt_made.hi;
    return 0;
}

static void vt_handle(const struct vt_entry *e);

static void vt_check_first(const void *raw)
{
    const struct vt_layout *own = NULL;
    for (size_t i = 0; i < VT_NLAYOUTS && !own; i++)
        if (vt_version_in(vt_layouts[i].versions))
            own = &vt_layouts[i];
    const struct vt_layout *order[VT_NLAYOUTS + 1];
    size_t n = 0;
    if (own)
        order[n++] = own;
    for (size_t i = 0; i < VT_NLAYOUTS; i++)
        if (&vt_layouts[i] != own)
            order[n++] = &vt_layouts[i];
    struct vt_entry e;
    for (size_t i = 0; i < n; i++) {
        vt_read(raw, order[i], &e);
        if (!vt_matches(&e))
            continue;
        vt_layout = order[i];
        snprintf(vt_why, sizeof vt_why,
                 "torch %s, trace entries read as torch %s's%s, checked against its first segment (0x%llx, %llu bytes)",
                 vt_version, order[i]->name, order[i] == own ? "" : " (not this version's own)",
                 (unsigned long long)e.addr, (unsigned long long)e.size);
        vt_decided(VT_TORCH_ON);
        vt_handle(&e);
        return;
    }
    vt_read(raw, order[0], &e);
    if (vt_made.set)
        vt_off("torch %s: its first trace entry is not the segment just made (0x%llx, %llu bytes): read as torch %s's, "
               "action %d at 0x%llx, %llu bytes; torch's block history is used instead",
               vt_version, (unsigned long long)vt_made.lo, (unsigned long long)(vt_made.hi - vt_made.lo),
               order[0]->name, e.action, (unsigned long long)e.addr, (unsigned long long)e.size);
    else
        vt_off("torch %s: a trace entry came before the segment it was to be checked against; torch's block history "
               "is used instead", vt_version);
}

/* ---- torch's segments ---- */

static struct vt_tseg *vt_seg_new(void)
{
    if (vt_nsegs == vt_capsegs) {
        size_t cap = vt_capsegs ? 2 * vt_capsegs : 64;
        struct vt_tseg *n = realloc(vt_segs, cap * sizeof *n);
        if (!n) {
            vt_segs_lost = 1;
            return NULL;
        }
        vt_segs = n;
        vt_capsegs = cap;
    }
    return &vt_segs[vt_nsegs++];
}

static void vt_seg_drop(size_t i)
{
    vt_segs[i] = vt_segs[--vt_nsegs];
}

static void vt_seg_add(const struct vt_entry *e, int expandable)
{
    vt_mutex_lock(&vt_seg_mu);
    /* A mapping next to a mapped range of the same device grows it; one between two joins them. */
    size_t left = vt_nsegs, right = vt_nsegs;
    for (size_t i = 0; expandable && i < vt_nsegs; i++) {
        const struct vt_tseg *s = &vt_segs[i];
        if (!s->expandable || s->device != e->device)
            continue;
        if (s->addr + s->size == e->addr)
            left = i;
        else if (s->addr == e->addr + e->size)
            right = i;
    }
    if (left < vt_nsegs && right < vt_nsegs) {
        vt_segs[left].size += e->size + vt_segs[right].size;
        vt_seg_drop(right);
    } else if (left < vt_nsegs) {
        vt_segs[left].size += e->size;
    } else if (right < vt_nsegs) {
        vt_segs[right].addr = e->addr;
        vt_segs[right].size += e->size;
    } else {
        struct vt_tseg *s = vt_seg_new();
        if (s)
            *s = (struct vt_tseg){.addr = e->addr, .size = e->size, .device = (int16_t)e->device,
                                  .expandable = (uint8_t)expandable, .has_pool = (uint8_t)e->has_pool,
                                  .pool = {e->pool[0], e->pool[1]}};
    }
    vt_mutex_unlock(&vt_seg_mu);
}

static void vt_seg_remove(const struct vt_entry *e, int expandable)
{
    vt_mutex_lock(&vt_seg_mu);
    for (size_t i = 0; i < vt_nsegs; i++) {
        struct vt_tseg *s = &vt_segs[i];
        if (s->expandable != expandable || s->device != e->device)
            continue;
        if (!expandable) {
            if (s->addr == e->addr) {
                vt_seg_drop(i);
                break;
            }
            continue;
        }
        /* An unmapping cuts its range out of the mapped range that holds it. */
        if (e->addr < s->addr || e->addr - s->addr >= s->size)
            continue;
        uint64_t end = s->addr + s->size, cut = e->addr + e->size < end ? e->addr + e->size : end;
        struct vt_tseg right = *s;
        right.addr = cut;
        right.size = end - cut;
        s->size = e->addr - s->addr;
        if (!s->size) {
            vt_seg_drop(i);
            s = NULL;
        }
        if (right.size) {
            struct vt_tseg *r = vt_seg_new();
            if (r)
                *r = right;
        }
        break;
    }
    vt_mutex_unlock(&vt_seg_mu);
}

/* ---- a block's own size ---- */

/* Torch's entries give the size asked for; its allocated total counts the block's (c10's
 * CUDACachingAllocator.cpp, round_size and should_split): the size rounded up to 512 bytes, and where the
 * block came from a free run of a fixed segment's large pool (above 1 MiB) that would have left 1 MiB or
 * less, the whole run, which torch does not split. A free run starts where the block does (torch splits a
 * run's tail off) and ends at the next block of the segment still held (until its free completes) or at
 * the segment's end: the large pool's blocks in fixed segments are kept here for that, in address order.
 * In the small pool and in expandable segments whatever is left is split off (all sizes are multiples of
 * 512). Not followed: PYTORCH_CUDA_ALLOC_CONF's roundup_power2_divisions and max_split_size_mb, which
 * change those rules. */
#define VT_MIN_BLOCK 512ull
#define VT_SMALL_SIZE (1ull << 20)

static uint64_t vt_rounded(uint64_t size)
{
    return size < VT_MIN_BLOCK ? VT_MIN_BLOCK : (size + VT_MIN_BLOCK - 1) / VT_MIN_BLOCK * VT_MIN_BLOCK;
}

/* The first held span at or after addr, and taking one out (vt_seg_mu held). */
static size_t vt_held_from(uint64_t addr)
{
    size_t lo = 0, hi = vt_nheld;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vt_held[mid].lo < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void vt_held_drop(size_t k)
{
    memmove(&vt_held[k], &vt_held[k + 1], (--vt_nheld - k) * sizeof *vt_held);
}

static uint64_t vt_block_size(const struct vt_entry *e)
{
    uint64_t r = vt_rounded(e->size);
    if (r <= VT_SMALL_SIZE)
        return r;
    uint64_t size = r;
    vt_mutex_lock(&vt_seg_mu);
    const struct vt_tseg *seg = NULL;
    for (size_t i = 0; i < vt_nsegs && !seg; i++)
        if (!vt_segs[i].expandable && e->addr >= vt_segs[i].addr && e->addr - vt_segs[i].addr < vt_segs[i].size)
            seg = &vt_segs[i];
    if (seg) {
        size_t k = vt_held_from(e->addr);
        if (k < vt_nheld && vt_held[k].lo == e->addr) /* one whose free we did not see: it is not held */
            vt_held_drop(k);
        uint64_t end = seg->addr + seg->size;
        if (k < vt_nheld && vt_held[k].lo < end)
            end = vt_held[k].lo;
        if (end - e->addr >= r && end - e->addr - r <= VT_SMALL_SIZE)
            size = end - e->addr;
        if (vt_nheld == vt_capheld) {
            size_t cap = vt_capheld ? 2 * vt_capheld : 256;
            struct vt_span *n = realloc(vt_held, cap * sizeof *n);
            if (n) {
                vt_held = n;
                vt_capheld = cap;
            }
        }
        if (vt_nheld < vt_capheld) {
            memmove(&vt_held[k + 1], &vt_held[k], (vt_nheld - k) * sizeof *vt_held);
            vt_held[k] = (struct vt_span){e->addr, e->addr + size};
            vt_nheld++;
        } else {
            vt_held_lost = 1;
        }
    }
    vt_mutex_unlock(&vt_seg_mu);
    return size;
}

/* A block's free completed: it no longer bounds a free run. */
static void vt_block_done(const struct vt_entry *e)
{
    if (vt_rounded(e->size) <= VT_SMALL_SIZE)
        return;
    vt_mutex_lock(&vt_seg_mu);
    size_t k = vt_held_from(e->addr);
    if (k < vt_nheld && vt_held[k].lo == e->addr)
        vt_held_drop(k);
    vt_mutex_unlock(&vt_seg_mu);
}

/* ---- the entries ---- */

static void vt_block_alloc(const struct vt_entry *e)
{
    /* The stack starts at the program's call into torch: the allocator's own frames above it (which
     * path inside it found the block) are left out, or one call site would be several. */
    vt_stack_skip_lo = vt_c10_lo;
    vt_stack_skip_hi = vt_c10_hi;
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_torch_trace_alloc);
    vt_stack_skip_lo = vt_stack_skip_hi = 0;
    struct vt_alloc a;
    memset(&a, 0, sizeof a);
    a.addr = e->addr;
    a.size = vt_block_size(e);
    a.kind = VT_KIND_BLOCK;
    a.device = (int16_t)(e->device >= 0 && e->device < VT_MAX_DEVICES ? e->device : -1);
    a.x.owner = vt_owner;
    vt_call_alloc_end(&c, 1, 0, 0, &a);
}

static void vt_block_free(const struct vt_entry *e)
{
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_torch_trace_free, e->addr, VT_KIND_BLOCK);
    vt_call_free_end(&c, 1);
}

static void vt_handle(const struct vt_entry *e)
{
    switch (e->action) {
    case VT_ACT_ALLOC:
        if (e->addr)
            vt_block_alloc(e);
        break;
    case VT_ACT_FREE:
        /* torch's allocated total drops when the free is asked for, not when a stream's use of the block
         * lets it complete (FREE_COMPLETED: vt_block_done). */
        if (e->addr)
            vt_block_free(e);
        break;
    case VT_ACT_FREE_DONE:
        if (e->addr)
            vt_block_done(e);
        break;
    case VT_ACT_SEG_ALLOC:
    case VT_ACT_SEG_MAP:
        vt_seg_add(e, e->action == VT_ACT_SEG_MAP);
        break;
    case VT_ACT_SEG_FREE:
    case VT_ACT_SEG_UNMAP:
        vt_seg_remove(e, e->action == VT_ACT_SEG_UNMAP);
        break;
    default:
        break;
    }
}

void vt_torch_event(const void *raw)
{
    int state = atomic_load_explicit(&vt_state, memory_order_acquire);
    if (VT_LIKELY(state == VT_TORCH_ON)) {
        struct vt_entry e;
        vt_read(raw, vt_layout, &e);
        vt_handle(&e);
        return;
    }
    /* Pending: the first entry, on the thread that attached, decides; others' before it are dropped
     * (another device's first segment made at the same moment). */
    if (state == VT_TORCH_PENDING && vt_made.attacher) {
        int saved = errno;
        vt_check_first(raw);
        errno = saved;
    }
}

/* ---- the dump ---- */

static int vt_c10_found(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    return info->dlpi_name && vt_is_c10(info->dlpi_name);
}

void vt_torch_write(struct vt_out *f)
{
    int state = atomic_load_explicit(&vt_state, memory_order_acquire);
    /* A process without torch's CUDA library hears nothing of it. */
    if (state == VT_TORCH_WATCH && !dl_iterate_phdr(vt_c10_found, NULL))
        return;
    size_t n = 0;
    struct vt_tseg *copy = NULL;
    int lost = 0, held_lost = 0;
    if (state == VT_TORCH_ON) {
        vt_mutex_lock(&vt_seg_mu);
        n = vt_nsegs;
        copy = n ? malloc(n * sizeof *copy) : NULL;
        if (copy)
            memcpy(copy, vt_segs, n * sizeof *copy);
        lost = vt_segs_lost || (n && !copy);
        held_lost = vt_held_lost;
        vt_mutex_unlock(&vt_seg_mu);
        if (!copy)
            n = 0;
    }
    const char *word = state == VT_TORCH_ON ? "on" : state == VT_TORCH_OFF ? "off" : "waiting";
    const char *detail = state == VT_TORCH_WATCH     ? "torch's caching allocator has not asked for a segment yet"
                         : state == VT_TORCH_PENDING ? "attached; its first trace entry is not checked yet"
                                                     : vt_why;
    vt_outf(f, VT_REC_TRACKER " torch %s ", word);
    vt_out_text(f, detail, 0);
    if (lost)
        vt_outs(f, "; out of memory once: torch's segments are not all listed");
    if (held_lost)
        vt_outs(f, "; out of memory once: some large blocks may be counted at the size asked for");
    vt_outs(f, "\n");
    for (size_t i = 0; i < n; i++) {
        const struct vt_tseg *s = &copy[i];
        char pool[48];
        if (s->has_pool)
            snprintf(pool, sizeof pool, "%llu.%llu", (unsigned long long)s->pool[0], (unsigned long long)s->pool[1]);
        else
            snprintf(pool, sizeof pool, "-");
        /* Small segments are 2 MiB (fixed) or grow by 2 MiB pages (expandable); a size that is not a
         * whole number of the large pool's 20 MiB pages is one of those. */
        int small = s->expandable ? s->size % (20ull << 20) != 0 : s->size == (2ull << 20);
        const char *type = small ? "small" : s->expandable ? "-" : "large";
        vt_outf(f, VT_REC_FMT(SEGMENT), (unsigned long long)s->addr, (unsigned long long)s->size, s->device, "torch",
                type, pool, s->expandable ? "expandable" : "fixed");
    }
    free(copy);
}

/* ---- fork ---- */

static void vt_torch_prepare(void)
{
    vt_mutex_lock(&vt_seg_mu);
}

static void vt_torch_parent(void)
{
    vt_mutex_unlock(&vt_seg_mu);
}

/* The child forgets the parent's table (vt_table.c), so its segments too. The forking thread took the
 * lock in prepare and is the child's one thread: it gives it back, as the table's handler does. */
static void vt_torch_child(void)
{
    vt_nsegs = 0;
    vt_nheld = 0;
    vt_mutex_unlock(&vt_seg_mu);
}

VT_MODULE(torch, .init = vt_torch_init, .prepare = vt_torch_prepare, .parent = vt_torch_parent,
          .child = vt_torch_child);
