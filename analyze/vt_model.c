/* Building the model of a dump. Frames are named by dladdr's symbol when the dump has one, else by
 * module file name and offset from the module's load address: both are the same in every run of the
 * same binaries. Folding drops the CUDA libraries' own frames at the top of a stack and the process's
 * start-up frames at its bottom, which say nothing about who allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_frame.h"
#include "vt_hash.h"
#include "vt_labels.h"
#include "vt_model.h"

static const struct vt_symbolizer_ops *vt_symops;

static char *(*vt_demangler)(const char *mangled);

void vt_model_use_demangler(char *(*fn)(const char *mangled))
{
    vt_demangler = fn;
}

/* "sym+0xoff" as the dump records it, its symbol demangled where it is a C++ one and a demangler is given.
 * Returns 1 when it was demangled. */
static int vt_name_demangled(const char *name, char *buf, size_t len)
{
    const char *plus = strrchr(name, '+');
    size_t symlen = plus ? (size_t)(plus - name) : strlen(name);
    char sym[1024], *dem = NULL;
    if (vt_demangler && symlen > 2 && symlen < sizeof sym && name[0] == '_' && name[1] == 'Z') {
        memcpy(sym, name, symlen);
        sym[symlen] = 0;
        dem = vt_demangler(sym);
    }
    if (dem)
        snprintf(buf, len, "%s%s", dem, plus ? plus : "");
    else
        snprintf(buf, len, "%s", name);
    free(dem);
    return dem != NULL;
}

void vt_model_use_symbolizer(const struct vt_symbolizer_ops *ops)
{
    vt_symops = ops;
}

struct vt_site_ix {
    UT_hash_handle hh;
    size_t at;
};

struct vt_index {
    struct vt_site_ix *head;
    struct vt_site_ix *nodes;
    struct vt_stack_ix *by_stack; /* (stack id, kind, api) -> site: most entries share a few stacks */
    size_t last;                  /* the site the last entry added went to */
};

struct vt_stack_ix {
    UT_hash_handle hh;
    size_t at;
    char key[]; /* as long as it is: there is one per stack of a dump (50,000 in the large benchmark) */
};

static const char *vt_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}


/* Appends the frames at pc to out (more than one where calls were inlined); returns -1 when out of memory. */
/* Frame strings, kept once per model: the sites' frames point to them (a large dump's 50,000 sites have
 * 850,000 frames and a few thousand distinct ones). */
struct vt_frame_name {
    UT_hash_handle hh;
    char *s;
    const char *mangled; /* the C++ name the dump recorded for it, where s is that name demangled */
};

/* The model's one copy of the len characters at p; NULL when out of memory. */
static struct vt_frame_name *vt_intern_entry(const struct vt_model *m, const char *p, size_t len)
{
    struct vt_frame_name **names = (struct vt_frame_name **)m->names, *e;
    HASH_FIND(hh, *names, p, len, e);
    if (e)
        return e;
    if (!(e = malloc(sizeof *e)) || !(e->s = strndup(p, len))) {
        free(e);
        return NULL;
    }
    e->mangled = NULL;
    HASH_ADD_KEYPTR(hh, *names, e->s, len, e);
    return e;
}

static char *vt_intern(const struct vt_model *m, const char *p, size_t len)
{
    struct vt_frame_name *e = vt_intern_entry(m, p, len);
    return e ? e->s : NULL;
}

/* Frame string f (interned) demangled from the dump's C++ name mangled: kept with it, for JSON. */
static void vt_keep_mangled(const struct vt_model *m, const char *f, const char *mangled)
{
    struct vt_frame_name *e = vt_intern_entry(m, f, strlen(f));
    if (e && !e->mangled)
        e->mangled = vt_intern(m, mangled, strlen(mangled));
}

/* The C++ names site s's frames were demangled from (NULL where a frame was not), or none at all. 0, or
 * -1 when out of memory. */
static int vt_site_mangled(const struct vt_model *m, struct vt_site *s)
{
    struct vt_frame_name **names = (struct vt_frame_name **)m->names, *e;
    for (uint32_t i = 0; i < s->nframes; i++) {
        HASH_FIND(hh, *names, s->frames[i], strlen(s->frames[i]), e);
        if (!e || !e->mangled)
            continue;
        if (!s->mangled && !(s->mangled = calloc(s->nframes, sizeof *s->mangled)))
            return -1;
        s->mangled[i] = e->mangled;
    }
    return 0;
}

/* The same for a malloc'd string s, which it takes (NULL: out of memory). */
static char *vt_intern_own(const struct vt_model *m, char *s)
{
    char *kept = s ? vt_intern(m, s, strlen(s)) : NULL;
    free(s);
    return kept;
}

static int vt_frame_strings(const struct vt_model *m, uint64_t pc, char **out, uint32_t *n, uint32_t max)
{
    const char *sym = m->sym ? vt_symops->frames(m->sym, pc) : NULL;
    const struct vt_dumpfile *d = m->d;
    const char *name = vt_df_frame_name(d, pc);
    int cxx = name && name[0] == '_' && name[1] == 'Z';
    if (sym) {
        for (const char *p = sym; *p && *n < max;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            if (!(out[*n] = vt_intern(m, p, len)))
                return -1;
            (*n)++;
            p = nl ? nl + 1 : p + len;
            /* The outermost of the frames at pc is the function dladdr named: its C++ name kept with it. */
            if (cxx && !*p)
                vt_keep_mangled(m, out[*n - 1], name);
        }
        return 0;
    }
    char buf[1024];
    int demangled = 0;
    const struct vt_df_module *mod = vt_df_module_of(d, pc);
    if (pc == VT_PC_UNLOADED)
        snprintf(buf, sizeof buf, "%s", VT_PC_UNLOADED_NAME);
    else if (name)
        demangled = vt_name_demangled(name, buf, sizeof buf);
    else if (mod)
        snprintf(buf, sizeof buf, "%s+0x%llx", vt_basename(mod->path), (unsigned long long)(pc - mod->base));
    else
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)pc);
    if (*n >= max)
        return 0;
    if (!(out[*n] = vt_intern(m, buf, strlen(buf))))
        return -1;
    if (demangled)
        vt_keep_mangled(m, out[*n], name);
    (*n)++;
    return 0;
}

/* The name the frame will be shown with: the symbolizer's, else the one recorded in the dump. */
static const char *vt_frame_name(const struct vt_model *m, uint64_t pc)
{
    const char *sym = m->sym ? vt_symops->frames(m->sym, pc) : NULL;
    return sym ? sym : vt_df_frame_name(m->d, pc);
}

static int vt_cuda_internal(const struct vt_model *m, uint64_t pc)
{
    const struct vt_df_module *mod = vt_df_module_of(m->d, pc);
    const char *b = mod ? vt_basename(mod->path) : "";
    const char *name = vt_frame_name(m, pc);
    /* nvcc's static cudart lives in the program itself, its functions named libcudart_static_<hash>. */
    return !strncmp(b, "libcuda.so", 10) || !strncmp(b, "libcudart.so", 12) ||
           (name && !strncmp(name, "libcudart_static_", 17));
}

