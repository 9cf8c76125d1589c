# A DataLoader, and a history of the last 50 steps: each step's loss, its
# output tensor and the per-sample predictions as Python objects.
import collections
import sys
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
torch.set_num_threads(1)
data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
loader = DataLoader(data, batch_size=32, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
history = collections.deque(maxlen=50)
steps = int(sys.argv[1])
step = 0
while step < steps:
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        labels = out.argmax(1).tolist()
        preds = [[i, p, {"sample": i}, {"pred": p}, [i]] for _ in range(3) for i, p in enumerate(labels)]
        entry = {"loss": loss.detach(), "out": out.detach(), "preds": preds, "step": step}
        entry["self"] = entry
        for p in preds:
            p.append(entry)
        history.append(entry)
        step += 1
        if step >= steps:
            break
