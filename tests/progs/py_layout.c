/* Prints, from a CPython's own headers, where its structs keep what vramtrace's frame walk reads, as
 * "FIELD OFFSET" lines named after struct vt_pylayout's fields (tests/t_pylayout.c compiles it against
 * each interpreter's headers and compares). Built with Py_BUILD_CORE: the frame structs are internal. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif
#include "internal/pycore_runtime.h"

#define P(name, expr) printf("%s %ld\n", name, (long)(expr))

int main(void)
{
    P("minor", PY_MINOR_VERSION);
#if PY_MINOR_VERSION <= 10
    P("ts_frame", offsetof(PyThreadState, frame));
    P("frame_back", offsetof(PyFrameObject, f_back));
    P("frame_code", offsetof(PyFrameObject, f_code));
    P("frame_instr", offsetof(PyFrameObject, f_lasti));
#if PY_MINOR_VERSION == 9
    P("code_linetable", offsetof(PyCodeObject, co_lnotab));
#else
    P("code_linetable", offsetof(PyCodeObject, co_linetable));
#endif
#else
#if PY_MINOR_VERSION <= 12
    P("ts_cframe", offsetof(PyThreadState, cframe));
    P("cframe_current", offsetof(_PyCFrame, current_frame));
    P("frame_code", offsetof(_PyInterpreterFrame, f_code));
    P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
    P("ts_frame", offsetof(PyThreadState, current_frame));
    P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
    P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
    P("frame_back", offsetof(_PyInterpreterFrame, previous));
    P("frame_owner", offsetof(_PyInterpreterFrame, owner));
    P("code_qualname", offsetof(PyCodeObject, co_qualname));
    P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
    P("code_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
    P("code_linetable", offsetof(PyCodeObject, co_linetable));
    P("owned_by_generator", FRAME_OWNED_BY_GENERATOR);
#endif
#if PY_MINOR_VERSION >= 12
    P("owned_by_cstack", FRAME_OWNED_BY_CSTACK);
#endif
    P("code_filename", offsetof(PyCodeObject, co_filename));
    P("code_name", offsetof(PyCodeObject, co_name));
    P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    P("ascii_size", sizeof(PyASCIIObject));
    P("compact_size", sizeof(PyCompactUnicodeObject));
    P("unicode_state", offsetof(PyASCIIObject, state));
    P("unicode_length", offsetof(PyASCIIObject, length));
    P("bytes_size", offsetof(PyVarObject, ob_size));
    P("bytes_data", offsetof(PyBytesObject, ob_sval));
    P("ob_type", offsetof(PyObject, ob_type));
    P("rt_initialized", offsetof(_PyRuntimeState, initialized));
    P("rt_finalizing", offsetof(_PyRuntimeState, _finalizing));
#if PY_MINOR_VERSION <= 11
    P("rt_tss_key", offsetof(_PyRuntimeState, gilstate.autoTSSkey) + offsetof(Py_tss_t, _key));
#else
    P("rt_tss_key", offsetof(_PyRuntimeState, autoTSSkey) + offsetof(Py_tss_t, _key));
#endif
    return 0;
}
