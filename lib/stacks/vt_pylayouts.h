/* The frame layouts of the CPython versions vramtrace walks, as a table that each file using it holds
 * whole: vt_pylayout.c hands them out, and the frame walk (vt_pywalk.c) builds a walk of its own for each,
 * in which every offset is a constant. x86-64 and aarch64 share them: every field is pointer-sized or
 * sits after pointer-sized ones. */
#ifndef VT_PYLAYOUTS_H
#define VT_PYLAYOUTS_H

#include "vt_pylayout.h"

__attribute__((unused)) static const struct vt_pylayout vt_layouts[] = {
    {.minor = 9, .instr = VT_INSTR_LASTI_BYTES, .lines = VT_LINES_LNOTAB,
     .ts_frame = 24, .ts_cframe = -1, .cframe_current = -1,
     .frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = -1,
     .code_filename = 104, .code_name = 112, .code_qualname = -1, .code_firstlineno = 40, .code_linetable = 120,
     .code_adaptive = -1, .code_firsttraceable = -1,
     .ascii_size = 48, .compact_size = 72, .unicode_state = 32, .unicode_length = 16, .bytes_size = 16, .bytes_data = 32,
     .rt_initialized = 12, .rt_finalizing = 16, .rt_tss_key = 588},
    {.minor = 10, .instr = VT_INSTR_LASTI_UNITS, .lines = VT_LINES_LINETABLE,
     .ts_frame = 24, .ts_cframe = -1, .cframe_current = -1,
     .frame_back = 24, .frame_code = 32, .frame_instr = 96, .frame_owner = -1,
     .code_filename = 104, .code_name = 112, .code_qualname = -1, .code_firstlineno = 40, .code_linetable = 120,
     .code_adaptive = -1, .code_firsttraceable = -1,
     .ascii_size = 48, .compact_size = 72, .unicode_state = 32, .unicode_length = 16, .bytes_size = 16, .bytes_data = 32,
     .rt_initialized = 12, .rt_finalizing = 16, .rt_tss_key = 588},
    {.minor = 11, .instr = VT_INSTR_PREV, .lines = VT_LINES_LOCATIONS,
     .ts_frame = -1, .ts_cframe = 56, .cframe_current = 8,
     .frame_back = 48, .frame_code = 32, .frame_instr = 56, .frame_owner = 69,
     .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 72, .code_linetable = 136,
     .code_adaptive = 184, .code_firsttraceable = 168,
     .ascii_size = 48, .compact_size = 72, .unicode_state = 32, .unicode_length = 16, .bytes_size = 16, .bytes_data = 32,
     .rt_initialized = 16, .rt_finalizing = 24, .rt_tss_key = 596},
    {.minor = 12, .instr = VT_INSTR_PREV, .lines = VT_LINES_LOCATIONS,
     .ts_frame = -1, .ts_cframe = 56, .cframe_current = 0,
     .frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
     .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 68, .code_linetable = 136,
     .code_adaptive = 192, .code_firsttraceable = 176,
     .ascii_size = 40, .compact_size = 56, .unicode_state = 32, .unicode_length = 16, .bytes_size = 16, .bytes_data = 32,
     .rt_initialized = 16, .rt_finalizing = 24, .rt_tss_key = 1548},
    {.minor = 13, .instr = VT_INSTR_PTR, .lines = VT_LINES_LOCATIONS,
     .ts_frame = 72, .ts_cframe = -1, .cframe_current = -1,
     .frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
     .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 68, .code_linetable = 136,
     .code_adaptive = 200, .code_firsttraceable = 184,
     .ascii_size = 40, .compact_size = 56, .unicode_state = 32, .unicode_length = 16, .bytes_size = 16, .bytes_data = 32,
     .rt_initialized = 600, .rt_finalizing = 608, .rt_tss_key = 2164},
};

/* Where each version is in the table. */
#define VT_LAYOUT_3_11 2
#define VT_LAYOUT_3_12 3
#define VT_LAYOUT_3_13 4

#endif
