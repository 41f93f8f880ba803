/* The dlsym hook. glibc resolves RTLD_NEXT from its caller's return address, so every lookup we do
 * not route leaves through a tail jump to the real dlsym, keeping the caller's return address. Only
 * exact driver names (cu[A-Z]...) that we wrap are answered with our wrapper; the real pointer found
 * in the caller's handle becomes the wrapper's target. No other work happens here. */
#include <stddef.h>

#include "vt_real.h"

#if !defined(__x86_64__)
#error "vramtrace's dlsym hook is written for x86-64"
#endif

void *vt_dlsym_route(void *handle, const char *name) __attribute__((visibility("hidden"), used));

static __thread int vt_in_dlsym __attribute__((tls_model("initial-exec")));

void *vt_dlsym_route(void *handle, const char *name)
{
    vt_real_dlsym_resolve();
    if (!name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z' || vt_in_dlsym)
        return NULL;
    enum vt_fn f;
    void *wrapper = vt_route_name(name, &f);
    if (!wrapper || !vt_real_dlsym)
        return NULL;
    vt_in_dlsym = 1;
    void *real = vt_real_dlsym(handle, name);
    vt_in_dlsym = 0;
    if (!real)
        return NULL; /* the tail jump repeats the lookup so that dlerror() says why */
    vt_real_offer(f, real);
    return wrapper;
}

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    .cfi_startproc\n"
        "    pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call vt_dlsym_route\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"
        "    ret\n"
        "1:  jmp *vt_real_dlsym(%rip)\n"
        "    .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
