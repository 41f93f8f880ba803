# GPU suite: a PyTorch loop on two threads, each on its own stream, with allocations of varying sizes;
# prints "ready" when the loop starts (the suite then sends dump signals until it ends) and a hash of
# every result, which must be the same with and without libvramtrace.so.
import hashlib
import threading

import torch

torch.manual_seed(1)
weights = [torch.randn(1024, 1024, device="cuda") for _ in range(2)]
results = [None, None]


def loop(k):
    stream = torch.cuda.Stream()
    h = hashlib.sha256()
    with torch.cuda.stream(stream):
        x = torch.ones(256, 1024, device="cuda") * (k + 1)
        for i in range(2000):
            n = 64 * (i % 8 + 1)
            y = torch.relu(x[:n] @ weights[k]) / 1024
            x = torch.cat([y, x[n:]]) if n < x.shape[0] else y[:256]
            if i % 100 == 99:
                h.update(x.cpu().numpy().tobytes())
        stream.synchronize()
    results[k] = h.hexdigest()


print("ready", flush=True)
threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("result", results[0], results[1], flush=True)
print("done", flush=True)