static int vt_startup_frame(const struct vt_model *m, uint64_t pc)
{
    const char *name = vt_frame_name(m, pc);
    const struct vt_df_module *mod = vt_df_module_of(m->d, pc);
    const char *b = mod ? vt_basename(mod->path) : "";
    if (name && (!strncmp(name, "__libc_start", 12) || !strncmp(name, "_start", 6)))
        return 1;
    return !strncmp(b, "libc.so", 7) || !strncmp(b, "ld-linux", 8);
}

/* The CUDA library a stack runs through, named by the first library module from the top: memory that
 * cuBLAS, cuDNN or NCCL take for themselves, outside any framework's allocator. */
static const char *vt_library_of(const struct vt_model *m, const struct vt_df_stack *st)
{
    static const struct { const char *prefix, *name; } libs[] = {
        {"libcublasLt", "cuBLASLt"}, {"libcublas", "cuBLAS"}, {"libcudnn", "cuDNN"}, {"libnccl", "NCCL"},
        {"libcufft", "cuFFT"}, {"libcurand", "cuRAND"}, {"libcusparse", "cuSPARSE"}, {"libcusolver", "cuSOLVER"},
        {"libnvshmem", "NVSHMEM"}, {"libcutensor", "cuTENSOR"},
    };
    for (uint32_t i = 0; st && i < st->n; i++) {
        const struct vt_df_module *mod = vt_df_module_of(m->d, st->pc[i]);
        const char *b = mod ? vt_basename(mod->path) : "";
        for (size_t k = 0; k < sizeof libs / sizeof libs[0]; k++)
            if (!strncmp(b, libs[k].prefix, strlen(libs[k].prefix)))
                return libs[k].name;
    }
    return NULL;
}

/* Whether the innermost name at pc begins with prefix (the strings are the model's). */
static int vt_pc_named(const struct vt_model *m, uint64_t pc, const char *prefix)
{
    char *names[64];
    uint32_t n = 0;
    return vt_frame_strings(m, pc, names, &n, 64) == 0 && n && !strncmp(names[0], prefix, strlen(prefix));
}

/* Frames [lo, hi) of a stack worth showing. */
static void vt_fold(const struct vt_model *m, const struct vt_df_stack *st, int full, uint32_t *lo, uint32_t *hi)
{
    *lo = 0;
    *hi = st->n;
    if (full)
        return;
    while (*lo + 1 < *hi && vt_cuda_internal(m, st->pc[*lo]))
        (*lo)++;
    while (*hi > *lo + 1 && vt_startup_frame(m, st->pc[*hi - 1]))
        (*hi)--;
}

/* A Python frame as shown: "function (file.py:line)", the file by its name (a package's __init__.py
 * with its package). */
static char *vt_py_frame_string(const struct vt_df_pyframe *f)
{
    const char *file = f->file, *b = vt_basename(file);
    if (!strcmp(b, "__init__.py") && b > file + 1) {
        const char *p = b - 1;
        while (p > file && p[-1] != '/')
            p--;
        b = p;
    }
    size_t len = strlen(f->func) + strlen(b) + 24;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, VT_FRAME_FMT, f->func, b, f->line);
    return out;
}

/* The file name of vramtrace's own Python code (lib/bridges/vt_bridge.c compiles lib/bridges/vt_bridge.py under it):
 * its memory hook for CuPy reports CuPy's blocks. */
#define VT_BRIDGE_FILE "<vramtrace bridge>"

/* Python files of the frameworks that allocate (torch, CuPy, JAX), and our own hook's: frames there say
 * how the framework got to the allocation, not who asked for it. */
static int vt_framework_file(const char *file)
{
    if (!strcmp(file, VT_BRIDGE_FILE))
        return 1;
    static const char *const dirs[] = {"/torch/", "/cupy/", "/jax/", "/jaxlib/", "/numba/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strstr(file, dirs[i]))
            return 1;
    return 0;
}

/* The frames of a Python stack worth showing: the framework's own frames at the top are left out, as the
 * CUDA libraries' frames are in native stacks. Returns -1 when out of memory. */
static int vt_py_frames(const struct vt_model *m, uint32_t pystack, int full, char **out, uint32_t *n, uint32_t max)
{
    const struct vt_df_pystack *st = pystack ? vt_df_pystack(m->d, pystack) : NULL;
    if (!st) {
        static const char none[] = "(no stack: allocated while torch's block history was off)";
        if (!(out[0] = vt_intern(m, none, sizeof none - 1)))
            return -1;
        *n = 1;
        return 0;
    }
    uint32_t lo = 0;
    while (!full && lo + 1 < st->n && vt_framework_file(vt_df_pyframe(m->d, st->frames[lo])->file))
        lo++;
    for (uint32_t i = lo; i < st->n && *n < max; i++)
        if (!(out[(*n)++] = vt_intern_own(m, vt_py_frame_string(vt_df_pyframe(m->d, st->frames[i])))))
            return -1;
    return 0;
}

/* The frames of native stack `stack`, or with python set, of Python stack `stack` (0: none recorded),
 * as strings (at most max): folded unless full, a stack that goes on in Python with its Python frames
 * in place of the interpreter's own frames and everything below them. *python_at is where the Python
 * frames begin; *torch_py how many of them at the top are the framework's own. With pool_at (a native
 * allocator's block), *pool_at is where the frames past the allocator's own begin: its library's frames
 * at the top, or when it is part of the program, the one frame that reported the block. -1 when out of
 * memory. */
static int vt_site_frames(const struct vt_model *m, uint32_t stack, int python, int full, char **frames, uint32_t *nout,
                          uint32_t max, uint32_t *python_at, uint32_t *torch_py, const struct vt_df_stack **stout,
                          uint32_t *pool_at)
{
    const struct vt_dumpfile *d = m->d;
    const struct vt_df_stack *st = stack && !python ? vt_df_stack(d, stack) : NULL;
    uint32_t n = 0, lo = 0, hi = 0;
    *torch_py = 0;
    *stout = st;
    if (st)
        vt_fold(m, st, full, &lo, &hi);
    uint32_t cut = hi;
    const struct vt_df_interpreter *in = &d->interpreter;
    if (st && st->pystack && in->present)
        for (cut = lo; cut < hi && !(st->pc[cut] >= in->lo && st->pc[cut] < in->hi); cut++)
            ;
    /* A block our own Python hook reported (CuPy's): the native frames above its Python ones are the
     * call into the library from Python (ctypes, libffi), nothing of the program's. */
    const struct vt_df_pystack *top = st && st->pystack && !full ? vt_df_pystack(d, st->pystack) : NULL;
    if (top && top->n && !strcmp(vt_df_pyframe(d, top->frames[0])->file, VT_BRIDGE_FILE))
        cut = lo;
    /* A native allocator's block is named past the allocator: past its library's frames, or when it is
     * part of the program, past the one logical frame that reported the block (inlined frames count:
     * the pool's function is often inlined into its caller). A pool that describes itself through NVTX
     * reports from NVTX's own entry point, compiled into the pool's module: one frame more. */
    uint32_t past_pool = lo, skip = 0;
    if (pool_at && st && cut - lo >= 2) {
        const struct vt_df_module *own = vt_df_module_of(d, st->pc[lo]);
        if (own && d->exe && strcmp(own->path, d->exe)) {
            past_pool = lo + 1;
            while (past_pool < cut && vt_df_module_of(d, st->pc[past_pool]) == own)
                past_pool++;
            if (past_pool >= cut)
                past_pool = lo; /* nothing but the allocator: named by its innermost frame */
        } else {
            skip = vt_pc_named(m, st->pc[lo], "nvtxMem") ? 2 : 1;
        }
    }
    if (pool_at)
        *pool_at = 0;
    for (uint32_t i = lo; i < cut && n < max; i++) {
        if (pool_at && i == past_pool && past_pool > lo)
            *pool_at = n;
        if (vt_frame_strings(m, st->pc[i], frames, &n, max) < 0)
            goto fail;
    }
    if (pool_at && skip)
        *pool_at = skip < n ? skip : 0;
    *python_at = n;
    uint32_t pystack = python ? stack : st ? st->pystack : 0;
    if (python || pystack) {
        /* Folded stacks have lost the framework's own frames at the top already; full ones are named past them. */
        const struct vt_df_pystack *ps = pystack ? vt_df_pystack(d, pystack) : NULL;
        while (full && ps && *torch_py < ps->n && vt_framework_file(vt_df_pyframe(d, ps->frames[*torch_py])->file))
            (*torch_py)++;
        if (ps && *torch_py == ps->n)
            *torch_py = 0;
        if (vt_py_frames(m, pystack, full, frames, &n, max) < 0)
            goto fail;
    }
    *nout = n;
    return 0;
fail:
    *nout = 0; /* its frames are the model's (vt_intern) */
    return -1;
}

/* Function names of two frames of one file: equal, or one the other's qualified form ("Cls.f", "f"). */
static int vt_same_function(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb)
        return vt_same_function(b, a);
    return !strcmp(a, b) || (la > lb && a[la - lb - 1] == '.' && !strcmp(a + la - lb, b));
}

