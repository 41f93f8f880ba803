/* vramtrace public API: what a program (or a caching allocator inside it) may call when
 * libvramtrace.so is loaded. Every function is optional to call; resolve them with
 * dlsym(RTLD_DEFAULT, ...) when the program must also run without the library. */
#ifndef VRAMTRACE_H
#define VRAMTRACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VRAMTRACE_FORMAT_VERSION 1

/* Writes a dump now, in the calling thread, with reason "api". On success returns 0 and, when
 * path is not NULL, copies the dump's path into path (at most len bytes, NUL-terminated).
 * Returns -1 when no dump could be written (the reason is said once on stderr). */
int vramtrace_dump(char *path, size_t len);

#ifdef __cplusplus
}
#endif

#endif
