/* A program that looks like a CPython vramtrace does not know (it exports Py_GetVersion saying 3.14, and
 * nothing else of the API): vramtrace must say so once and keep native call sites, never crash. */
#include <stddef.h>
#include <stdio.h>

int cudaMalloc(void **p, size_t size);

const char *Py_GetVersion(void)
{
    return "3.14.0 (main, fake) [GCC]";
}

int main(void)
{
    void *p;
    int rc = cudaMalloc(&p, 1 << 20);
    printf("alloc %d\n", rc);
    return rc != 0;
}
