# jax.profiler of the fake JAX (tests/fake/jax): device_memory_profile() as JAX's, a gzipped pprof
# profile.proto of the live buffers, one sample per (Python stack, device) with their count and bytes,
# labelled kind=buffer and device=cuda:N; plus one executable of 0 bytes, as JAX lists its compiled
# programs.
import gzip

import jax


def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num, value):
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def _packed(num, values):
    return _field(num, b"".join(_varint(v) for v in values))


def device_memory_profile():
    strings = {"": 0}

    def s(text):
        return strings.setdefault(text, len(strings))

    functions, locations, groups = {}, {}, {}
    for dev in jax.local_devices():
        for n, frames in dev.pool.live.values():
            g = groups.setdefault((tuple(frames), str(dev)), [0, 0])
            g[0] += 1
            g[1] += n
    msg = _field(1, _field(1, s("allocations")) + _field(2, s("count")))
    msg += _field(1, _field(1, s("space")) + _field(2, s("bytes")))
    samples = [(frames, dev, "buffer", g[0], g[1]) for (frames, dev), g in groups.items()]
    samples.append((samples[0][0] if samples else (), None, "executable", 1, 0))
    for frames, dev, kind, count, nbytes in samples:
        locs = []
        for file, line, name in frames:
            fid = functions.setdefault((file, name), len(functions) + 1)
            locs.append(locations.setdefault((fid, line), len(locations) + 1))
        labels = _field(3, _field(1, s("kind")) + _field(2, s(kind)))
        if dev is not None:
            labels += _field(3, _field(1, s("device")) + _field(2, s(dev)))
        msg += _field(2, _packed(1, locs) + _packed(2, [count, nbytes]) + labels)
    for (fid, line), lid in locations.items():
        msg += _field(4, _field(1, lid) + _field(4, _field(1, fid) + _field(2, line)))
    for (file, name), fid in functions.items():
        msg += _field(5, _field(1, fid) + _field(2, s(name)) + _field(3, s(name)) + _field(4, s(file)))
    for text in strings:  # in the order of their ids
        msg += _field(6, text.encode())
    return gzip.compress(msg)
