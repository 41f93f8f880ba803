/* Where dumps go and what they are called, shared by the library (which writes them) and the command
 * (which finds them): vramtrace.<pid>.<seq>.dump, written first as .vramtrace.<pid>.<random>.tmp, in
 * the directory of VRAMTRACE_DIR, else the working directory at start, else the private directory
 * $TMPDIR/vramtrace-<uid> (mode 0700, checked to be the user's own). */
#ifndef VT_PATHS_H
#define VT_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* DIR/vramtrace.PID.SEQ.dump; -1 when it does not fit. */
int vt_dump_path(char *out, size_t len, const char *dir, long pid, unsigned long seq);
/* The shell glob of one process's dumps in DIR: DIR/vramtrace.PID.*.dump (dirlen: DIR's first dirlen
 * characters; -1: all of it; 0: no directory, the glob alone); -1 when it does not fit. */
int vt_dump_glob(char *out, size_t len, const char *dir, int dirlen, long pid);
/* A file name (no directory) of a dump: 0 with its pid and seq, -1 when it is not one. */
int vt_dump_name_parse(const char *name, long *pid, unsigned long *seq);
/* The template for mkostemps: DIR/.vramtrace.PID.XXXXXX.tmp, and the length of its suffix. */
#define VT_TMP_SUFFIX_LEN 4
int vt_tmp_template(char *out, size_t len, const char *dir, long pid);
/* A file name of a temporary dump: 0 with the pid that was writing it, -1 when it is not one. */
int vt_tmp_name_parse(const char *name, long *pid);

/* The private directory of uid under tmpdir (NULL or empty: /tmp). */
int vt_private_dir(char *out, size_t len, uid_t uid, const char *tmpdir);
/* Makes it (0700) if need be and checks that it is a directory of uid's own that nobody else may
 * enter, so no other user can plant or read files there. 0, or -1 with why. */
int vt_private_dir_check(const char *path, uid_t uid, int make, char *why, size_t len);

#endif
