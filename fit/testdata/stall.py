# A loop whose tail is its data loading, not GC: every 50th batch waits
# 20 ms (a slow read, a shard boundary), and the loop makes little cyclic
# garbage (a log record that points at itself, and its list of tags, each
# step), so it collects
# a few times per 1000 steps, never fully, and never in a slow step.
import sys
import time
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 32), torch.randint(0, 4, (64,))
log = []
for step in range(int(sys.argv[1])):
    if step % 50 == 49:
        time.sleep(0.02)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    record = {"step": step, "tags": []}
    record["self"] = record
