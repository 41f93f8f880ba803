/* The CPython C API of the interpreter the program hosts, if any, found at run time: vramtrace has no
 * link dependency on libpython. Used by the bridges only, never from an allocation wrapper. */
#ifndef VT_PYTHON_H
#define VT_PYTHON_H

#include <stddef.h>

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
/* Asks the main thread to run fn(arg) with the GIL at its next safe point; 0 when scheduled. */
int vt_py_pending(int (*fn)(void *), void *arg);

#endif
