/* The CPython API, looked up in the global scope once (the interpreter exports it, whether it is
 * linked into the executable or loaded as libpython). Only public entry points are used; a process
 * without them simply has no bridges. The bridge's own Python code (lib/bridges/vt_bridge.py, built in as
 * vt_bridge_py) is compiled on first use into a namespace of its own, so the program's modules and
 * globals are never touched. Reading a thread's frames needs the frame API of 3.9 and later; the
 * versions vramtrace knows are 3.9 to 3.13, any other is left alone (said once). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_bridge_py.h"
#include "vt_hot.h"
#include "vt_pylayout.h"
#include "vt_python.h"

typedef struct vt_pyobject vt_pyobject; /* PyObject, opaque */

static struct {
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    int (*gil_check)(void);
    vt_pyobject *(*compile)(const char *, const char *, int);
    vt_pyobject *(*eval_code)(vt_pyobject *, vt_pyobject *, vt_pyobject *);
    vt_pyobject *(*dict_new)(void);
    vt_pyobject *(*dict_get)(vt_pyobject *, const char *);
    int (*dict_set)(vt_pyobject *, const char *, vt_pyobject *);
    vt_pyobject *(*builtins)(void);
    vt_pyobject *(*call)(vt_pyobject *, vt_pyobject *);
    const char *(*utf8)(vt_pyobject *, long *);
    vt_pyobject *(*err_occurred)(void);
    void (*err_clear)(void);
    void (*decref)(vt_pyobject *);
    int (*pending)(int (*)(void *), void *);
    /* Frames (3.9+). */
    const char *(*version)(void);
    void *(*ts_current)(void);
    void *(*ts_this)(void);
    void *(*ts_interp)(void *);
    void *(*interp_main)(void);
    void *(*thread_head)(void *);
    void *(*thread_next)(void *);
    vt_pyobject *(*ts_frame)(void *);
    vt_pyobject *(*frame_back)(vt_pyobject *);
    vt_pyobject *(*frame_code)(vt_pyobject *);
    int (*frame_line)(vt_pyobject *);
    vt_pyobject *(*getattr)(vt_pyobject *, const char *);
    void (*err_fetch)(vt_pyobject **, vt_pyobject **, vt_pyobject **);
    void (*err_restore)(vt_pyobject *, vt_pyobject *, vt_pyobject *);
    void (*incref)(vt_pyobject *);
    void *(*save_thread)(void);
    void (*restore_thread)(void *);
    int (*code_watch)(int (*)(int, void *)); /* 3.12+ */
    int (*gc_disable)(void); /* 3.10+ */
    int (*gc_enable)(void);
    /* The frame walk (vt_pywalk.h): the types it checks objects against, and what tells a build whose
     * objects are laid out otherwise (reference debugging). */
    void *code_type, *unicode_type, *bytes_type, *runtime;
    void *ref_debug, *trace_refs;
} vt_py;

static pthread_once_t vt_py_once = PTHREAD_ONCE_INIT;
static int vt_py_found;
static int vt_py_frames_ok, vt_py_minor; /* the frame API is there and the version is one we know */
static const char *vt_py_frames_why;    /* why not, when not */
#define VT_STR_(x) #x
#define VT_STR(x) VT_STR_(x)
static char vt_py_ver[32];
static vt_pyobject *vt_py_ns; /* the bridge's namespace: compiled once, kept for the process's life */

#define VT_PY_START 257 /* Py_file_input */

/* What each entry point is needed for: the bridges, reading frames, or neither (optional). */
enum { VT_PY_OPTIONAL, VT_PY_BRIDGES, VT_PY_FRAMES };

