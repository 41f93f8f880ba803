/* The CPython C API of the interpreter the program hosts, if any, found at run time: vramtrace has no
 * link dependency on libpython. The bridges use it from vramtrace's own threads; allocation wrappers
 * use only the frame functions below, and only as vt_pycapture.c allows. */
#ifndef VT_PYTHON_H
#define VT_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "vt_pywalk.h"

/* 1 when the process hosts a CPython whose API we found. */
int vt_py_hosted(void);
/* 1 while the interpreter is initialised and not shutting down: only then may a GIL be taken. */
int vt_py_running(void);
/* 1 when the calling thread holds the GIL. */
int vt_py_holds_gil(void);
/* Take and give back the GIL from any thread (blocks until it is free). */
int vt_py_gil_take(void);
void vt_py_gil_give(int state);
/* With the GIL held: calls the bridge's Python function name() and returns its text (malloc'd), or
 * NULL with why in err. */
char *vt_py_call(const char *name, char *err, size_t errlen);
/* With the GIL held: the bridge's code compiled into its namespace, once (vt_py_call does it first when
 * it has not been); 0, or -1 with why in err. */
int vt_py_prepare(char *err, size_t errlen);
/* With the GIL held: 1 once the bridge's code is compiled. */
int vt_py_prepared(void);
/* Asks the main thread to run fn(arg) with the GIL at its next safe point; 0 when scheduled. */
int vt_py_pending(int (*fn)(void *), void *arg);
/* With the GIL held: cb is called, with the GIL, at each code object's creation (event 0) and
 * destruction (1) in the main interpreter (PyCode_AddWatcher, 3.12+). The watcher id, or -1. */
int vt_py_watch_code(int (*cb)(int event, void *code));

/* The CPython versions whose frames vramtrace reads: 3.VT_PY_MINOR_FIRST to 3.VT_PY_MINOR_LAST. */
#define VT_PY_MINOR_FIRST 9
#define VT_PY_MINOR_LAST 13

/* The interpreter's version ("3.11.7"), or NULL when the process hosts no CPython. */
const char *vt_py_version(void);
/* NULL when its frames can be read (a known version with the whole frame API), else why not. */
const char *vt_py_frames_unusable(void);
/* An address inside the interpreter's code, to find its module by. */
void *vt_py_interpreter_code(void);
/* NULL when a thread's frames can be read from the interpreter's memory (vt_pywalk.h), with the
 * layout and types to read them by; else why not. */
const char *vt_py_walkable(const struct vt_pylayout **layout, struct vt_pytypes *types);
/* While the interpreter runs (vt_py_running), the calling thread's Python thread state in the main
 * interpreter; *holds_gil says whether it is current (the thread holds the GIL). NULL otherwise, with
 * *native set when the interpreter runs but the thread has no state in the main interpreter. Safe
 * without the GIL; for every allocation, so it asks the interpreter nothing once checked (vt_python.c). */
void *vt_py_thread_state(int *holds_gil, int *native);
/* 1 once vt_py_thread_state reads the runtime straight, 0 while it asks the interpreter. */
int vt_py_state_read(void);
/* In a forked child: what vt_py_thread_state read straight is checked again. */
void vt_py_atfork_child(void);
/* With the GIL held, the frames of tstate (whose thread is not running Python meanwhile), innermost
 * first, as (code object, line) pairs into out: at most max pairs; returns how many. Starts no
 * collection and leaves the error indicator as it was. */
int vt_py_frames(void *tstate, uintptr_t *out, int max);
/* With the GIL held, a code object's file and (qualified) function name, malloc'd; -1 when it has
 * none. Leaves the error indicator as it was. */
int vt_py_code_names(uintptr_t code, char **file, char **func);
/* With the GIL held: one more reference to code, never given back (see vt_pystack.c). */
void vt_py_keep(uintptr_t code);
/* With the GIL held: the thread states of the main interpreter, at most max into out; how many. */
int vt_py_thread_states(void **out, int max);
/* Takes the GIL with the thread state kept in *ts (made the first time), and gives it back. */
void vt_py_attach(void **ts);
void vt_py_detach(void **ts);

#endif
