/* Helpers shared by the test programs that run under libvramtrace.so. */
#ifndef PROG_COMMON_H
#define PROG_COMMON_H

#include <stddef.h>

/* Calls vramtrace_dump() when the library is loaded and prints "dump PATH"; returns 0 on success. */
int prog_dump(void);
/* Waits up to 5 s until VRAMTRACE_DIR holds at least n dump files. */
void prog_wait_dumps(int n);
/* Exits with a message when cond is false. */
void prog_check(int cond, const char *what);

#endif