static void vt_py_resolve(void)
{
    /* alt: the name of older versions (3.13 made these public; before, only the underscored name). */
    struct { void **slot; const char *name, *alt; int need; } want[] = {
        {(void **)&vt_py.is_initialized, "Py_IsInitialized", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.gil_ensure, "PyGILState_Ensure", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.gil_release, "PyGILState_Release", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.gil_check, "PyGILState_Check", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.compile, "Py_CompileString", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.eval_code, "PyEval_EvalCode", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.dict_new, "PyDict_New", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.dict_get, "PyDict_GetItemString", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.dict_set, "PyDict_SetItemString", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.builtins, "PyEval_GetBuiltins", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.call, "PyObject_CallObject", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.utf8, "PyUnicode_AsUTF8AndSize", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.err_occurred, "PyErr_Occurred", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.err_clear, "PyErr_Clear", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.decref, "Py_DecRef", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.pending, "Py_AddPendingCall", NULL, VT_PY_BRIDGES},
        {(void **)&vt_py.is_finalizing, "Py_IsFinalizing", "_Py_IsFinalizing", VT_PY_OPTIONAL},
        {(void **)&vt_py.version, "Py_GetVersion", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.ts_current, "PyThreadState_GetUnchecked", "_PyThreadState_UncheckedGet", VT_PY_FRAMES},
        {(void **)&vt_py.ts_this, "PyGILState_GetThisThreadState", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.ts_interp, "PyThreadState_GetInterpreter", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.interp_main, "PyInterpreterState_Main", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.thread_head, "PyInterpreterState_ThreadHead", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.thread_next, "PyThreadState_Next", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.ts_frame, "PyThreadState_GetFrame", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.frame_back, "PyFrame_GetBack", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.frame_code, "PyFrame_GetCode", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.frame_line, "PyFrame_GetLineNumber", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.getattr, "PyObject_GetAttrString", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.err_fetch, "PyErr_Fetch", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.err_restore, "PyErr_Restore", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.incref, "Py_IncRef", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.save_thread, "PyEval_SaveThread", NULL, VT_PY_FRAMES},
        {(void **)&vt_py.restore_thread, "PyEval_RestoreThread", NULL, VT_PY_FRAMES},
        /* 3.10+; 3.9 makes no frame objects on demand, so it needs none. */
        {(void **)&vt_py.gc_disable, "PyGC_Disable", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.code_watch, "PyCode_AddWatcher", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.gc_enable, "PyGC_Enable", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.code_type, "PyCode_Type", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.unicode_type, "PyUnicode_Type", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.bytes_type, "PyBytes_Type", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.runtime, "_PyRuntime", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.ref_debug, "_Py_NegativeRefcount", NULL, VT_PY_OPTIONAL},
        {(void **)&vt_py.trace_refs, "_Py_PrintReferences", NULL, VT_PY_OPTIONAL},
    };
    int bridges = 1, frames = 1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        *want[i].slot = dlsym(RTLD_DEFAULT, want[i].name);
        if (!*want[i].slot && want[i].alt)
            *want[i].slot = dlsym(RTLD_DEFAULT, want[i].alt);
        bridges &= want[i].need != VT_PY_BRIDGES || *want[i].slot != NULL;
        frames &= want[i].need != VT_PY_FRAMES || *want[i].slot != NULL;
    }
    vt_py_found = bridges;
    if (vt_py.version) {
        /* "3.11.7 (main, ...)": the first word. */
        const char *v = vt_py.version();
        size_t n = 0;
        while (v && v[n] && v[n] != ' ' && n < sizeof vt_py_ver - 1)
            n++;
        memcpy(vt_py_ver, v ? v : "", n);
        vt_py_ver[n] = 0;
        int major = 0, minor = 0;
        if (sscanf(vt_py_ver, "%d.%d", &major, &minor) == 2 && major == 3)
            vt_py_minor = minor;
    }
    if (vt_py_minor < VT_PY_MINOR_FIRST || vt_py_minor > VT_PY_MINOR_LAST)
        vt_py_frames_why = "vramtrace reads the frames of CPython 3." VT_STR(VT_PY_MINOR_FIRST) " to 3." VT_STR(
            VT_PY_MINOR_LAST) " only";
    else if (vt_py.version && strstr(vt_py.version(), "free-threading"))
        /* No GIL: nothing keeps another thread off the frames we would read. */
        vt_py_frames_why = "a free-threaded build, whose frames vramtrace does not read";
    else if (!bridges || !frames || (vt_py_minor >= 10 && !(vt_py.gc_disable && vt_py.gc_enable)))
        vt_py_frames_why = "its frame API is incomplete";
    else
        vt_py_frames_ok = 1;
}