/* How many of the dump's running stacks (threads' Python stacks when the bridges ran) still hold the
 * caller of the frame that allocated with Python stack `pystack` (its first frame past the framework's
 * own at the top): from that caller outward its frames are the outer end of theirs, the outer ones at the
 * same lines (the same calls still in progress), the caller in the same function at any line (it has
 * moved on from the call, not returned: what it allocated is still its request's) unless it is the
 * stack's outermost frame, which never returns (a module's code, a thread's first function): then at the
 * same line, the call still in progress. Where nothing called the allocating frame, that frame itself
 * must still run. */
static uint32_t vt_running_holds(const struct vt_dumpfile *d, uint32_t pystack)
{
    const struct vt_df_pystack *ps = pystack ? vt_df_pystack(d, pystack) : NULL;
    if (!ps || !d->nrunning)
        return 0;
    uint32_t lo = 0;
    while (lo + 1 < ps->n && vt_framework_file(vt_df_pyframe(d, ps->frames[lo])->file))
        lo++;
    if (lo + 1 < ps->n)
        lo++;
    uint32_t k = ps->n - lo, held = 0;
    for (size_t r = 0; r < d->nrunning; r++) {
        const struct vt_df_pystack *rs = vt_df_pystack(d, d->running[r].pystack);
        if (!rs || rs->n < k)
            continue;
        uint32_t off = rs->n - k, i = 0;
        for (; i < k; i++) {
            const struct vt_df_pyframe *a = vt_df_pyframe(d, ps->frames[lo + i]), *b = vt_df_pyframe(d, rs->frames[off + i]);
            if (!a || !b || strcmp(a->file, b->file) ||
                (i || k == 1 ? a->line != b->line : !vt_same_function(a->func, b->func)))
                break;
        }
        held += i == k;
    }
    return held;
}

/* Adds bytes to the site of (kind, api, frames). The frames are those of native stack `stack`, or with
 * python set, of Python stack `stack` (0: none recorded). */
static int vt_add_n(struct vt_model *m, size_t *cap, struct vt_index *ix, const char *kind, const char *api,
                    int device, uint32_t stack, int python, int role, uint64_t count, uint64_t bytes, int full)
{
    char fast[88];
    int fast_len = snprintf(fast, sizeof fast, "%c%u|%d|%s|%s", python ? 'p' : 'n', stack, role, kind, api);
    if (fast_len < 0 || (size_t)fast_len >= sizeof fast)
        fast_len = (int)strlen(fast);
    struct vt_stack_ix *sx;
    HASH_FIND(hh, ix->by_stack, fast, (size_t)fast_len, sx);
    if (sx) {
        m->sites[sx->at].count += count;
        m->sites[sx->at].bytes += bytes;
        ix->last = sx->at;
        return 0;
    }
    if (!(sx = calloc(1, sizeof *sx + (size_t)fast_len + 1)))
        return -1;
    memcpy(sx->key, fast, (size_t)fast_len);
    char *frames[1024];
    char *key = NULL;
    uint32_t n = 0, python_at = 0, torch_py = 0, pool_at = 0;
    const struct vt_df_stack *st;
    int native_block = !python && !strcmp(kind, "block");
    if (vt_site_frames(m, stack, python, full, frames, &n, 1024, &python_at, &torch_py, &st,
                       native_block ? &pool_at : NULL) < 0) {
        free(sx);
        return -1;
    }
    size_t keylen = strlen(kind) + strlen(api) + 16;
    for (uint32_t i = 0; i < n; i++)
        keylen += strlen(frames[i]) + 1;
    key = malloc(keylen);
    if (!key)
        goto fail;
    int off = snprintf(key, keylen, "%s|%s|%d|", kind, api, role);
    for (uint32_t i = 0; i < n; i++)
        off += snprintf(key + off, keylen - (size_t)off, "%s%s", i ? ";" : "", frames[i]);
    struct vt_site_ix *hit;
    HASH_FIND_STR(ix->head, key, hit);
    if (hit) {
        /* Another stack that folds to the same frames: the same site. */
        struct vt_site *s = &m->sites[hit->at];
        s->count += count;
        s->bytes += bytes;
        sx->at = hit->at;
        ix->last = hit->at;
        HASH_ADD(hh, ix->by_stack, key, (size_t)fast_len, sx);
        free(key);
        return 0;
    }
    if (m->nsites == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        struct vt_site *ns = realloc(m->sites, nc * sizeof *ns);
        if (ns)
            m->sites = ns;
        /* The index nodes may move: the hash is dropped first (its table hangs off a node) and rebuilt. */
        HASH_CLEAR(hh, ix->head);
        struct vt_site_ix *nn = ns ? realloc(ix->nodes, nc * sizeof *nn) : NULL;
        if (nn) {
            ix->nodes = nn;
            *cap = nc;
        }
        for (size_t i = 0; i < m->nsites; i++)
            HASH_ADD_KEYPTR(hh, ix->head, m->sites[i].key, strlen(m->sites[i].key), &ix->nodes[i]);
        if (!ns || !nn)
            goto fail;
    }
    struct vt_site *s = &m->sites[m->nsites];
    memset(s, 0, sizeof *s);
    s->key = key;
    snprintf(s->kind, sizeof s->kind, "%s", kind);
    snprintf(s->api, sizeof s->api, "%s", api);
    s->device = device;
    s->role = role;
    s->count = count;
    s->bytes = bytes;
    s->python_at = python_at < n ? python_at : n;
    /* Named by its first Python frame that is not the framework's own, else by its innermost frame (a
     * native allocator's block: its first frame past the allocator's). */
    s->name_at = s->python_at < n && s->python_at + torch_py < n ? s->python_at + torch_py
                 : native_block && pool_at < n                    ? pool_at
                                                                   : 0;
    s->in_flight = vt_running_holds(m->d, python ? stack : st ? st->pystack : 0);
    s->unstacked = python && !stack;
    const char *lib = vt_library_of(m, st);
    snprintf(s->library, sizeof s->library, "%s", lib ? lib : "");
    if (n && !(s->frames = malloc(n * sizeof *s->frames)))
        goto fail;
    if (n)
        memcpy(s->frames, frames, n * sizeof *frames);
    s->nframes = n;
    if (vt_site_mangled(m, s) < 0)
        goto fail;
    ix->nodes[m->nsites].at = m->nsites;
    HASH_ADD_KEYPTR(hh, ix->head, s->key, strlen(s->key), &ix->nodes[m->nsites]);
    sx->at = m->nsites;
    ix->last = m->nsites;
    HASH_ADD(hh, ix->by_stack, key, (size_t)fast_len, sx);
    m->nsites++;
    return 0;
fail:
    free(key);
    free(sx);
    return -1;
}

