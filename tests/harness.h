/* Test harness: TAP output, running a test program under libvramtrace.so on the fake driver in a
 * fresh dump directory, and reading back what it wrote. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "vt_dumpfile.h"

/* TAP: ok() prints "ok N - name" or "not ok N - name"; tap_done() prints the plan, returns the exit code. */
int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int is_u64(uint64_t got, uint64_t want, const char *name);
int is_str(const char *got, const char *want, const char *name);
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A test that cannot run here, said as a TAP skip with the reason (never silent). */
void skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_done(void);

struct run {
    char dir[512];   /* the dump directory */
    int status;      /* exit status, or 128+signal */
    char *out, *err; /* captured stdout and stderr */
    long pid;
};

/* The build directory (absolute; the sources are at build_dir()/..). */
const char *build_dir(void);

/* Runs build/tests/PROG (or PROG itself when it is an absolute path) with args; env entries "NAME=VALUE" are added; preload=0 runs it bare.
 * An env entry "LD_PRELOAD_AFTER=LIB" preloads build/tests/LIB after libvramtrace.so; "RLIMIT_NOFILE=N" and
 * "RLIMIT_FSIZE=N" set those limits for the program; "STDERR_PIPE_CLOSED=1" gives it a stderr that is a
 * pipe nobody reads (a write raises SIGPIPE). */
int run_prog(struct run *r, const char *prog, const char *const *args, const char *const *env, int preload);
void run_free(struct run *r);

/* The dumps in r->dir (sorted by pid, then seq), read into d[]; returns how many (at most max). */
size_t load_dumps(const struct run *r, struct vt_dumpfile *d, size_t max);
void free_dumps(struct vt_dumpfile *d, size_t n);
int load_dump(const char *path, struct vt_dumpfile *d);

/* Live entries of a dump matching kind/api (NULL: any) and size (0: any). */
size_t count_allocs(const struct vt_dumpfile *d, const char *kind, const char *api, uint64_t size);
const struct vt_df_alloc *find_alloc(const struct vt_dumpfile *d, uint64_t size);
/* True when a frame of the stack is named fn (dladdr name "fn+0x..."). */
int stack_has(const struct vt_dumpfile *d, uint32_t stack, const char *fn);
/* The value printed after "key " in the captured output, or NULL. */
const char *out_value(const struct run *r, const char *key, char *buf, size_t len);
/* A whole file as a string (malloc'd), or NULL when it cannot be read. */
char *read_text(const char *path);
/* How many lines of text start with prefix. */
int count_lines(const char *text, const char *prefix);

/* The number after "key": following anchor in a JSON text (UINT64_MAX when absent or null). */
uint64_t json_num(const char *text, const char *anchor, const char *key);

#endif