int vt_py_hosted(void)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    return vt_py_found;
}

VT_HOT int vt_py_running(void)
{
    /* Without a way to ask about shutdown, a dump cannot tell: it skips the bridge. */
    return vt_py_found && vt_py.is_finalizing && vt_py.is_initialized() && !vt_py.is_finalizing();
}

int vt_py_holds_gil(void)
{
    return vt_py_found && vt_py.gil_check();
}

int vt_py_gil_take(void)
{
    return vt_py.gil_ensure();
}

void vt_py_gil_give(int state)
{
    vt_py.gil_release(state);
}

static int vt_py_fail(char *err, size_t errlen, const char *what)
{
    if (vt_py.err_occurred())
        vt_py.err_clear();
    snprintf(err, errlen, "%s", what);
    return -1;
}

static int vt_py_compile(char *err, size_t errlen)
{
    if (vt_py_ns)
        return 0;
    vt_pyobject *code = vt_py.compile(vt_bridge_py, "<vramtrace bridge>", VT_PY_START);
    if (!code)
        return vt_py_fail(err, errlen, "the bridge's Python code does not compile on this interpreter");
    vt_pyobject *ns = vt_py.dict_new();
    vt_pyobject *b = vt_py.builtins();
    if (!ns || !b || vt_py.dict_set(ns, "__builtins__", b) < 0) {
        vt_py.decref(code);
        if (ns)
            vt_py.decref(ns);
        return vt_py_fail(err, errlen, "out of memory in the interpreter");
    }
    vt_pyobject *r = vt_py.eval_code(code, ns, ns);
    vt_py.decref(code);
    if (!r) {
        vt_py.decref(ns);
        return vt_py_fail(err, errlen, "the bridge's Python code failed to load");
    }
    vt_py.decref(r);
    vt_py_ns = ns;
    return 0;
}

/* A str object's text, malloc'd; NULL with *not_text set when it is no str (an error is then set). */
static char *vt_py_text(vt_pyobject *o, int *not_text)
{
    long len = 0;
    const char *s = vt_py.utf8(o, &len);
    *not_text = s == NULL;
    char *copy = s ? malloc((size_t)len + 1) : NULL;
    if (copy) {
        memcpy(copy, s, (size_t)len);
        copy[len] = 0;
    }
    return copy;
}

int vt_py_prepare(char *err, size_t errlen)
{
    return vt_py_compile(err, errlen);
}

int vt_py_prepared(void)
{
    return vt_py_ns != NULL;
}

char *vt_py_call(const char *name, char *err, size_t errlen)
{
    if (vt_py_compile(err, errlen) < 0)
        return NULL;
    vt_pyobject *fn = vt_py.dict_get(vt_py_ns, name);
    if (!fn) {
        vt_py_fail(err, errlen, "the bridge's Python function is missing");
        return NULL;
    }
    vt_pyobject *r = vt_py.call(fn, NULL);
    if (!r) {
        vt_py_fail(err, errlen, "the bridge's Python function raised");
        return NULL;
    }
    int not_text = 0;
    char *copy = vt_py_text(r, &not_text);
    if (!copy)
        vt_py_fail(err, errlen, not_text ? "the bridge's Python function returned no text" : "out of memory");
    vt_py.decref(r);
    return copy;
}

int vt_py_pending(int (*fn)(void *), void *arg)
{
    return vt_py_found ? vt_py.pending(fn, arg) : -1;
}

/* ---- frames ---- */

