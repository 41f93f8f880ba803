/* The CPython API, looked up in the global scope once (the interpreter exports it, whether it is
 * linked into the executable or loaded as libpython). Only the stable, long-lived entry points are
 * used, so every CPython from 3.9 on works; a process without them simply has no bridges. The bridge's
 * own Python code (lib/vt_bridge.py, built in as vt_bridge_py) is compiled on first use into a
 * namespace of its own, so the program's modules and globals are never touched. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_bridge_py.h"
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
} vt_py;

static pthread_once_t vt_py_once = PTHREAD_ONCE_INIT;
static int vt_py_found;
static vt_pyobject *vt_py_ns; /* the bridge's namespace: compiled once, kept for the process's life */

#define VT_PY_START 257 /* Py_file_input */

static void vt_py_resolve(void)
{
    struct { void **slot; const char *name; int required; } want[] = {
        {(void **)&vt_py.is_initialized, "Py_IsInitialized", 1},
        {(void **)&vt_py.gil_ensure, "PyGILState_Ensure", 1},
        {(void **)&vt_py.gil_release, "PyGILState_Release", 1},
        {(void **)&vt_py.gil_check, "PyGILState_Check", 1},
        {(void **)&vt_py.compile, "Py_CompileString", 1},
        {(void **)&vt_py.eval_code, "PyEval_EvalCode", 1},
        {(void **)&vt_py.dict_new, "PyDict_New", 1},
        {(void **)&vt_py.dict_get, "PyDict_GetItemString", 1},
        {(void **)&vt_py.dict_set, "PyDict_SetItemString", 1},
        {(void **)&vt_py.builtins, "PyEval_GetBuiltins", 1},
        {(void **)&vt_py.call, "PyObject_CallObject", 1},
        {(void **)&vt_py.utf8, "PyUnicode_AsUTF8AndSize", 1},
        {(void **)&vt_py.err_occurred, "PyErr_Occurred", 1},
        {(void **)&vt_py.err_clear, "PyErr_Clear", 1},
        {(void **)&vt_py.decref, "Py_DecRef", 1},
        {(void **)&vt_py.pending, "Py_AddPendingCall", 1},
        /* 3.13 made it public; before, only the underscored name exists. */
        {(void **)&vt_py.is_finalizing, "Py_IsFinalizing", 0},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        *want[i].slot = dlsym(RTLD_DEFAULT, want[i].name);
        ok &= !want[i].required || *want[i].slot != NULL;
    }
    if (!vt_py.is_finalizing)
        vt_py.is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    vt_py_found = ok;
}

int vt_py_hosted(void)
{
    pthread_once(&vt_py_once, vt_py_resolve);
    return vt_py_found;
}

int vt_py_running(void)
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
    long len = 0;
    const char *s = vt_py.utf8(r, &len);
    char *copy = s ? malloc((size_t)len + 1) : NULL;
    if (copy) {
        memcpy(copy, s, (size_t)len);
        copy[len] = 0;
    } else {
        vt_py_fail(err, errlen, s ? "out of memory" : "the bridge's Python function returned no text");
    }
    vt_py.decref(r);
    return copy;
}

int vt_py_pending(int (*fn)(void *), void *arg)
{
    return vt_py_found ? vt_py.pending(fn, arg) : -1;
}
