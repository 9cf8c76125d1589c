# A plain training loop: a small MLP, SGD, and per-step metrics (small
# dicts that refer back to their step's record) kept for the last 4 steps.
import sys
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
recent = [None] * 4
for step in range(int(sys.argv[1])):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    rec = {"step": step, "metrics": []}
    for k in range(500):
        m = {"k": k, "rec": rec}
        rec["metrics"].append(m)
    recent[step % 4] = rec