const char *vt_py_version(void)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    return vt_py.version ? vt_py_ver : NULL;
}

const char *vt_py_frames_unusable(void)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    return vt_py_frames_ok ? NULL : vt_py_frames_why ? vt_py_frames_why : "no CPython";
}

void *vt_py_interpreter_code(void)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    return (void *)vt_py.version;
}

const char *vt_py_walkable(const struct vt_pylayout **layout, struct vt_pytypes *types)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    const struct vt_pylayout *l = vt_pylayout_for(vt_py_minor);
    if (!vt_py_frames_ok || !l)
        return "no frame layout for this version";
    if (!vt_py.code_type || !vt_py.unicode_type || !vt_py.bytes_type)
        return "its type objects are not exported";
    if (vt_py.ref_debug || vt_py.trace_refs)
        return "a debug build, whose objects are laid out otherwise";
    if (l->minor >= 13) {
        const char *why = vt_pylayout_check_published(l, vt_py.runtime);
        if (why)
            return why;
    }
    *layout = l;
    types->code = vt_py.code_type;
    types->unicode = vt_py.unicode_type;
    types->bytes = vt_py.bytes_type;
    return NULL;
}

/* Whether thread state ts belongs to the main interpreter. Each allocation asks, and each call into the
 * interpreter is a line of its code to fetch (cold between two allocations), so once it is known to hold
 * the answer is read straight: from 3.11 the main interpreter lives inside the runtime's own structure,
 * at one address for the process's life, and a thread state's interpreter is its third field (after
 * prev and next, in every version we know), which the first call checks against the interpreter's own
 * answer before it is trusted. */
#define VT_TS_INTERP_AT (2 * sizeof(void *))
static void *vt_main_interp;

static __attribute__((noinline, cold)) int vt_py_in_main_asked(void *ts, int direct)
{
    void *interp = vt_py.ts_interp(ts), *main_interp = vt_py.interp_main();
    if (direct < 0 && main_interp) {
        void *field;
        memcpy(&field, (const char *)ts + VT_TS_INTERP_AT, sizeof field);
        if (vt_py_minor >= 11 && field == interp) {
            vt_main_interp = main_interp;
            __atomic_store_n(&vt_hotdata.interp_direct, 1, __ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&vt_hotdata.interp_direct, 0, __ATOMIC_RELEASE);
        }
    }
    return interp == main_interp;
}

static inline int vt_py_in_main(void *ts)
{
    int direct = __atomic_load_n(&vt_hotdata.interp_direct, __ATOMIC_ACQUIRE);
    if (VT_UNLIKELY(direct != 1))
        return vt_py_in_main_asked(ts, direct);
    void *field;
    memcpy(&field, (const char *)ts + VT_TS_INTERP_AT, sizeof field);
    return field == vt_main_interp;
}

/* What every allocation asks first: is the interpreter running, and which thread state is this thread's.
 * Asked through the interpreter (Py_IsInitialized, Py_IsFinalizing, PyGILState_GetThisThreadState and
 * the two functions that one calls), that is five functions, each a line of code fetched cold between
 * two allocations. So once checked, the answers are read straight: the runtime's initialized flag and
 * finalizing pointer, and the GIL state's thread-specific key, at the version's offsets in _PyRuntime
 * (vt_pylayout.h), asked of pthread_getspecific as the interpreter would. The check runs on the first
 * thread with a thread state while the interpreter runs: each value read must be what the interpreter's
 * own calls answer, else they are asked for good. x86-64 only: the deeper offsets were measured there. */
static void *const *vt_rt_finalizing;
/* The key is read each time, not kept: an embedding program that finalizes and starts the interpreter
 * again gets a new key, and the old one may by then be another library's. */
struct vt_rt_tss {
    int ready;
    unsigned key;
};
static const struct vt_rt_tss *vt_rt_tss;

