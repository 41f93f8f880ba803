/* Test library: asks dlsym(RTLD_NEXT) for a symbol that only the library after it defines. If the
 * dlsym hook made the lookup from its own frame, glibc would search after libvramtrace instead. */
#include <dlfcn.h>

int vt_next_probe(void)
{
    return 1;
}

int vt_next_call(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "vt_next_probe");
    return next ? next() : -1;
}
