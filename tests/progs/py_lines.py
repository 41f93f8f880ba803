# For tests/t_pylayout.c: vramtrace's line-table reader (lib/stacks/vt_pylines.c, built as LIB) against the
# interpreter's own PyCode_Addr2Line, for every instruction of every code object of some standard
# modules and of this file. Prints "checked N mismatched M" and the first mismatches.
#   py_lines.py LIB
import ctypes
import sys
import types

lib = ctypes.CDLL(sys.argv[1])
lib.vt_pylines_line.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
minor = sys.version_info[1]
kind = 0 if minor == 9 else 1 if minor == 10 else 2  # enum vt_py_lines


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def weird(x):
    # Odd shapes for the table: long jumps, lines far apart, a long one-line expression.
    for i in range(3):
        try:
            x += [i for i in range(2)][0]
        except ValueError:
            pass



























    return (x +
            1)


checked = mismatched = 0
import argparse, asyncio, collections, dataclasses, email.message, json, os, re, threading, typing  # noqa
modules = [argparse, asyncio.base_events, collections, dataclasses, email.message, json.decoder, os, re, threading,
           typing, sys.modules[__name__]]
for m in modules:
    with open(m.__file__) as f:
        top = compile(f.read(), m.__file__, "exec")
    for co in codes(top):
        table = co.co_lnotab if minor == 9 else co.co_linetable
        for addr in range(-2, len(co.co_code), 2):
            want = addr2line(co, addr)
            got = lib.vt_pylines_line(kind, table, len(table), co.co_firstlineno, addr)
            checked += 1
            if got != want:
                mismatched += 1
                if mismatched <= 5:
                    print("mismatch %s %s addr %d: got %d, want %d" % (m.__name__, co.co_name, addr, got, want))
print("checked %d mismatched %d" % (checked, mismatched))
if minor >= 13:
    # The offsets the interpreter publishes (_Py_DebugOffsets at the start of _PyRuntime) against ours.
    lib.vt_pylayout_for.restype = ctypes.c_void_p
    lib.vt_pylayout_check_published.restype = ctypes.c_char_p
    lib.vt_pylayout_check_published.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    why = lib.vt_pylayout_check_published(lib.vt_pylayout_for(minor), runtime)
    print("published", "agree" if why is None else why.decode())