static void vt_rt_check(void)
{
    const struct vt_pylayout *l = vt_pylayout_for(vt_py_minor);
    void *mine = vt_py.ts_this();
    if (!mine)
        return; /* not decided: a thread without a thread state cannot check the key */
    int direct = 0;
#if defined(__x86_64__)
    const char *rt = vt_py.runtime;
    if (l && rt && vt_py_frames_ok && vt_py.is_finalizing) {
        int initialized;
        void *finalizing;
        struct vt_rt_tss tss;
        memcpy(&initialized, rt + l->rt_initialized, sizeof initialized);
        memcpy(&finalizing, rt + l->rt_finalizing, sizeof finalizing);
        memcpy(&tss, rt + l->rt_tss_key - offsetof(struct vt_rt_tss, key), sizeof tss);
        direct = initialized == 1 && !finalizing && tss.ready == 1 && vt_py.is_initialized() &&
                 !vt_py.is_finalizing() && pthread_getspecific((pthread_key_t)tss.key) == mine;
        if (direct) {
            vt_hotdata.rt_initialized = (const int *)(rt + l->rt_initialized);
            vt_rt_finalizing = (void *const *)(rt + l->rt_finalizing);
            vt_rt_tss = (const struct vt_rt_tss *)(rt + l->rt_tss_key - offsetof(struct vt_rt_tss, key));
        }
    }
#endif
    __atomic_store_n(&vt_hotdata.rt_direct, direct, __ATOMIC_RELEASE);
}

int vt_py_state_read(void)
{
    return __atomic_load_n(&vt_hotdata.rt_direct, __ATOMIC_ACQUIRE) == 1;
}

void vt_py_atfork_child(void)
{
    /* The child's interpreter deletes the GIL state's key and makes it again (PyOS_AfterFork_Child,
     * after this runs): checked again at the child's first allocation. */
    __atomic_store_n(&vt_hotdata.rt_direct, -1, __ATOMIC_RELEASE);
}

/* The interpreter's answers, asked: until the check has decided, and for good when it did not hold. */
static __attribute__((noinline, cold)) void *vt_py_state_asked(int *holds_gil, int *native, int direct)
{
    *holds_gil = *native = 0;
    if (!vt_py_running())
        return NULL;
    if (direct < 0)
        vt_rt_check();
    void *cur = vt_py.ts_current(), *mine = vt_py.ts_this();
    /* Up to 3.11 the current thread state is the GIL holder's, whichever thread asks; from 3.12 it is
     * per thread, and set only while this thread holds the GIL. */
    *holds_gil = cur && (vt_py_minor >= 12 || cur == mine);
    void *ts = *holds_gil ? cur : mine;
    /* Subinterpreters keep code objects of their own, freed with them: only the main one is read. */
    ts = ts && vt_py_in_main(ts) ? ts : NULL;
    *native = !ts;
    return ts;
}

VT_HOT void *vt_py_thread_state(int *holds_gil, int *native)
{
    int direct = __atomic_load_n(&vt_hotdata.rt_direct, __ATOMIC_ACQUIRE);
    if (VT_UNLIKELY(direct != 1))
        return vt_py_state_asked(holds_gil, native, direct);
    *holds_gil = *native = 0;
    if (VT_UNLIKELY(!__atomic_load_n(vt_hotdata.rt_initialized, __ATOMIC_RELAXED) ||
                    __atomic_load_n(vt_rt_finalizing, __ATOMIC_ACQUIRE) ||
                    !__atomic_load_n(&vt_rt_tss->ready, __ATOMIC_ACQUIRE)))
        return NULL;
    pthread_key_t key = (pthread_key_t)__atomic_load_n(&vt_rt_tss->key, __ATOMIC_RELAXED);
    /* From 3.12 the current thread state is set only while this thread holds the GIL: then it is ours,
     * and the one bound to this thread need not be looked up. */
    void *cur = vt_py.ts_current(), *ts;
    if (vt_py_minor >= 12) {
        *holds_gil = cur != NULL;
        ts = cur ? cur : pthread_getspecific(key);
    } else {
        void *mine = pthread_getspecific(key);
        *holds_gil = cur && cur == mine;
        ts = *holds_gil ? cur : mine;
    }
    ts = ts && vt_py_in_main(ts) ? ts : NULL;
    *native = !ts;
    return ts;
}

