# cupy.cuda of the fake CuPy (tests/fake/cupy): the current device, always 0 on the fake driver, and memory
# hooks kept per thread and called around the pool's malloc and free, as CuPy's are.
import threading


class runtime:
    @staticmethod
    def getDevice():
        return 0


class _Hooks(threading.local):
    def __init__(self):
        self.hooks = {}


_tls = _Hooks()


class memory_hook:
    @staticmethod
    def get_memory_hooks():
        return _tls.hooks


class MemoryHook:
    name = "MemoryHook"

    def __enter__(self):
        if self.name in _tls.hooks:
            raise RuntimeError("hook %s already exists" % self.name)
        _tls.hooks[self.name] = self
        return self

    def __exit__(self, *exc):
        del _tls.hooks[self.name]

    def malloc_preprocess(self, **kwargs):
        pass

    def malloc_postprocess(self, **kwargs):
        pass

    def free_preprocess(self, **kwargs):
        pass

    def free_postprocess(self, **kwargs):
        pass
