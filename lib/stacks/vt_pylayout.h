/* Where CPython keeps what a frame walk reads, per minor version: the thread state's current frame,
 * the frame's code object, caller and instruction, the code object's names and line table, and the
 * string and bytes objects those are. Measured from each version's own headers (tests/t_pylayout.c
 * checks this table against them), and for 3.13 checked against the offsets the interpreter publishes
 * (_Py_DebugOffsets at the start of _PyRuntime). */
#ifndef VT_PYLAYOUT_H
#define VT_PYLAYOUT_H

#include <stdint.h>

/* How the frame says where it is. */
enum vt_py_instr {
    VT_INSTR_LASTI_BYTES, /* 3.9: int f_lasti, a byte offset into co_code */
    VT_INSTR_LASTI_UNITS, /* 3.10: int f_lasti, in code units */
    VT_INSTR_PREV,        /* 3.11, 3.12: pointer to the instruction being executed (prev_instr) */
    VT_INSTR_PTR,         /* 3.13: pointer to the instruction being executed (instr_ptr) */
};

/* How the code object maps an instruction to its line (vt_pylines.h). */
enum vt_py_lines {
    VT_LINES_LNOTAB,    /* 3.9: co_lnotab */
    VT_LINES_LINETABLE, /* 3.10: co_linetable, (start delta, line delta) pairs */
    VT_LINES_LOCATIONS, /* 3.11+: co_linetable, the location table */
};

/* Byte offsets; -1 where a version has no such field. */
struct vt_pylayout {
    int minor;
    enum vt_py_instr instr;
    enum vt_py_lines lines;
    int ts_frame;       /* PyThreadState: its current frame (3.9, 3.10, 3.13) ... */
    int ts_cframe;      /* ... or its _PyCFrame (3.11, 3.12), */
    int cframe_current; /* whose current_frame this is */
    int frame_back, frame_code, frame_instr;
    int frame_owner; /* 3.11+: a char; the frame is on the C stack (a shim) or a generator's */
    int code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
    int code_adaptive;       /* 3.11+: the first instruction */
    int code_firsttraceable; /* 3.11+: an int; frames before it are still being set up */
    int ascii_size, compact_size, unicode_state, unicode_length;
    int bytes_size, bytes_data;
    /* _PyRuntime: its initialized flag (an int), the thread state finalizing it (a pointer) and the GIL
     * state's thread-specific key (the pthread_key_t inside a Py_tss_t, after its int flag). */
    int rt_initialized, rt_finalizing, rt_tss_key;
};

#define VT_OWNED_BY_GENERATOR 1
#define VT_OWNED_BY_CSTACK 3

/* The layout of CPython 3.minor, or NULL when vramtrace has none. */
const struct vt_pylayout *vt_pylayout_for(int minor);

/* For 3.13: NULL when the offsets runtime (the interpreter's _PyRuntime) publishes agree with the
 * layout, else why not. */
const char *vt_pylayout_check_published(const struct vt_pylayout *l, const void *runtime);

#endif