int vt_py_frames(void *tstate, uintptr_t *out, int max)
{
    /* From 3.11 frame objects are made on demand; a collection that one of them started could run
     * finalizers (a tensor's, calling back into its allocator) in the middle of our caller. */
    int gc = vt_py.gc_disable ? vt_py.gc_disable() : 0;
    int had_error = vt_py.err_occurred() != NULL;
    vt_pyobject *f = vt_py.ts_frame(tstate);
    int n = 0;
    while (f && n < max) {
        vt_pyobject *code = vt_py.frame_code(f);
        out[2 * n] = (uintptr_t)code;
        int line = vt_py.frame_line(f);
        out[2 * n + 1] = line > 0 ? (uintptr_t)line : 0;
        /* The frame holds the code object as long as our caller runs inside it. */
        vt_py.decref(code);
        n++;
        vt_pyobject *back = vt_py.frame_back(f);
        vt_py.decref(f);
        f = back;
    }
    if (f)
        vt_py.decref(f);
    if (!had_error && vt_py.err_occurred())
        vt_py.err_clear();
    if (gc)
        vt_py.gc_enable();
    return n;
}

/* A str attribute of code as one line of text (malloc'd), or NULL. */
static char *vt_py_code_attr(vt_pyobject *code, const char *name)
{
    vt_pyobject *o = vt_py.getattr(code, name);
    if (!o) {
        vt_py.err_clear();
        return NULL;
    }
    int not_text = 0;
    char *copy = vt_py_text(o, &not_text);
    if (not_text)
        vt_py.err_clear();
    vt_py.decref(o);
    return copy;
}

int vt_py_code_names(uintptr_t code, char **file, char **func)
{
    vt_pyobject *type, *value, *tb;
    vt_py.err_fetch(&type, &value, &tb);
    int gc = vt_py.gc_disable ? vt_py.gc_disable() : 0;
    vt_pyobject *c = (vt_pyobject *)code;
    *file = vt_py_code_attr(c, "co_filename");
    *func = vt_py_minor >= 11 ? vt_py_code_attr(c, "co_qualname") : NULL;
    if (!*func)
        *func = vt_py_code_attr(c, "co_name");
    if (gc)
        vt_py.gc_enable();
    vt_py.err_restore(type, value, tb);
    if (*file && *func)
        return 0;
    free(*file);
    free(*func);
    *file = *func = NULL;
    return -1;
}

void vt_py_keep(uintptr_t code)
{
    vt_py.incref((vt_pyobject *)code);
}

int vt_py_thread_states(void **out, int max)
{
    if (!vt_py.thread_head || !vt_py.thread_next)
        return 0;
    int n = 0;
    for (void *t = vt_py.thread_head(vt_py.interp_main()); t && n < max; t = vt_py.thread_next(t))
        out[n++] = t;
    return n;
}

void vt_py_attach(void **ts)
{
    if (*ts)
        vt_py.restore_thread(*ts);
    else
        vt_py.gil_ensure(); /* the first time: a thread state of our own, kept from then on */
}

void vt_py_detach(void **ts)
{
    *ts = vt_py.save_thread();
}

int vt_py_watch_code(int (*cb)(int event, void *code))
{
    if (!vt_py.code_watch)
        return -1;
    /* The thread may be inside an except block of the program's: its exception is put back as it was,
     * and the one a failure raises (every watcher slot taken) is not left behind. */
    vt_pyobject *type, *value, *tb;
    vt_py.err_fetch(&type, &value, &tb);
    int id = vt_py.code_watch(cb);
    if (id < 0)
        vt_py.err_clear();
    vt_py.err_restore(type, value, tb);
    return id;
}
