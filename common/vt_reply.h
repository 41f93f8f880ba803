/* The reply protocol between `vramtrace dump` and the library's signal handler (lib/dump/vt_signal.c):
 * shared by both halves. */
#ifndef VT_REPLY_H
#define VT_REPLY_H

/* sigqueue's value from vramtrace dump: the magic in the high 32 bits, the fd of the pipe it reads
 * the answer from in the low 32; the library opens /proc/<sender's pid>/fd/<fd> and writes one line,
 * "<pid> ok <path>" or "<pid> error <why>". */
#define VT_REPLY_MAGIC 0x76747264u /* "vtrd" */

#endif
