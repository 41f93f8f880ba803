/* Configuration, read once from the VRAMTRACE_* environment variables (vt_settings.h) at start. */
#ifndef VT_CONFIG_H
#define VT_CONFIG_H

#include <limits.h>

#include "vt_settings.h"

#define VT_DEPTH_MAX 128

/* The fields every hook reads (depth, python, py_depth, ...) lie in the first line, ahead of the paths. */
struct vt_config {
    int depth;          /* frames kept per stack; 0: stacks off */
    int python;         /* Python call sites for allocations */
    int py_depth;       /* Python frames kept per stack */
    int py_native_depth; /* native frames kept above Python frames */
    int py_walk;        /* read frames from the interpreter's memory on the allocating thread */
    int py_paths;       /* ... by paths (vt_pypath.h), where the version allows */
    int signal;         /* 0: no dump signal */
    int at_exit;
    int on_oom;
    double interval;    /* seconds; 0: off */
    int keep;           /* interval dumps kept; 0: all */
    double bridge_timeout; /* seconds the dumper waits for the GIL; 0: no bridges */
    int torch_tracker;  /* torch's blocks through its allocator's trace tracker (lib/hooks/vt_torch.c) */
    int torch_history;  /* VT_HISTORY_*: when to switch on torch's block history */
    int torch_sample;   /* with VT_HISTORY_DUMP: percent of each second the history is on (100: always) */
    int cupy_blocks;    /* CuPy's blocks reported by a memory hook on the main thread */
    double py_wait;     /* ms a thread that released the GIL waits for its frames; 0: only GIL holders */
    char dir[PATH_MAX]; /* absolute; empty: the private directory (vt_paths.h), made at the first dump */
    char metrics[PATH_MAX]; /* absolute, %p not yet replaced; empty: no metrics file (vt_metrics_file.h) */
    char alloc_fns[VT_SET_NAMES_MAX + 1]; /* VRAMTRACE_ALLOC_FNS as given; empty: none */
    double metrics_interval;
    int metrics_top;
    int end_note_pid;   /* the process that says where its dumps are as it ends (vt_endnote.h); 0: none */
};

extern struct vt_config vt_cfg;

/* Reads the environment into vt_cfg; a bad value is reported (vt_log.h: held until CUDA is used) and
 * replaced by its default. */
void vt_config_load(void);

#endif
