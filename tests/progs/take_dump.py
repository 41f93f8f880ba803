# For the Python test programs: a dump now through vramtrace's public call, found in the process as any
# program that also runs without the library would find it; its path, or "failed".
import ctypes

_lib = ctypes.CDLL(None)
_buf = ctypes.create_string_buffer(4096)


def dump():
    rc = _lib.vramtrace_dump(_buf, ctypes.c_size_t(4096))
    return _buf.value.decode() if rc == 0 else "failed"