static int vt_add(struct vt_model *m, size_t *cap, struct vt_index *ix, const char *kind, const char *api, int device,
                  uint32_t stack, int python, int role, uint64_t bytes, int full)
{
    return vt_add_n(m, cap, ix, kind, api, device, stack, python, role, 1, bytes, full);
}

const char *vt_site_name(const struct vt_site *s)
{
    return s->label ? s->label : s->nframes ? s->frames[s->name_at] : NULL;
}

/* A site that holds memory at a peak only. */
static int vt_peak_only(const struct vt_site *s)
{
    return !s->count && !s->bytes && s->peak_bytes;
}

static int vt_site_cmp(const void *a, const void *b)
{
    const struct vt_site *x = a, *y = b;
    if (vt_peak_only(x) != vt_peak_only(y))
        return vt_peak_only(x) - vt_peak_only(y);
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->key, y->key);
}

static struct vt_dev *vt_dev_slot(struct vt_model *m, int device)
{
    int i = device >= 0 && device < VT_MAX_DEV ? device : VT_MAX_DEV;
    struct vt_dev *v = &m->dev[i];
    if (v->device == -2) {
        v->device = device >= 0 && device < VT_MAX_DEV ? device : -1;
        m->devidx[m->ndev++] = i;
    }
    return v;
}

static int vt_int_cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

void vt_libs_add(struct vt_libs *l, const char *name, uint64_t bytes)
{
    int j = 0;
    while (j < l->n && strcmp(l->v[j].name, name))
        j++;
    if (j == l->n) {
        if (l->n == VT_MAX_LIBS)
            return;
        snprintf(l->v[l->n++].name, sizeof l->v[0].name, "%s", name);
        l->v[j].bytes = 0;
    }
    l->v[j].bytes += bytes;
    for (; j > 0 && l->v[j].bytes > l->v[j - 1].bytes; j--) {
        __typeof__(l->v[0]) t = l->v[j];
        l->v[j] = l->v[j - 1];
        l->v[j - 1] = t;
    }
}

/* Per device, the memory each CUDA library took for itself ("NCCL: 1.6 GiB on device 1"), from the sites
 * that run through it. */
static void vt_libraries(struct vt_model *m)
{
    for (size_t i = 0; i < m->nsites; i++) {
        const struct vt_site *s = &m->sites[i];
        for (int k = 0; k < m->ndev; k++)
            if (m->dev[m->devidx[k]].device == s->device && s->library[0] && s->role == VT_ROLE_ALLOCATED)
                vt_libs_add(&m->dev[m->devidx[k]].libs, s->library, s->bytes);
    }
}

/* The timed calls left out as outliers are taken to have cost what the kept ones did on average. */
static uint64_t vt_self_scaled(uint64_t raw, uint64_t samples, uint64_t outliers)
{
    return samples && outliers ? (uint64_t)((double)raw * (double)(samples + outliers) / (double)samples) : raw;
}

static void vt_self_scale(struct vt_self_cost *v)
{
    v->hook_ns = vt_self_scaled(v->hook_raw, v->samples, v->outliers);
    v->py_ns = vt_self_scaled(v->py_raw, v->samples, v->outliers);
    v->native_ns = vt_self_scaled(v->native_raw, v->samples, v->outliers);
}

static struct vt_self_cost vt_self_cost(const struct vt_dumpfile *d)
{
    struct vt_self_cost v = {0};
    for (size_t i = 0; i < d->ncounters; i++) {
        if (!strcmp(d->counters[i].name, VT_CTR_SELF_HOOK_NS))
            v.has = 1;
        if (!strcmp(d->counters[i].name, VT_CTR_SELF_NATIVE_NS))
            v.has_parts = 1;
    }
    if (!v.has)
        return v;
    v.hook_raw = vt_df_counter(d, VT_CTR_SELF_HOOK_NS);
    v.py_raw = vt_df_counter(d, VT_CTR_SELF_PY_NS);
    v.native_raw = vt_df_counter(d, VT_CTR_SELF_NATIVE_NS);
    v.threads_ns = vt_df_counter(d, VT_CTR_SELF_THREADS_NS);
    v.process_ns = vt_df_counter(d, VT_CTR_PROCESS_CPU_NS);
    v.samples = vt_df_counter(d, VT_CTR_SELF_HOOK_SAMPLES);
    v.outliers = vt_df_counter(d, VT_CTR_SELF_HOOK_OUTLIERS);
    v.fake_driver = vt_df_counter(d, VT_CTR_FAKE_DRIVER) != 0;
    for (size_t i = 0; i < d->napis; i++)
        v.calls += d->apis[i].calls;
    vt_self_scale(&v);
    return v;
}

