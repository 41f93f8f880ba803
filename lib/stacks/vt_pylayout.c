/* The frame layouts of the CPython versions vramtrace walks (vt_pylayout.h; the table: vt_pylayouts.h). */
#include <stddef.h>
#include <string.h>

#include "vt_pylayouts.h"

const struct vt_pylayout *vt_pylayout_for(int minor)
{
    for (size_t i = 0; i < sizeof vt_layouts / sizeof vt_layouts[0]; i++)
        if (vt_layouts[i].minor == minor)
            return &vt_layouts[i];
    return NULL;
}

/* The head of 3.13's _Py_DebugOffsets, as far as we read it: eight-byte words, grouped by the struct
 * they describe, each group starting with that struct's size. */
struct vt_published {
    char cookie[8];
    uint64_t version, free_threaded;
    uint64_t runtime[3]; /* size finalizing interpreters_head */
    uint64_t interp[13];
    uint64_t thread[9]; /* size prev next interp current_frame ... */
    uint64_t frame[6];  /* size previous executable instr_ptr localsplus owner */
    uint64_t code[10];  /* size filename name qualname linetable firstlineno ... co_code_adaptive */
    uint64_t object[2];
    uint64_t type[4];
    uint64_t tuple[3], list[3], dict[3], flt[2], lng[3];
    uint64_t bytes[3];   /* size ob_size ob_sval */
    uint64_t unicode[4]; /* size state length asciiobject_size */
};

const char *vt_pylayout_check_published(const struct vt_pylayout *l, const void *runtime)
{
    const struct vt_published *p = runtime;
    if (!p || memcmp(p->cookie, "xdebugpy", 8))
        return "the interpreter publishes no frame offsets";
    if ((p->version >> 16) != (0x0300u | (unsigned)l->minor))
        return "the published offsets are of another version";
    if (p->free_threaded)
        return "a free-threaded build";
    const struct { uint64_t got; int want; } pairs[] = {
        {p->thread[4], l->ts_frame},         {p->frame[1], l->frame_back},
        {p->frame[2], l->frame_code},        {p->frame[3], l->frame_instr},
        {p->frame[5], l->frame_owner},       {p->code[1], l->code_filename},
        {p->code[2], l->code_name},          {p->code[3], l->code_qualname},
        {p->code[4], l->code_linetable},     {p->code[5], l->code_firstlineno},
        {p->code[9], l->code_adaptive},      {p->bytes[1], l->bytes_size},
        {p->bytes[2], l->bytes_data},        {p->unicode[1], l->unicode_state},
        {p->unicode[2], l->unicode_length},  {p->unicode[3], l->ascii_size},
        {p->runtime[1], l->rt_finalizing},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].got != (uint64_t)pairs[i].want)
            return "its published frame offsets differ from the ones vramtrace knows";
    return NULL;
}
