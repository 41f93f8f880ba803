/* File descriptors that vramtrace keeps open for long (its dump socket, the Python walk's pipes) live at
 * the top of the process's range, never in the low numbers a program expects to get from open(), and
 * only where the limit leaves room: a program run with a tiny `ulimit -n` keeps every descriptor it
 * is allowed for itself. */
#ifndef VT_FD_H
#define VT_FD_H

/* Below this many descriptors (ulimit -n), vramtrace keeps none open. */
#define VT_FD_MIN_LIMIT 64

/* fd moved high (close-on-exec), the original closed; -1 (fd closed, errno EMFILE) when the limit is
 * below VT_FD_MIN_LIMIT or no high number is free. */
int vt_fd_high(int fd);
/* 1 when the limit leaves descriptors to spare (at least VT_FD_MIN_LIMIT). */
int vt_fd_spare(void);
/* Runs fn(arg) with the free descriptors below the floor taken for the moment, so that whatever it opens
 * and keeps (libunwind's pipe) lands high. For code that opens descriptors we cannot move ourselves. */
void vt_fd_above(void (*fn)(void *), void *arg);

#endif
