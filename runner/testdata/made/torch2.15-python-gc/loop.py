"""A training loop under torch.profiler with Python GC events (torch 2.9+:
_ExperimentalConfig(record_python_gc_info=True), which takes effect only
with with_stack=True: the events come from the profiler's Python tracer).
Run under gcjitter's own tracer, so both saw the same collections:

    gcjitter trace -o tr -warmup 0 -- python loop.py trace.json 12
    gzip -9 trace.json; cp tr/runs/loop/traced/run-01.jsonl tracer.jsonl

Made with python 3.11.7, torch 2.15.0+cu132 (PyPI, on the CPU), by
scripts/stack.sh frameworks."""
import gc, json, sys, torch
from torch.profiler import profile, ProfilerActivity
from torch._C._profiler import _ExperimentalConfig
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
keep = []
class Node:
    def __init__(self): self.ref = None
with profile(activities=[ProfilerActivity.CPU], with_stack=True, experimental_config=_ExperimentalConfig(record_python_gc_info=True)) as prof:
    for i in range(steps):
        x = torch.randn(32, 64)
        loss = model(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        for _ in range(150):
            a, b = Node(), Node(); a.ref, b.ref = b, a
        if i % 4 == 3:
            gc.collect()
        prof.step()
prof.export_chrome_trace(sys.argv[1])
