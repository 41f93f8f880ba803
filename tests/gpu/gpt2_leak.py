# GPU suite (tests/gpu/gpt2_leak_drive.py runs it under libvramtrace.so): GPT-2 from transformers with random
# weights, in one of four shapes, each leaking at a line marked LEAK (or not leaking at all):
#   serve eager      requests of 16 prompt tokens and 8 decoded ones, each request's past_key_values kept
#   serve compiled   the same model under torch.compile(mode="reduce-overhead"), each request's logits kept
#   train leak       a small GPT-2 trained a step at a time; each step's validation loss kept with its graph
#   train ok         the same, keeping loss.item()
# Between rounds it stops at a quiet point: it prints torch's figures ({"quiet": N, ...}) and waits for a
# line on stdin (the driver dumps it from outside meanwhile). Then, for serve, a busy phase: requests back
# to back for a few seconds, each timed on CLOCK_MONOTONIC, while the driver dumps it every second.
import json
import os
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

kind, shape = sys.argv[1], sys.argv[2]
rounds = int(os.environ.get("GPT2_ROUNDS", "6"))
torch.manual_seed(0)


def say(**kw):
    print(json.dumps(kw), flush=True)


def quiet(n):
    torch.cuda.synchronize()
    say(quiet=n, allocated=torch.cuda.memory_allocated(), reserved=torch.cuda.memory_reserved())
    sys.stdin.readline()


kept = []

if kind == "serve":
    cfg = GPT2Config()
    model = GPT2LMHeadModel(cfg).cuda().eval()
    if shape == "compiled":
        cmodel = torch.compile(model, mode="reduce-overhead")

        def request(i):
            ids = torch.randint(0, cfg.vocab_size, (1, 32), device="cuda")
            with torch.no_grad():
                logits = cmodel(ids, use_cache=False).logits
                kept.append(logits.clone())  # LEAK
    else:

        def request(i):
            ids = torch.randint(0, cfg.vocab_size, (1, 16), device="cuda")
            with torch.no_grad():
                out = model(ids, use_cache=True)  # LEAK
                tok = out.logits[:, -1:].argmax(-1)
                past = out.past_key_values
                for _ in range(8):
                    out = model(tok, past_key_values=past, use_cache=True)  # LEAK
                    past = out.past_key_values
                    tok = out.logits[:, -1:].argmax(-1)
            kept.append(past)

    for i in range(4):  # warm-up (compiles and captures the compiled shape)
        request(i)
    kept.clear()
    for r in range(rounds):
        quiet(r)
        for i in range(4):
            request(i)
    quiet(rounds)
    # Busy: requests back to back, each timed, while the driver dumps from outside.
    kept.clear()
    say(busy="start")
    spans, until = [], time.monotonic() + float(os.environ.get("GPT2_BUSY_S", "8"))
    while time.monotonic() < until:
        t0 = time.monotonic()
        request(0)
        torch.cuda.synchronize()
        spans.append((t0, time.monotonic()))
        if len(kept) > 64:
            kept.clear()
    say(busy="end", spans=spans)
else:
    cfg = GPT2Config(n_layer=4, n_embd=256, n_head=4, n_positions=256)
    model = GPT2LMHeadModel(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (8, 128), device="cuda")
    vx = torch.randint(0, cfg.vocab_size, (8, 128), device="cuda")
    losses = []

    def step():
        loss = model(x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        val = model(vx, labels=vx).loss  # LEAK (with its graph: no torch.no_grad())
        losses.append(val if shape == "leak" else val.item())

    for _ in range(3):
        step()
    for r in range(rounds):
        quiet(r)
        for _ in range(4):
            step()
    quiet(rounds)
say(done=True)
