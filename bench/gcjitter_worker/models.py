"""Models: each build_* returns step(), one optimizer step on a fixed
synthetic batch that returns the tensors the step produced."""

from .common import UsageError

MAX_DEVICE_WAIT_MS = 3600000.0  # an hour per step: anything longer is a typo


def scale_compute(args):
    """--compute-scale F: F times the model's compute per step, nothing else
    changed. Torch models scale the batch, model none its --work loop:
    max(1, round(size*F)) (a work of 0 stays 0). Applied to args once,
    before the model is built, so the garbage and the GC schedule code never
    see it, and the meta record's sizes are the sizes that ran."""
    f = args.compute_scale
    if f == 1:
        return
    if args.model == "none":
        if args.work > 0:
            args.work = max(1, int(round(args.work * f)))
    else:
        args.batch = max(1, int(round(args.batch * f)))


def build_model(args, torch, device, notes):
    if args.model == "none":
        return _build_none(args)
    if torch is None:
        raise UsageError("model %r needs torch; use -model none on hosts without it" % args.model)
    torch.manual_seed(args.seed)
    dev = device.torch_device
    if args.model == "mlp":
        return _build_mlp(args, torch, dev)
    if args.model == "gpt":
        return _build_gpt(args, torch, dev)
    if args.model == "resnet":
        return _build_resnet(args, torch, dev, notes)
    raise UsageError("unknown model %r (want mlp, gpt, resnet or none)" % args.model)


def _build_none(args):
    work = args.work

    def step():
        # Integers are not tracked by the collector, so this loop costs time
        # and makes no garbage of its own.
        acc = 0
        for k in range(work):
            acc += k * k
        return None
    return step


def _train_step(torch, model, opt, loss_fn):
    def step():
        opt.zero_grad()
        out, loss = loss_fn(model)
        loss.backward()
        opt.step()
        return out
    return step


def _build_mlp(args, torch, dev):
    nn = torch.nn
    layers = []
    width = args.hidden
    for _ in range(args.layers):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    model = nn.Sequential(*layers).to(dev)
    x = torch.randn(args.batch, width, device=dev)
    y = torch.randn(args.batch, 1, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def loss_fn(m):
        out = m(x)
        return out, nn.functional.mse_loss(out, y)
    return _train_step(torch, model, opt, loss_fn)


def _build_gpt(args, torch, dev):
    nn = torch.nn
    F = nn.functional
    d, heads, seq, vocab = args.hidden, args.heads, args.seq, args.vocab
    if d % heads:
        raise UsageError("gpt: hidden (%d) must be a multiple of heads (%d)" % (d, heads))

    class Block(nn.Module):
        def __init__(self):
            super(Block, self).__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mask):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, heads, d // heads).transpose(1, 2)
            k = k.view(b, t, heads, d // heads).transpose(1, 2)
            v = v.view(b, t, heads, d // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5)
            att = att.masked_fill(mask[:t, :t], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super(GPT, self).__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList([Block() for _ in range(args.layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))
            self.register_buffer("positions", torch.arange(seq))

        def forward(self, idx):
            x = self.tok(idx) + self.pos(self.positions[: idx.shape[1]])
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    model = GPT().to(dev)
    tokens = torch.randint(0, vocab, (args.batch, seq + 1), device=dev)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def loss_fn(m):
        logits = m(inputs)
        return logits, F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    return _train_step(torch, model, opt, loss_fn)


def _build_resnet(args, torch, dev, notes):
    try:
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
    except ImportError:
        # Hosts without torchvision (a bare NPU image, a pip-less venv) still
        # get the customer's workload: the same ResNet-18 layers, built here.
        notes.append("resnet: torchvision not importable; using the built-in ResNet-18 (same layers)")
        model = _resnet18(torch.nn, num_classes=10)
    model = model.to(dev)
    x = torch.randn(args.batch, 3, args.image, args.image, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def loss_fn(m):
        out = m(x)
        return out, torch.nn.functional.cross_entropy(out, y)
    return _train_step(torch, model, opt, loss_fn)


def _resnet18(nn, num_classes):
    """ResNet-18 as torchvision builds it: stem, four stages of two basic
    blocks (64, 128, 256, 512 channels), average pool, linear head."""

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + idt)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)