struct vt_self_cost vt_self_cost_between(const struct vt_self_cost *old, const struct vt_self_cost *new)
{
    struct vt_self_cost v = {0};
    if (!old->has || !new->has || new->process_ns < old->process_ns || new->hook_raw < old->hook_raw ||
        new->threads_ns < old->threads_ns || new->calls < old->calls)
        return v;
    v = (struct vt_self_cost){.has = 1, .hook_raw = new->hook_raw - old->hook_raw,
                              .threads_ns = new->threads_ns - old->threads_ns,
                              .process_ns = new->process_ns - old->process_ns, .calls = new->calls - old->calls,
                              .fake_driver = old->fake_driver || new->fake_driver};
    if (old->has_parts && new->has_parts && new->py_raw >= old->py_raw && new->native_raw >= old->native_raw) {
        v.has_parts = 1;
        v.py_raw = new->py_raw - old->py_raw;
        v.native_raw = new->native_raw - old->native_raw;
    }
    if (new->samples >= old->samples && new->outliers >= old->outliers) {
        v.samples = new->samples - old->samples;
        v.outliers = new->outliers - old->outliers;
    }
    vt_self_scale(&v);
    return v;
}

/* The overhead's parts that the context's limits account for (the limits record), and the rest. */
static void vt_overhead_parts(const struct vt_dumpfile *d, struct vt_dev *v)
{
    const struct vt_df_device *dd = NULL;
    for (size_t i = 0; i < d->ndevices; i++)
        if (d->devices[i].ordinal == v->device && d->devices[i].has_limits)
            dd = &d->devices[i];
    v->local_memory = v->malloc_heap = v->printf_fifo = v->internals = VT_DF_UNKNOWN;
    if (!(v->has_limits = dd != NULL))
        return;
    v->stack_per_thread = dd->stack_per_thread;
    v->resident_threads = dd->resident_threads;
    if (dd->stack_per_thread != VT_DF_UNKNOWN && dd->resident_threads != VT_DF_UNKNOWN)
        v->local_memory = dd->stack_per_thread * dd->resident_threads;
    v->malloc_heap = dd->malloc_heap;
    v->printf_fifo = dd->printf_fifo;
    uint64_t parts = 0;
    const uint64_t each[] = {v->local_memory, v->malloc_heap, v->printf_fifo};
    for (size_t i = 0; i < 3; i++)
        parts += each[i] != VT_DF_UNKNOWN ? each[i] : 0;
    if (v->overhead != VT_DF_UNKNOWN && v->overhead >= parts)
        v->internals = v->overhead - parts;
}

/* What building needs between its steps: the index of the sites being added, and the settings. */
/* Entries of one site held by one thread (vt_tally_entry). */
struct vt_tally {
    UT_hash_handle hh;
    uint64_t key; /* site << 32 | thread id */
    uint32_t n;
};

/* A thread alive at the dump, as a running record gives it. */
struct vt_live {
    int tid;
    uint64_t at; /* looked at no later than this (VT_DF_UNKNOWN: not said) */
};

struct vt_build {
    struct vt_index ix;
    struct vt_tally *tally;
    struct vt_live *live; /* the threads the dump's running records give, by id; NULL: none given */
    size_t nlive;
    size_t cap;
    int full;
    int fallback; /* the device of entries that give none, where only one is in use; else -1 */
};

/* Step 1, the devices: a slot for each, the dump's figures and the pools' totals on it. */
static void vt_model_devices(struct vt_model *m, struct vt_build *b)
{
    const struct vt_dumpfile *d = m->d;
    for (int i = 0; i <= VT_MAX_DEV; i++) {
        m->dev[i] = (struct vt_dev){.device = -2, .total = VT_DF_UNKNOWN, .free = VT_DF_UNKNOWN,
                                    .process_used = VT_DF_UNKNOWN, .cached = VT_DF_UNKNOWN,
                                    .releasable = VT_DF_UNKNOWN, .fragmented = VT_DF_UNKNOWN,
                                    .overhead = VT_DF_UNKNOWN};
    }
    /* Entries whose device was not known when written (stream-ordered ones in exit dumps) belong to
     * the only device in use, when there is just one. */
    int only = -1, several = 0;
    for (size_t i = 0; i < d->ndevices; i++) {
        several |= only >= 0 && only != d->devices[i].ordinal;
        only = d->devices[i].ordinal;
    }
    for (size_t i = 0; i < d->nallocs; i++) {
        int dv = d->allocs[i].device;
        if (dv >= 0) {
            several |= only >= 0 && only != dv;
            only = dv;
        }
    }
    b->fallback = several ? -1 : only;

    for (size_t i = 0; i < d->ndevices; i++) {
        struct vt_dev *v = vt_dev_slot(m, d->devices[i].ordinal);
        v->total = d->devices[i].total;
        v->free = d->devices[i].free;
        v->process_used = d->devices[i].process_used;
        v->graph_reserved = d->devices[i].graph_reserved != VT_DF_UNKNOWN ? d->devices[i].graph_reserved : 0;
        v->graph_used = d->devices[i].graph_used != VT_DF_UNKNOWN ? d->devices[i].graph_used : 0;
        v->peak = d->devices[i].reserved_peak; /* before version 8, when alone */
        v->peak_time_ns = VT_DF_UNKNOWN;
    }
    for (size_t i = 0; i < d->npeaks; i++) {
        struct vt_dev *v = vt_dev_slot(m, d->peaks[i].device);
        v->peak = d->peaks[i].bytes;
        v->peak_time_ns = d->peaks[i].time_ns;
        v->peak_sites = 1;
    }
    for (size_t i = 0; i < d->npools; i++) {
        const struct vt_df_pool *p = &d->pools[i];
        if (p->reserved == VT_DF_UNKNOWN || p->used == VT_DF_UNKNOWN)
            continue;
        struct vt_dev *v = vt_dev_slot(m, p->device);
        v->pool_reserved += p->reserved;
        v->pool_used += p->used;
        v->pools_known = 1;
    }
}

/* The threads alive at the dump, as its running records name them (version 7): a thread that is alive
 * may still hold its last request's memory in its frames. 0, or -1 when out of memory. */
static int vt_live_threads(const struct vt_dumpfile *d, struct vt_build *b)
{
    for (size_t i = 0; i < d->nrunning; i++)
        if (d->running[i].tid > 0) {
            if (!b->live && !(b->live = malloc(d->nrunning * sizeof *b->live)))
                return -1;
            b->live[b->nlive++] = (struct vt_live){d->running[i].tid, d->running[i].at};
        }
    if (b->live)
        qsort(b->live, b->nlive, sizeof *b->live, vt_int_cmp); /* by tid, its first member */
    return 0;
}

/* Stamps and the bridge's clock are both CLOCK_MONOTONIC, the stamps through the TSC scaled at the dump
 * (lib/core/vt_clock.h, exact then but for the cores' skew, well under a microsecond where the TSC is
 * invariant). An entry this close to its thread's look is taken as made after it: in flight rather than
 * held. */
