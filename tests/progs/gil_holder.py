# A Python program that uses CUDA (the fake runtime, through ctypes) and then holds the GIL for a few
# seconds in one C call that does not release it (tests/t_dumpwait.sh): a dump's bridge must wait for
# the GIL meanwhile, and a request that comes then is told so.
import ctypes
import sys

rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
if rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) != 0:
    sys.exit("cudaMalloc failed")
print("ready", flush=True)
ctypes.PyDLL("libc.so.6").sleep(int(sys.argv[1]) if len(sys.argv) > 1 else 4)  # PyDLL: the GIL stays held
print("done", flush=True)
