# Reference cycles made in a logging callback, and a large long-lived
# structure (a cache of 75,000 small records, 150,000 objects).
import sys
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
cache = [{"id": i, "tags": [i]} for i in range(75000)]
class Logger:
    def __init__(self):
        self.records = []
    def on_step(self, step, loss):
        rec = {"step": step, "loss": float(loss), "logger": self, "children": []}
        rec["parent"] = rec
        for k in range(600):
            rec["children"].append({"k": k, "up": rec})
        self.records = (self.records + [rec])[-6:]  # the last 6 kept; older ones become cyclic garbage
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
log = Logger()
for step in range(int(sys.argv[1])):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log.on_step(step, loss)