#define VT_YOUNG_SLACK_NS 20000ull

/* One more entry of the last site added, by thread tid at time_ns: the most any one thread holds there,
 * and whether every entry there is held by a thread alive at the dump. An entry made after its thread
 * was looked at is a request the dump did not see start (young): in flight, and no thread's hold.
 * 0, or -1 when out of memory. */
static int vt_tally_entry(struct vt_model *m, struct vt_build *b, int tid, uint64_t time_ns)
{
    struct vt_site *s = &m->sites[b->ix.last];
    const struct vt_live *live = tid > 0 && b->live ? bsearch(&tid, b->live, b->nlive, sizeof *b->live, vt_int_cmp) : NULL;
    s->tallied++;
    s->dead_threads += !live;
    if (live && live->at != VT_DF_UNKNOWN && time_ns + VT_YOUNG_SLACK_NS > live->at) {
        s->young++;
        return 0;
    }
    if (tid <= 0)
        return 0;
    uint64_t key = (uint64_t)b->ix.last << 32 | (uint32_t)tid;
    struct vt_tally *t;
    HASH_FIND(hh, b->tally, &key, sizeof key, t);
    if (!t) {
        if (!(t = calloc(1, sizeof *t)))
            return -1;
        t->key = key;
        HASH_ADD(hh, b->tally, key, sizeof key, t);
    }
    if (++t->n > s->max_per_thread)
        s->max_per_thread = t->n;
    return 0;
}

/* Whether an entry of reserved memory on device dv, made at time_ns, was live at the device's peak (it
 * still is), and so counts at its site there. */
static int vt_at_peak(const struct vt_model *m, int dv, int kind, uint64_t time_ns)
{
    if (dv < 0 || dv >= VT_MAX_DEV || !vt_kind_reserved((enum vt_kind)kind))
        return 0;
    const struct vt_dev *v = &m->dev[dv];
    return v->peak_sites && (v->peak_time_ns == VT_DF_UNKNOWN || time_ns <= v->peak_time_ns);
}

static void vt_peak_add(struct vt_model *m, struct vt_build *b, int dv, uint64_t bytes)
{
    m->sites[b->ix.last].peak_bytes += bytes;
    m->dev[dv].peak_attributed += bytes;
}

/* Step 2b, memory live at each device's peak and freed since (version 8): onto the site its stack, kind
 * and API make, as a live entry of it would be (whatever its role there), else a site of its own that
 * holds no live memory. 0, or -1. */
static int vt_model_peak_freed(struct vt_model *m, struct vt_build *b)
{
    const struct vt_dumpfile *d = m->d;
    m->peak_lost = vt_df_counter(d, VT_CTR_PEAK_LOST) != 0;
    for (size_t i = 0; i < d->npeak_freed; i++) {
        const struct vt_df_peak_freed *f = &d->peak_freed[i];
        if (f->device >= VT_MAX_DEV || !m->dev[f->device].peak_sites)
            continue;
        const char *kind = vt_kind_word((enum vt_kind)f->kind);
        int found = 0;
        for (int role = 0; role < VT_ROLE_COUNT && !found; role++) {
            char fast[88];
            int n = snprintf(fast, sizeof fast, "n%u|%d|%s|%s", f->stack, role, kind, f->api);
            struct vt_stack_ix *sx;
            if (n > 0 && (size_t)n < sizeof fast) {
                HASH_FIND(hh, b->ix.by_stack, fast, (size_t)n, sx);
                if (sx) {
                    b->ix.last = sx->at;
                    found = 1;
                }
            }
        }
        if (!found && vt_add_n(m, &b->cap, &b->ix, kind, f->api, f->device, f->stack, 0, VT_ROLE_ALLOCATED, 0, 0, b->full) < 0)
            return -1;
        vt_peak_add(m, b, f->device, f->bytes);
    }
    return 0;
}

/* Step 2, the entries: each allocation, physical handle, allocator block and held buffer onto its
 * site and its device's sums, and each pool's free memory as a cache pseudo-site. 0, or -1. */
static int vt_model_entries(struct vt_model *m, struct vt_build *b)
{
    const struct vt_dumpfile *d = m->d;
    struct vt_index *ix = &b->ix;
    size_t *cap = &b->cap;
    int full = b->full, fallback = b->fallback;
    int r = 0;
    for (size_t i = 0; i < d->nallocs && !r; i++) {
        const struct vt_df_alloc *a = &d->allocs[i];
        int dv = a->device >= 0 ? a->device : fallback;
        int role = m->views.alloc_role[i];
        if (a->kind == VT_KIND_VA) {
            m->va_reserved += a->size;
            continue;
        }
        if (a->kind == VT_KIND_VMM_MAP)
            continue; /* the memory is counted at its physical handle */
        if (a->kind == VT_KIND_IMPORTED || a->kind == VT_KIND_EXTERNAL) {
            /* Another owner's memory: shown as a site, counted in no device's reserved or allocated. */
            *(a->kind == VT_KIND_IMPORTED ? &m->imported : &m->external) += a->size;
            r = vt_add(m, cap, ix, vt_kind_word(a->kind), a->api, -1, a->stack, 0, VT_ROLE_IMPORTED, a->size, full);
            continue;
        }
        if (a->kind == VT_KIND_HOST) {
            m->host_pinned += a->size;
            dv = -1;
        } else if (a->kind == VT_KIND_HOST_REG) {
            m->host_registered += a->size;
            dv = -1;
        } else {
            struct vt_dev *v = vt_dev_slot(m, dv);
            if (a->kind == VT_KIND_DEVICE || a->kind == VT_KIND_ARRAY)
                v->plain += a->size;
            else if (a->kind == VT_KIND_MANAGED)
                v->managed += a->size;
            else if (a->kind == VT_KIND_ASYNC)
                v->async_live += a->size;
            else if (a->kind == VT_KIND_GRAPH)
                v->graph_live += a->size;
        }
        r = vt_add(m, cap, ix, vt_kind_word(a->kind), a->api, dv, a->stack, 0, role, a->size, full);
        if (!r)
            r = vt_tally_entry(m, b, a->tid, a->time_ns);
        if (!r && vt_at_peak(m, dv, a->kind, a->time_ns))
            vt_peak_add(m, b, dv, a->size);
    }
    for (size_t i = 0; i < d->nphys && !r; i++) {
        const struct vt_df_phys *p = &d->phys[i];
        if (p->kind == VT_KIND_PHYS)
            vt_dev_slot(m, p->device)->vmm += p->size;
        else
            m->host_pinned += p->size;
        r = vt_add(m, cap, ix, vt_kind_word(p->kind), p->api, p->device, p->stack, 0, m->views.phys_role[i], p->size, full);
        if (!r && vt_at_peak(m, p->device, p->kind, p->time_ns))
            vt_peak_add(m, b, p->device, p->size);
    }
    /* Torch's live blocks, by their Python stacks. */
    for (size_t i = 0; i < d->nblocks && !r; i++) {
        const struct vt_df_block *b = &d->blocks[i];
        const struct vt_df_segment *sg = &d->segments[b->segment];
        if (b->state == VT_BLOCK_ACTIVE)
            r = vt_add(m, cap, ix, "block", sg->allocator, sg->device, b->pystack, 1, VT_ROLE_ALLOCATED, b->size, full);
    }
    /* Live memory an allocator reports by call site only (JAX's buffers). */
    for (size_t i = 0; i < d->nheld && !r; i++) {
        const struct vt_df_held *h = &d->held[i];
        if (h->count && h->bytes)
            r = vt_add_n(m, cap, ix, "block", h->allocator, h->device, h->pystack, 1, VT_ROLE_ALLOCATED, h->count,
                         h->bytes, full);
    }
    /* A pool's free memory is cache: one pseudo-site per device and pool kind, named so that it
     * matches across dumps and runs (pool handles do not). */
    for (size_t i = 0; i < d->npools && !r; i++) {
        const struct vt_df_pool *p = &d->pools[i];
        if (p->reserved == VT_DF_UNKNOWN || p->used == VT_DF_UNKNOWN || p->reserved < p->used)
            continue;
        char api[48];
        snprintf(api, sizeof api, "%s-pool-device-%d", p->is_default ? "default" : "explicit", p->device);
        r = vt_add(m, cap, ix, "pool_cache", api, p->device, 0, 0, VT_ROLE_CACHE, p->reserved - p->used, full);
    }
    return r;
}

/* Step 3, the accounting of each device: reserved, allocated, cached (releasable, fragmented) and the
 * overhead, from its sums and the caching allocators' views. */
static void vt_model_accounting(struct vt_model *m)
{
    const struct vt_dumpfile *d = m->d;
    for (int k = 0; k < m->ndev; k++) {
        struct vt_dev *v = &m->dev[m->devidx[k]];
        /* Pools' own figures when the dump has them; at exit, the live stream-ordered entries. */
        uint64_t pres = v->pools_known ? v->pool_reserved : v->async_live;
        uint64_t pused = v->pools_known ? v->pool_used : v->async_live;
        /* The driver's graph "used" memory stays associated with the graphs after their allocations are
         * freed, until trimmed (H200): from version 5, where graph nodes are entries, the live ones are
         * the allocated part and the rest of the graph pool is cache. */
        uint64_t gused = v->graph_used;
        if (d->version >= 5)
            gused = v->graph_live < v->graph_reserved ? v->graph_live : v->graph_reserved;
        v->reserved = v->plain + v->vmm + pres + v->graph_reserved;
        v->allocated = v->plain + v->vmm + pused + gused;
        v->pool_cached = pres - pused + (v->graph_reserved - gused);
        /* Cache is known only where an allocator's view is: the pools for stream-ordered memory, and
         * the caching allocators' views (vt_views.c), which take their segments out of allocated and
         * put their live blocks in. Without a view a caching allocator may hold any part of the plain
         * and VMM memory as cache: that part is unknown, not zero. */
        if (!v->plain && !v->vmm)
            v->cached = v->pool_cached;
        uint64_t seg_cached = 0, releasable = 0, fragmented = 0;
        int async_view = 0;
        for (size_t i = 0; i < m->views.n; i++) {
            const struct vt_view *w = &m->views.v[i];
            if (w->device != v->device)
                continue;
            v->has_views = 1;
            if (!strcmp(w->backend, "cudaMallocAsync")) {
                async_view = 1;
                continue;
            }
            /* Clamped: a damaged dump must not wrap the figures around. */
            /* Its segments (and the driver allocations it made that its snapshot missed) leave allocated;
             * the blocks live in them come back. */
            uint64_t held = w->matched_bytes + w->orphan_bytes;
            uint64_t in_use = w->allocated_in_matched < w->matched_bytes ? w->allocated_in_matched : w->matched_bytes;
            /* The allocator's own total, read after its block list: blocks the list caught that the total
             * no longer counts were an operator's temporaries, freed before our table was read. */
            if (w->own_allocated != VT_DF_UNKNOWN && w->own_allocated < in_use)
                in_use = w->own_allocated;
            uint64_t out = held < v->allocated ? held : v->allocated;
            v->allocated = v->allocated - out + in_use;
            seg_cached += out - (in_use < out ? in_use : out);
            releasable = releasable == VT_DF_UNKNOWN || w->releasable == VT_DF_UNKNOWN ? VT_DF_UNKNOWN
                                                                                      : releasable + w->releasable;
            fragmented = fragmented == VT_DF_UNKNOWN || w->fragmented == VT_DF_UNKNOWN ? VT_DF_UNKNOWN
                                                                                      : fragmented + w->fragmented;
        }
        if (v->has_views) {
            v->cached = seg_cached + v->pool_cached;
            v->releasable = releasable == VT_DF_UNKNOWN ? VT_DF_UNKNOWN : releasable + (async_view ? v->pool_cached : 0);
            v->fragmented = fragmented;
        }
        /* What nvidia-smi shows beyond the memory this process holds: context, module code, stacks,
         * driver internals. Unknown without NVML, and unknown rather than negative if NVML counts less. */
        if (v->process_used != VT_DF_UNKNOWN && v->process_used >= v->reserved)
            v->overhead = v->process_used - v->reserved;
        vt_overhead_parts(d, v);
    }
}

/* Step 4, the failed requests: a site each, never counted as memory. 0, or -1. */
static int vt_model_failed(struct vt_model *m, int full)
{
    const struct vt_dumpfile *d = m->d;
    if (d->nfailed && !(m->failed = calloc(d->nfailed, sizeof *m->failed)))
        return -1;
    for (size_t i = 0; i < d->nfailed; i++) {
        const struct vt_df_failed *f = &d->failed[i];
        struct vt_site *s = &m->failed[i];
        char *frames[1024];
        uint32_t n = 0, torch_py = 0;
        const struct vt_df_stack *st;
        snprintf(s->kind, sizeof s->kind, "failed");
        snprintf(s->api, sizeof s->api, "%s", f->api);
        s->device = f->device;
        s->count = f->count;
        s->bytes = f->size;
        m->nfailed++;
        if (vt_site_frames(m, f->stack, 0, full, frames, &n, 1024, &s->python_at, &torch_py, &st, NULL) < 0 ||
            (n && !(s->frames = malloc(n * sizeof *s->frames)))) {
            return -1;
        }
        if (n)
            memcpy(s->frames, frames, n * sizeof *frames);
        s->nframes = n;
        if (vt_site_mangled(m, s) < 0)
            return -1;
        s->name_at = s->python_at < n && s->python_at + torch_py < n ? s->python_at + torch_py : 0;
        const char *lib = vt_library_of(m, st);
        snprintf(s->library, sizeof s->library, "%s", lib ? lib : "");
    }
    return 0;
}

/* Step 5, each site's name where several would share one (vt_labels.h), the sites in order (largest first),
 * their libraries, and the index by key for look-ups. 0, or -1. */
static int vt_model_finish(struct vt_model *m)
{
    if (vt_labels_part(m->sites, m->nsites) < 0 || vt_labels_part(m->failed, m->nfailed) < 0)
        return -1;
    if (m->nsites)
        qsort(m->sites, m->nsites, sizeof *m->sites, vt_site_cmp);
    /* Sites of a peak only go last, named with the others but out of the lists of live memory. */
    while (m->nsites && vt_peak_only(&m->sites[m->nsites - 1])) {
        m->nsites--;
        m->npeak_only++;
    }
    vt_libraries(m);
    /* The index is rebuilt over the sorted sites for look-ups by key. */
    struct vt_index *final = calloc(1, sizeof *final);
    if (!final || (m->nsites && !(final->nodes = calloc(m->nsites, sizeof *final->nodes)))) {
        free(final);
        return -1;
    }
    for (size_t i = 0; i < m->nsites; i++) {
        final->nodes[i].at = i;
        HASH_ADD_KEYPTR(hh, final->head, m->sites[i].key, strlen(m->sites[i].key), &final->nodes[i]);
    }
    m->index = final;
    return vt_hash_oom ? -1 : 0; /* an element some table could not take: the model is not whole */
}

int vt_model_build(const struct vt_dumpfile *d, int flags, struct vt_model *m)
{
    vt_hash_oom = 0;
    memset(m, 0, sizeof *m);
    m->d = d;
    if (!(m->names = calloc(1, sizeof(struct vt_frame_name *))))
        return -1;
    m->self = vt_self_cost(d);
    if (!(flags & VT_MODEL_NO_SYMBOLS) && vt_symops)
        m->sym = vt_symops->open(d);
    struct vt_build b = {.ix = {NULL, NULL, NULL, 0}, .full = (flags & VT_MODEL_FULL_STACKS) != 0};
    vt_model_devices(m, &b);
    int r = vt_views_build(d, &m->views);
    if (!r)
        r = vt_live_threads(d, &b);
    if (!r)
        r = vt_model_entries(m, &b);
    if (!r)
        r = vt_model_peak_freed(m, &b);
    if (!r) {
        vt_model_accounting(m);
        r = vt_model_failed(m, b.full);
    }
    qsort(m->devidx, (size_t)m->ndev, sizeof m->devidx[0], vt_int_cmp);
    HASH_CLEAR(hh, b.ix.head);
    free(b.ix.nodes);
    struct vt_tally *t, *tt;
    HASH_ITER(hh, b.tally, t, tt) {
        HASH_DEL(b.tally, t);
        free(t);
    }
    /* A site's entries all held by threads alive at the dump (vt_site.by_live_threads). */
    for (size_t i = 0; i < m->nsites; i++)
        m->sites[i].by_live_threads = b.live && m->sites[i].tallied == m->sites[i].count && !m->sites[i].dead_threads;
    free(b.live);
    struct vt_stack_ix *sx, *sxt;
    HASH_ITER(hh, b.ix.by_stack, sx, sxt) {
        HASH_DEL(b.ix.by_stack, sx);
        free(sx);
    }
    if (r || vt_model_finish(m) < 0 || vt_result_build(d, &m->result) < 0) {
        vt_model_free(m);
        return -1;
    }
    vt_result_coverage(&m->result, m->sites, m->nsites);
    return 0;
}

int vt_model_keeps_cache(const struct vt_model *m)
{
    for (size_t i = 0; i < m->nsites; i++)
        if ((m->sites[i].role == VT_ROLE_CACHE || m->sites[i].role == VT_ROLE_SEGMENT) && m->sites[i].bytes)
            return 1;
    return 0;
}

const char *vt_site_class(const struct vt_site *s)
{
    return s->role == VT_ROLE_CACHE      ? "cache"
           : s->role == VT_ROLE_SEGMENT  ? "segment"
           : s->role == VT_ROLE_IMPORTED ? "imported"
                                         : "allocated";
}

static void vt_sites_free(struct vt_site *sites, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(sites[i].frames); /* the strings are the model's (vt_intern) */
        free(sites[i].mangled);
        free(sites[i].label);
        free(sites[i].key);
    }
    free(sites);
}

void vt_model_shed(struct vt_model *m)
{
    free(m->views.alloc_role);
    free(m->views.phys_role);
    m->views.alloc_role = m->views.phys_role = NULL;
    if (m->sym)
        vt_symops->close(m->sym); /* the sites have their frames' names */
    m->sym = NULL;
}

void vt_model_free(struct vt_model *m)
{
    vt_sites_free(m->sites, m->nsites + m->npeak_only);
    vt_sites_free(m->failed, m->nfailed);
    struct vt_frame_name **names = (struct vt_frame_name **)m->names, *e, *tmp;
    if (names) {
        HASH_ITER(hh, *names, e, tmp) {
            HASH_DEL(*names, e);
            free(e->s);
            free(e);
        }
        free(names);
    }
    vt_views_free(&m->views);
    vt_result_free(&m->result);
    if (m->sym)
        vt_symops->close(m->sym);
    struct vt_index *ix = m->index;
    if (ix) {
        HASH_CLEAR(hh, ix->head);
        free(ix->nodes);
        free(ix);
    }
    memset(m, 0, sizeof *m);
}

const struct vt_site *vt_model_find(const struct vt_model *m, const char *key)
{
    const struct vt_index *ix = m->index;
    struct vt_site_ix *hit = NULL;
    if (ix)
        HASH_FIND_STR(ix->head, key, hit);
    return hit ? &m->sites[hit->at] : NULL;
}

static int vt_peak_cmp(const void *a, const void *b)
{
    const struct vt_site *x = *(const struct vt_site *const *)a, *y = *(const struct vt_site *const *)b;
    if (x->peak_bytes != y->peak_bytes)
        return x->peak_bytes < y->peak_bytes ? 1 : -1;
    return strcmp(x->key, y->key);
}

size_t vt_model_peak_sites(const struct vt_model *m, int dev, const struct vt_site **out, size_t max)
{
    size_t n = 0, total = m->nsites + m->npeak_only;
    const struct vt_site **all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        return 0;
    for (size_t i = 0; i < total; i++)
        if (m->sites[i].peak_bytes && m->sites[i].device == dev)
            all[n++] = &m->sites[i];
    qsort(all, n, sizeof *all, vt_peak_cmp);
    if (out && max)
        memcpy(out, all, (n < max ? n : max) * sizeof *out);
    free(all);
    return n;
}

const struct vt_dev *vt_model_dev(const struct vt_model *m, int dev)
{
    for (int k = 0; k < m->ndev; k++)
        if (m->dev[m->devidx[k]].device == dev)
            return &m->dev[m->devidx[k]];
    return NULL;
}
