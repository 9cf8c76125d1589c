"""gcjitter step worker: one training process whose every step and every
garbage collection is recorded.

The worker runs a synthetic training loop (a torch model, or pure Python for
hosts without torch), makes seeded cyclic garbage in plain Python objects each
step, applies one GC policy, and writes a versioned JSON-lines record stream
(meta, step..., end | error) to a channel of its own (--records-fd or
--records), never to stdout/stderr, which belong to the workload.

Constraints that shape this file:
  * standard library plus torch (torch_npu when importable); CPython 3.8-3.14,
    free-threaded builds included, so no syntax newer than 3.8;
  * nothing inside the timed region or the gc callback may allocate objects
    the collector tracks, or the recorder would move the schedule it observes:
    events go into preallocated arrays and step records are formatted by hand;
  * every step record is written with one os.write, so a crash loses nothing
    already measured;
  * one file: `gcjitter worker -script` prints it as the program users ship
    with their own launcher (torchrun, mpirun), and its name (a hash of this
    file) is the worker every run records; so it is not split into modules
    as the tracer is, though it is past the house's 600 lines.

The Go side (bench/records.go) owns the schema; keep SCHEMA in step with it.
"""

import array
import gc
import os
import random
import sys
import time

SCHEMA = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3

# How this process started: "cold" (its own interpreter), or "warm" (forked
# by serve_warm from a server that imported torch once). The meta record
# says which.
_STARTED = "cold"
# In a warm child, where to report the modules imported before the
# collector's reset, for the server to import before the next fork (-1:
# nowhere).
_MODULES_FD = -1
_MODULES_AT_FORK = 0

perf_counter_ns = time.perf_counter_ns


class UsageError(Exception):
    """A bad flag, model, device or policy: reported before any step runs."""


# --------------------------------------------------------------------------
# GC policies


class Policy(object):
    """A parsed GC policy: what to set up before the loop and what to do at
    each step boundary. Parsing is strict so a typo never silently measures
    the default collector."""

    __slots__ = ("text", "disabled", "threshold", "freeze", "manual_every",
                 "manual_gen", "collect_every_step", "empty_cache_every_step")

    def __init__(self, text):
        self.text = text
        self.disabled = False
        self.threshold = None
        self.freeze = False
        self.manual_every = 0
        self.manual_gen = 2
        self.collect_every_step = False
        self.empty_cache_every_step = False

    @property
    def has_step_action(self):
        return (self.manual_every > 0 or self.collect_every_step
                or self.empty_cache_every_step)


def _int_field(text, what, lo, hi):
    try:
        v = int(text, 10)
    except ValueError:
        raise UsageError("%s must be an integer, got %r" % (what, text))
    if v < lo or (hi is not None and v > hi):
        rng = ">= %d" % lo if hi is None else "in %d..%d" % (lo, hi)
        raise UsageError("%s must be %s, got %d" % (what, rng, v))
    return v


def parse_policy(text):
    """Parse a policy such as "default", "threshold:700,10,1000" or
    "freeze+manual:100:1". Raises UsageError naming the bad part."""
    try:
        return _parse_policy(text)
    except UsageError as e:
        msg = str(e)
        if not msg.startswith("policy ") and not msg.startswith("empty"):
            msg = "policy %r: %s" % (text, msg)
        raise UsageError(msg)


def _parse_policy(text):
    p = Policy(text)
    if not text:
        raise UsageError("empty GC policy")
    parts = text.split("+")
    seen = set()
    for part in parts:
        name, _, arg = part.partition(":")
        if name in seen:
            raise UsageError("policy %r: %r given twice" % (text, name))
        seen.add(name)
        if name in ("default", "disabled", "freeze", "collect-every-step",
                    "empty-cache-every-step") and arg:
            raise UsageError("policy %r: %r takes no argument" % (text, name))
        if name == "default":
            if len(parts) > 1:
                raise UsageError("policy %r: 'default' cannot be combined" % text)
        elif name == "disabled":
            p.disabled = True
        elif name == "threshold":
            fields = arg.split(",")
            if not arg or len(fields) > 3:
                raise UsageError("policy %r: threshold needs 1 to 3 integers: threshold:T0[,T1[,T2]]" % text)
            p.threshold = tuple(_int_field(f, "threshold value", 0, None) for f in fields)
        elif name == "freeze":
            p.freeze = True
        elif name == "manual":
            fields = arg.split(":")
            if not arg or len(fields) > 2:
                raise UsageError("policy %r: manual needs an interval: manual:N[:gen]" % text)
            p.manual_every = _int_field(fields[0], "manual interval N", 1, None)
            if len(fields) == 2:
                p.manual_gen = _int_field(fields[1], "manual generation", 0, 2)
        elif name == "collect-every-step":
            p.collect_every_step = True
        elif name == "empty-cache-every-step":
            p.empty_cache_every_step = True
        else:
            raise UsageError(
                "policy %r: unknown part %r (want default, disabled, threshold:T0,T1,T2, "
                "freeze, manual:N[:gen], collect-every-step, empty-cache-every-step, joined by +)"
                % (text, part))
    if p.disabled and (p.threshold is not None or p.manual_every):
        raise UsageError("policy %r: 'disabled' conflicts with threshold/manual (manual already disables automatic GC)" % text)
    if p.manual_every and (p.threshold is not None or p.collect_every_step):
        raise UsageError("policy %r: manual disables automatic GC; it cannot be combined with threshold or collect-every-step" % text)
    return p


# --------------------------------------------------------------------------
# Devices


class Device(object):
    """Where the model runs and how to wait for it. synchronize is None on
    cpu so the timed region pays nothing for it."""

    __slots__ = ("kind", "index", "torch_device", "name", "synchronize",
                 "memory_allocated", "empty_cache", "module")

    def __init__(self, kind, index, torch_device, name, module=None):
        self.kind = kind
        self.index = index
        self.torch_device = torch_device
        self.name = name
        self.module = module
        self.synchronize = None
        self.memory_allocated = None
        self.empty_cache = None
        if module is not None:
            self.synchronize = module.synchronize
            self.memory_allocated = module.memory_allocated
            self.empty_cache = module.empty_cache


def _parse_device(spec):
    kind, _, idx = spec.partition(":")
    if kind not in ("auto", "cpu", "cuda", "npu"):
        raise UsageError("unknown device %r (want auto, cpu, cuda[:i] or npu[:i])" % spec)
    if idx and kind in ("auto", "cpu"):
        raise UsageError("device %r takes no index" % spec)
    index = _int_field(idx, "device index", 0, None) if idx else None
    return kind, index


def _import_torch_npu():
    """torch_npu registers torch.npu when imported; absent on most hosts."""
    try:
        import torch_npu  # noqa: F401
    except ImportError:
        return None
    return torch_npu


def resolve_device(spec, torch, local_rank=0):
    """Resolve auto|cpu|cuda[:i]|npu[:i]. auto prefers npu, then cuda, then cpu.
    Without an explicit index, rank LOCAL_RANK of a multi-rank job takes
    device LOCAL_RANK, as torchrun jobs do (every rank on device 0 would put
    all of them on one accelerator, which nccl and hccl refuse)."""
    kind, index = _parse_device(spec)
    explicit = index is not None
    if not explicit:
        index = local_rank
    if torch is None:
        if kind in ("auto", "cpu"):
            return Device("cpu", 0, None, "cpu")
        raise UsageError("device %r needs torch, which is not importable" % spec)

    def check(name, module):
        count = module.device_count()
        if index < count:
            return
        if explicit:
            raise UsageError("device %s:%d: only %d %s devices" % (name, index, count, name))
        raise UsageError("local rank %d needs device %s:%d, but only %d %s devices are visible: "
                         "run at most %d ranks per host, or use device cpu" % (index, name, index, count, name, count))

    if kind in ("auto", "npu"):
        npu = None
        if _import_torch_npu() is not None:
            npu = getattr(torch, "npu", None)
        if npu is not None and npu.is_available():
            check("npu", npu)
            npu.set_device(index)
            return Device("npu", index, "npu:%d" % index, _safe_name(npu, index), npu)
        if kind == "npu":
            raise UsageError("device %r: torch_npu is not importable or no npu is available" % spec)
    if kind in ("auto", "cuda"):
        cuda = torch.cuda
        if cuda.is_available():
            check("cuda", cuda)
            cuda.set_device(index)
            return Device("cuda", index, "cuda:%d" % index, _safe_name(cuda, index), cuda)
        if kind == "cuda":
            raise UsageError("device %r: torch.cuda is not available (torch %s)" % (spec, torch.__version__))
    return Device("cpu", 0, "cpu", "cpu")


def _safe_name(module, index):
    try:
        return str(module.get_device_name(index))
    except Exception as e:  # a name is provenance, not worth failing over
        return "unknown (%s)" % e


# --------------------------------------------------------------------------
# An emulated asynchronous device (--emu-device-ms)
#
# On CUDA and Ascend the host enqueues kernels and runs ahead of the device;
# it blocks only at a sync or when the launch queue is full, so a host GC
# pause costs the step only what the queued work cannot cover. The emulated
# device is a separate process, so no pause of the host's interpreter (a
# full collection holds the GIL) can stop it: it runs the kernels in order
# on its own timeline (start = max(launch, previous end)), sleeps until each
# one ends, and only then frees its slot in the bounded launch queue.
#
# Protocol, all pipes: the host writes 16-byte commands (kind, host
# perf_counter_ns) to CMD; the queue's free slots are bytes in CREDIT (depth
# bytes at the start; the host takes one per launch and the device gives one
# back per finished kernel); a mid-step sync is answered by one byte on ACK;
# the step's sync by the step's busy spans on RESULT (count, then start/end
# pairs, then each kernel's end; host clock: perf_counter_ns is CLOCK_MONOTONIC, shared by both
# processes). The host side allocates nothing the collector tracks: the
# commands and the result are preallocated arrays written and read in place.

EMU_KERNEL, EMU_SYNC_MID, EMU_SYNC_STEP = 1, 2, 3
EMU_MAX_KERNELS = 256  # bench/config.go's MaxEmulatedKernels (config_test checks)
# A busy span starts only with a kernel, so room for as many spans as
# kernels means no idle gap is ever merged into one and counted as busy.
EMU_MAX_SPANS = EMU_MAX_KERNELS
# The step's result: the span count, the spans, then each kernel's end:
# 6,152 bytes, over PIPE_BUF (4096), so the pipe may hand it over in
# pieces and emu_read_result reads until it is whole.
EMU_ENDS = 1 + 2 * EMU_MAX_SPANS
EMU_RESULT_SLOTS = EMU_ENDS + EMU_MAX_KERNELS


class EmulatedDevice(object):
    """The host's end of the emulated device: its pipes, the device
    process, and the preallocated messages."""

    __slots__ = ("proc", "cmd", "credit", "ack", "result", "kmsg", "mmsg", "smsg",
                 "spans", "whole", "rest", "kernels", "mid_syncs", "depth", "kernel_ns", "launched")

    def __init__(self, step_ms, kernels, depth, syncs, jitter, seed):
        import subprocess
        self.kernels, self.depth = kernels, depth
        self.kernel_ns = int(round(step_ms * 1e6 / kernels))
        # Mid-step syncs after evenly spaced kernels (never after the last:
        # the step's own sync is there).
        self.mid_syncs = array.array("b", [0]) * kernels
        for j in range(1, syncs + 1):
            self.mid_syncs[j * kernels // (syncs + 1) - 1] = 1
        cmd_r, self.cmd = os.pipe()
        self.credit, credit_w = os.pipe()
        self.ack, ack_w = os.pipe()
        self.result, result_w = os.pipe()
        os.write(credit_w, b"c" * depth)
        child = (cmd_r, credit_w, ack_w, result_w)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), "--serve-device",
             ",".join(str(fd) for fd in child), str(self.kernel_ns), repr(jitter), str(seed)],
            pass_fds=child, stdin=subprocess.DEVNULL, close_fds=True)
        for fd in child:
            os.close(fd)
        self.kmsg = array.array("q", [EMU_KERNEL, 0])
        self.mmsg = array.array("q", [EMU_SYNC_MID, 0])
        self.smsg = array.array("q", [EMU_SYNC_STEP, 0])
        self.spans = array.array("q", [0]) * EMU_RESULT_SLOTS
        self.whole = [memoryview(self.spans).cast("B")]
        self.rest = [bytearray(EMU_RESULT_SLOTS * 8)]
        self.launched = array.array("q", [0]) * kernels

    def close(self):
        for fd in (self.cmd, self.credit, self.ack, self.result):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()

    def meta(self):
        return {"kind": "emulated", "kernel_ns": self.kernel_ns, "kernels": self.kernels,
                "queue_depth": self.depth, "mid_syncs": sum(self.mid_syncs)}


def emu_read_result(readv, fd, whole, rest):
    """Reads the step's result into whole[0] (the spans' bytes): readv the
    first piece in place, and any later piece into rest[0], copied on byte
    by byte. Integers and the preallocated buffers only, so a result the
    pipe splits costs the collector nothing either."""
    size = len(whole[0])
    got = readv(fd, whole)
    if got < size:
        into, came = whole[0], rest[0]
        while got < size:
            m = readv(fd, rest)
            if m == 0:
                raise EOFError("the emulated device ended mid-result (%d of %d bytes)" % (got, size))
            for k in range(m):
                into[got + k] = came[k]
            got += m


def device_events(device):
    """A real accelerator's timing events for the step (start, end), or
    (None, None) where the device has none (cpu)."""
    module = device.module
    event = getattr(module, "Event", None) if device.kind in ("cuda", "npu") else None
    if event is None:
        return None, None
    return event(enable_timing=True), event(enable_timing=True)


def device_account(spans, launched, kernels, t0, t1, t_sync, buf, used, width):
    """The step's device fields, from the device's busy spans and kernel
    ends (spans, host clock), the kernels' launch times (launched[:kernels];
    kernels 0 for a real device, whose queue is not seen) and the recorder's
    events (buf[:used], `width` slots each): busy time inside [t0, t1], idle
    time, idle time inside GC pauses, the host's lead at its final sync
    (t_sync), and the lead when the step's longest collection began: the
    work launched before it that was still to run (-1: no collection in the
    step). Only integers and arrays: the loops' lengths depend on timing,
    so they must allocate nothing the collector counts."""
    n = spans[0]
    busy = 0
    last_end = 0
    for j in range(1, 1 + 2 * n, 2):
        s, e = spans[j], spans[j + 1]
        if s < t0:
            s = t0
        if e > t1:
            e = t1
        if e > s:
            busy += e - s
        last_end = spans[j + 1]
    slack = last_end - t_sync if last_end > t_sync else 0
    idle_gc = 0
    lead_gc = -1
    longest = -1
    for i in range(0, used, width):
        start = buf[i]
        if start < t0:
            continue  # between steps: not in this step's wall time
        gs, ge = start, start + buf[i + 1]
        if ge > t1:
            ge = t1
        covered = 0
        lead = 0
        if kernels:
            for k in range(kernels):
                if launched[k] <= start and spans[EMU_ENDS + k] - start > lead:
                    lead = spans[EMU_ENDS + k] - start
        else:
            for j in range(1, 1 + 2 * n, 2):
                if spans[j] <= start < spans[j + 1]:
                    lead = spans[j + 1] - start
        for j in range(1, 1 + 2 * n, 2):
            s, e = spans[j], spans[j + 1]
            if s < gs:
                s = gs
            if e > ge:
                e = ge
            if e > s:
                covered += e - s
        if ge > gs:
            idle_gc += (ge - gs) - covered
        if buf[i + 1] > longest:
            longest = buf[i + 1]
            lead_gc = lead
    return ',"dev_busy":%d,"dev_idle":%d,"dev_idle_gc":%d,"dev_slack":%d,"dev_lead_gc":%d' % (
        busy, (t1 - t0) - busy, idle_gc, slack, lead_gc)


def write_timeline(f, i, t0, t1, t_sync, spans, launched, kernels, buf, used, width):
    """One step's timeline as a JSON line (host clock, ns): the step's
    bounds, the host's final sync, its launches, the device's busy spans and
    kernel ends, and the collections (start, pause, generation)."""
    import json
    n = spans[0]
    f.write(json.dumps({
        "i": i, "t0": t0, "t1": t1, "sync": t_sync,
        "launch": list(launched[:kernels]),
        "ends": list(spans[EMU_ENDS:EMU_ENDS + kernels]),
        "spans": [[spans[j], spans[j + 1]] for j in range(1, 1 + 2 * n, 2)],
        "gc": [[buf[k], buf[k + 1], buf[k + 2]] for k in range(0, used, width)],
    }) + "\n")


def _tight_timer_slack():
    """Linux wakes a sleeper up to 50 us late by default (timer slack);
    the device's kernels end on time only with it at 1 ns."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
    except Exception:
        pass


def serve_device(argv):
    """The device process: --serve-device CMD,CREDIT,ACK,RESULT KERNEL_NS
    JITTER SEED. Runs until the host closes CMD."""
    cmd, credit, ack, result = (int(x) for x in argv[0].split(","))
    kernel_ns, jitter, seed = int(argv[1]), float(argv[2]), int(argv[3])
    _tight_timer_slack()
    rng = random.Random(seed)
    pc, sleep = time.perf_counter_ns, time.sleep
    spans = array.array("q", [0]) * EMU_RESULT_SLOTS
    out = memoryview(spans).cast("B")
    n = 0
    kernel = 0
    prev_end = 0
    pending = b""
    try:
        while True:
            while len(pending) < 16:
                chunk = os.read(cmd, 4096)
                if not chunk:
                    return 0  # the host is done, or gone
                pending += chunk
            words = array.array("q")
            words.frombytes(pending[:len(pending) // 16 * 16])
            pending = pending[len(words) * 8:]
            for k in range(0, len(words), 2):
                kind, at = words[k], words[k + 1]
                if kind == EMU_KERNEL:
                    dur = kernel_ns
                    if jitter:
                        dur = int(kernel_ns * (1 + jitter * (2 * rng.random() - 1)))
                    start = at if at > prev_end else prev_end
                    end = start + dur
                    if n and spans[2 * n] == start:
                        spans[2 * n] = end  # back to back: one busy span
                    else:
                        n += 1
                        spans[2 * n - 1], spans[2 * n] = start, end
                    prev_end = end
                    spans[EMU_ENDS + kernel] = end
                    kernel += 1
                    wait = end - pc()
                    if wait > 0:
                        sleep(wait / 1e9)
                    os.write(credit, b"c")
                elif kind == EMU_SYNC_MID:
                    os.write(ack, b"a")
                elif kind == EMU_SYNC_STEP:
                    spans[0] = n
                    sent = os.write(result, out)
                    while sent < len(out):  # a signal can cut a write short
                        sent += os.write(result, out[sent:])
                    n = kernel = 0
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


# --------------------------------------------------------------------------
# Models: each build_* returns step(), one optimizer step on a fixed
# synthetic batch that returns the tensors the step produced.


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


# --------------------------------------------------------------------------
# Cyclic garbage. Plain Python objects only: the autograd graph's own cycles
# live in C++ and are invisible to the collector.


class Node(object):
    """One garbage object; instances and their __dict__ are tracked."""

    def __init__(self, payload=None):
        self.next = None
        self.payload = payload


def _pairs(rng, n, size, tensors, keep):
    for _ in range(n):
        a, b = Node(), Node()
        a.next, b.next = b, a
        if keep is not None:
            keep.append(a)


def _ring(rng, n, size, tensors, keep):
    for _ in range(n):
        first = prev = Node()
        for _ in range(size - 1):
            node = Node()
            prev.next = node
            prev = node
        prev.next = first
        if keep is not None:
            keep.append(first)


def _graph(rng, n, size, tensors, keep):
    # A random digraph with out-degree 2: almost surely cyclic, and the ring
    # edge makes sure every node is on a cycle.
    randrange = rng.randrange
    for _ in range(n):
        nodes = [Node() for _ in range(size)]
        for k in range(size):
            nodes[k].next = nodes[(k + 1) % size]
            nodes[k].payload = nodes[randrange(size)]
        if keep is not None:
            keep.append(nodes[0])
        del nodes


def _tensor_holders(rng, n, size, tensors, keep):
    # Cycles that keep this step's tensors alive until a collection frees
    # them, as a model that stores activations in a self-referencing
    # structure does: device memory then rises and falls with the GC.
    for _ in range(n):
        first = prev = Node(tensors)
        for _ in range(size - 1):
            node = Node(tensors)
            prev.next = node
            prev = node
        prev.next = first
        if keep is not None:
            keep.append(first)


def _raise_and_keep(depth):
    if depth > 0:
        return _raise_and_keep(depth - 1)
    try:
        raise ValueError("gcjitter synthetic error")
    except ValueError as e:
        err = e  # e -> traceback -> this frame -> err: a cycle
        return err


def _traceback(rng, n, size, tensors, keep):
    for _ in range(n):
        holder = Node(_raise_and_keep(max(size - 1, 0)))
        holder.next = holder
        if keep is not None:
            keep.append(holder)


def _logdict(rng, n, size, tensors, keep):
    # Logging/metrics dicts with back references to their parent.
    for _ in range(n):
        root = {"step": n, "children": []}
        for k in range(size - 1):
            root["children"].append({"parent": root, "k": k})
        if keep is not None:
            keep.append(root)


PATTERNS = {
    "pairs": _pairs,
    "ring": _ring,
    "graph": _graph,
    "tensor-holders": _tensor_holders,
    "traceback": _traceback,
    "logdict": _logdict,
}


def parse_garbage(text):
    if text in ("", "none"):
        return []
    out = []
    for name in text.split("+"):
        if name not in PATTERNS:
            raise UsageError("unknown garbage pattern %r (want %s, or none; join with +)"
                             % (name, ", ".join(sorted(PATTERNS))))
        out.append(PATTERNS[name])
    return out


def build_long_lived(k, refs=0, seed=0):
    """K tracked objects that live for the whole run: the heap a full
    collection has to traverse, and the base of the 25% rule that decides
    when CPython runs one. With refs, each is a list of that many
    references to other long-lived objects, chosen at random (seeded): a
    full collection then chases pointers across the heap, as it does in a
    real one of modules, dicts and tensors, and pauses longer per object
    while the 25% rule still counts K."""
    if refs <= 0:
        return [Node(i) for i in range(k)]
    heap = [[] for _ in range(k)]
    randrange = random.Random(seed).randrange
    for obj in heap:
        obj.extend([heap[randrange(k)] for _ in range(refs)])
    return heap


# --------------------------------------------------------------------------
# The recorder: gc.callbacks writing into preallocated arrays.

# The recorder's state: the slots of one array("q") that the gc callback,
# the hot loop and Recorder.take share. An array of integers rather than
# attributes, so the callback only stores integers and allocates nothing.
# The callback binds these as default arguments and the hot loop as locals,
# so neither looks them up in the module's globals per event or per step.
_USED = 0          # slots of Recorder.buf in use: events buffered * FIELDS
_LOST = 1          # events dropped since the last take (the buffer was full)
_START = 2         # perf_counter_ns() at the start of the running collection
_IN_SCHEDULED = 3  # 1 while the policy's own gc.collect runs: events are "manual"
_STATE_SLOTS = 4


class Recorder(object):
    """Collects GC events without allocating tracked objects in the
    callback: the callback only stores integers into one flat preallocated
    array, FIELDS slots per event (fewer lookups than one array per field),
    and into the state array (slots _USED, _LOST, _START, _IN_SCHEDULED)."""

    # start ns, pause ns, generation, collected, uncollectable, manual, and
    # where the interpreter reports them (CPython 3.15's info dict), the
    # collection's candidates and its own duration in ns; -1 where not.
    FIELDS = 8

    def __init__(self, capacity, census=False, extended=None):
        width = self.FIELDS
        limit = capacity * width
        self.cap = capacity
        self.buf = buf = array.array("q", [0]) * limit
        self.state = state = array.array("q", [0]) * _STATE_SLOTS
        # --census: the objects in the generations each collection is
        # about to walk, counted at its start. Counting builds lists, so it
        # allocates in the callback: a census run is never timed, and a
        # list made and freed leaves the collector's counts as they were,
        # so the run has the timed runs' schedule (Go checks it).
        # Made whether or not this run counts: the closure and its cells
        # are tracked objects, and a census run must allocate what a timed
        # run does (only installing the callback differs).
        self.census = census
        objects = array.array("q", [0]) * capacity
        self.objects = objects if census else None
        get_objects = gc.get_objects

        def on_census(phase, info):
            if phase == "start":
                i = state[_USED] // width
                if i < capacity:
                    n = len(get_objects(0))
                    if info["generation"] >= 1:
                        n += len(get_objects(1))
                    if info["generation"] >= 2:
                        n += len(get_objects(2))
                    objects[i] = n

        def on_gc(phase, info, perf_counter_ns=perf_counter_ns, USED=_USED, LOST=_LOST,
                  START=_START, IN_SCHEDULED=_IN_SCHEDULED):
            if phase == "start":
                state[START] = perf_counter_ns()
                return
            end = perf_counter_ns()
            i = state[USED]
            if i < limit:
                start = state[START]
                buf[i] = start
                buf[i + 1] = end - start
                buf[i + 2] = info["generation"]
                buf[i + 3] = info["collected"]
                buf[i + 4] = info["uncollectable"]
                buf[i + 5] = state[IN_SCHEDULED]
                buf[i + 6] = -1
                buf[i + 7] = -1
                state[USED] = i + width
            else:
                state[LOST] += 1

        # CPython 3.15 adds the candidates and the duration (a float of
        # seconds: int() of it makes an int, which the collector does not
        # track). A callback of its own, so older interpreters look up
        # nothing more per event.
        def on_gc_extended(phase, info, perf_counter_ns=perf_counter_ns, USED=_USED, LOST=_LOST,
                           START=_START, IN_SCHEDULED=_IN_SCHEDULED, int=int):
            if phase == "start":
                state[START] = perf_counter_ns()
                return
            end = perf_counter_ns()
            i = state[USED]
            if i < limit:
                start = state[START]
                buf[i] = start
                buf[i + 1] = end - start
                buf[i + 2] = info["generation"]
                buf[i + 3] = info["collected"]
                buf[i + 4] = info["uncollectable"]
                buf[i + 5] = state[IN_SCHEDULED]
                buf[i + 6] = info["candidates"]
                buf[i + 7] = int(info["duration"] * 1e9)
                state[USED] = i + width
            else:
                state[LOST] += 1
        if extended is None:
            extended = sys.version_info >= (3, 15)
        self.callback = on_gc_extended if extended else on_gc
        self.census_callback = on_census
        if not census:
            self.census_callback = None
        self.totals = [0, 0, 0]  # per generation, kept outside the callback

    def install(self):
        if self.census_callback is not None:
            gc.callbacks.append(self.census_callback)
        gc.callbacks.append(self.callback)

    def remove(self):
        for cb in (self.callback, self.census_callback):
            if cb is not None and cb in gc.callbacks:
                gc.callbacks.remove(cb)

    def take(self, t0):
        """Format and clear the buffered events as a JSON array. Events that
        started before t0 (the step's start) happened between steps."""
        state = self.state
        used = state[_USED]
        lost = state[_LOST]
        state[_LOST] = 0
        if used == 0:
            return "[]", lost
        buf, totals, s = self.buf, self.totals, "["
        objects = self.objects
        for i in range(0, used, self.FIELDS):
            if i:
                s += ","
            g = buf[i + 2]
            if 0 <= g < 3:
                totals[g] += 1
            s += '{"gen":%d,"ns":%d,"collected":%d,"uncollectable":%d,"in_step":%s,"manual":%s' % (
                g, buf[i + 1], buf[i + 3], buf[i + 4],
                "true" if buf[i] >= t0 else "false",
                "true" if buf[i + 5] else "false")
            if buf[i + 6] >= 0:
                s += ',"candidates":%d,"duration_ns":%d' % (buf[i + 6], buf[i + 7])
            s += ',"objects":%d}' % objects[i // self.FIELDS] if objects is not None else "}"
        s += "]"
        # Events fired while formatting belong to the next record.
        extra = state[_USED] - used
        if extra:
            buf[0:extra] = buf[used:used + extra]
            if objects is not None:
                n, w = used // self.FIELDS, extra // self.FIELDS
                objects[0:w] = objects[n:n + w]
        state[_USED] = extra
        return s, lost


# --------------------------------------------------------------------------
# Record stream


class Stream(object):
    """The record channel. Each record is one line written with a single
    os.write, so a reader never sees half a record from a live worker and a
    crash loses only the step in progress."""

    def __init__(self, fd):
        self.fd = fd

    def write_line(self, line):
        data = (line + "\n").encode("utf-8")
        while data:
            n = os.write(self.fd, data)
            data = data[n:]

    def write_obj(self, obj):
        import json
        self.write_line(json.dumps(obj, sort_keys=True, default=str, allow_nan=False))


def _rss_reader():
    """RSS in bytes from /proc/self/statm, read without allocating tracked
    objects; None where /proc is absent."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        return None
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def rss():
        b = os.pread(fd, 64, 0)
        i = b.index(b" ")
        j = b.index(b" ", i + 1)
        return int(b[i + 1:j]) * page
    return rss


# --------------------------------------------------------------------------
# Provenance


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or None


def python_facts():
    """The interpreter in the meta record (the tracer's too): what the
    environment key and the collector's behaviour depend on."""
    import platform
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "build": " ".join(platform.python_build()),
        "compiler": platform.python_compiler(),
        "executable": sys.executable,
        "free_threaded": bool(getattr(sys, "_is_gil_enabled", None)) and not sys._is_gil_enabled(),
    }


def meta_record(args, torch, device, policy, recorder_on, notes):
    import socket
    cuda_ver = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
    npu_ver = cann = None
    if device.kind == "npu":
        npu_mod = sys.modules.get("torch_npu")
        npu_ver = getattr(npu_mod, "__version__", None)
        cann = getattr(getattr(npu_mod, "version", None), "cann", None) or os.environ.get("ASCEND_TOOLKIT_HOME")
    return {
        "type": "meta",
        "schema": SCHEMA,
        "python": python_facts(),
        "torch": getattr(torch, "__version__", None) if torch else None,
        "torch_npu": npu_ver,
        "cuda": cuda_ver,
        "cann": cann,
        "device": {"kind": device.kind, "index": device.index, "name": device.name},
        "gc": {
            "enabled": gc.isenabled(),
            "thresholds": list(gc.get_threshold()),
            "freeze_count": gc.get_freeze_count(),
            "stats": gc.get_stats(),
        },
        "policy": policy.text,
        "model": args.model,
        "sizes": {"batch": args.batch, "hidden": args.hidden, "layers": args.layers,
                  "heads": args.heads, "seq": args.seq, "vocab": args.vocab,
                  "image": args.image, "work": args.work},
        "garbage": {"pattern": args.garbage, "cycles": args.cycles,
                    "objects": args.objects, "long_lived": args.long_lived,
                    "long_lived_refs": args.long_lived_refs,
                    "every": args.garbage_every,
                    "leak_kib_per_step": args.leak_kib_per_step,
                    "retain": args.retain},
        "allocator": {k: os.environ[k] for k in ("PYTHONMALLOC", "PYTORCH_CUDA_ALLOC_CONF",
                                                  "PYTORCH_NPU_ALLOC_CONF") if k in os.environ},
        "threads": torch.get_num_threads() if torch else None,
        "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "seed": args.seed,
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
        "pid": os.getpid(),
        "rank": int(os.environ.get("RANK", "0")),
        "world_size": int(os.environ.get("WORLD_SIZE", "1")),
        "host": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "compute_scale": args.compute_scale,
        "device_wait_ms": args.device_wait_ms,
        "steps": args.steps,
        "warmup": args.warmup,
        "recorder": recorder_on,
        "notes": notes,
        "start": _STARTED,
    }


# --------------------------------------------------------------------------
# The loop


def world_from_env():
    """(rank, world size) from the torchrun environment contract; (0, 1)
    outside it."""
    try:
        return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise UsageError("RANK and WORLD_SIZE must be integers, got %r and %r"
                         % (os.environ.get("RANK"), os.environ.get("WORLD_SIZE")))


def local_rank_from_env():
    """LOCAL_RANK of a multi-rank job (the rank on this host), else 0."""
    if world_from_env()[1] <= 1:
        return 0
    try:
        return int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        raise UsageError("LOCAL_RANK must be an integer, got %r" % os.environ.get("LOCAL_RANK"))


def join_process_group(args, torch, device):
    """Joins the torch.distributed group of the torchrun environment (gloo
    on cpu, nccl on cuda, hccl on npu) and returns the per-step collective,
    an all-reduce of a gradient-sized buffer as in data-parallel training,
    and the backend. (None, None) for a single process."""
    rank, world = world_from_env()
    if world <= 1:
        return None, None
    for k in ("MASTER_ADDR", "MASTER_PORT"):
        if k not in os.environ:
            raise UsageError("WORLD_SIZE is %d but %s is not set (the torchrun contract: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)" % (world, k))
    import datetime
    import torch.distributed as dist
    backend = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}[device.kind]
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.dist_timeout))
    buf = torch.ones(args.allreduce_numel, device=device.torch_device)
    all_reduce = dist.all_reduce

    def collective():
        all_reduce(buf)
    return collective, backend


class Run(object):
    """The run's state, passed between its parts: filled by prepare() and
    start_run(), read into locals by hot_loop() before the first step, and by
    end_record().

    Everything start_run() creates after the collector's reset stays referenced
    from here (or from a local of hot_loop) until the run ends, as it did
    when the run was one function: a temporary that died earlier would lower
    the young generation's count at the first step and move every
    collection of the run by that many allocations."""

    __slots__ = ("args", "torch", "policy", "patterns", "device", "notes", "empty_cache",
                 "collective", "backend", "step_fn", "rng", "long_lived", "retained",
                 "thresholds", "recorder", "meta", "stats0", "emu", "slice_fn")

    def __init__(self, args, torch):
        self.args = args
        self.torch = torch
        self.policy = self.patterns = self.device = self.notes = None
        self.empty_cache = self.collective = self.backend = self.step_fn = None
        self.rng = self.long_lived = self.retained = self.thresholds = None
        self.recorder = self.meta = self.stats0 = None
        self.emu = self.slice_fn = None


def run(args, stream, torch):
    """One worker run: the meta record, one step record per step, the end
    record. hot_loop() calls the preparation itself (see there)."""
    r = Run(args, torch)
    wall, stats1 = hot_loop(r, stream)
    end_record(r, stream, wall, stats1)


def prepare(r):
    """The workload: the policy, the device, CPU pinning, torch's threads,
    the process group, the model, the garbage patterns, the long-lived
    heap."""
    args, torch = r.args, r.torch
    policy = r.policy = parse_policy(args.policy)
    r.patterns = parse_garbage(args.garbage)
    device = r.device = resolve_device(args.device, torch, local_rank_from_env())
    notes = r.notes = []
    if policy.empty_cache_every_step:
        if device.empty_cache is None:
            notes.append("empty-cache-every-step: not applicable on %s; no cache is released" % device.kind)
        else:
            r.empty_cache = device.empty_cache
    if args.cpus:
        if not hasattr(os, "sched_setaffinity"):
            raise UsageError("--cpus: this platform cannot pin processes")
        try:
            os.sched_setaffinity(0, parse_cpus(args.cpus))
        except OSError as e:
            raise UsageError("--cpus %s: %s" % (args.cpus, e))
        notes.append("pinned to CPUs %s" % args.cpus)
    if torch is not None and args.threads > 0:
        torch.set_num_threads(args.threads)
    r.collective, r.backend = join_process_group(args, torch, device)
    rank, world = world_from_env()
    if world > 1 and args.rank_seed == "per-rank":
        # Ranks see different data in real jobs, so their garbage (and
        # with --garbage-jitter, their GC schedule) differs.
        args.seed += 1000 * rank
    scale_compute(args)
    r.step_fn = build_model(args, torch, device, notes)
    if args.emu_device_ms > 0:
        # The step's host work is cut into one slice per kernel, each
        # launching its kernel when done: model none's work loop and the
        # garbage are spread evenly; a torch model's step runs whole in the
        # first slice.
        if args.model == "none":
            r.slice_fn = _build_none(type("Sizes", (), {"work": -(-args.work // args.emu_kernels)})())
        r.emu = EmulatedDevice(args.emu_device_ms, args.emu_kernels, args.emu_queue_depth,
                               args.emu_syncs, args.emu_jitter, args.seed)

    r.rng = random.Random(args.seed)
    r.long_lived = build_long_lived(args.long_lived, args.long_lived_refs, args.seed)
    r.retained = [None] * args.retain if args.retain > 0 else None


def start_run(r, stream):
    """The end of the preparation: the collector's starting state, the meta
    record, the recorder's callback. Called by hot_loop (see there)."""
    args, policy = r.args, r.policy
    # Start every run from the same collector state: the heap built by
    # prepare() is old, nothing is pending, counts are zero. Then apply the
    # policy.
    if _MODULES_FD >= 0:
        _report_modules()
    gc.collect()
    if policy.threshold is not None:
        t = r.thresholds = list(gc.get_threshold())
        t[: len(policy.threshold)] = policy.threshold
        gc.set_threshold(*t)
    if policy.disabled or policy.manual_every:
        gc.disable()

    recorder = r.recorder = Recorder(args.event_capacity, args.census) if args.recorder else None
    meta = r.meta = meta_record(args, r.torch, r.device, policy, args.recorder, r.notes)
    meta["backend"] = r.backend
    if r.emu is not None:
        meta["emulated_device"] = r.emu.meta()
    stream.write_obj(meta)
    r.stats0 = gc.get_stats()
    if recorder is not None:
        recorder.install()


def hot_loop(r, stream):
    """prepare() and start_run(), then the timed steps and their step
    records. Returns the loop's wall time in ns and gc.get_stats() at its
    end.

    The preparation is called from here rather than from run() so that this
    frame is what run's frame was when the run was one function: on the
    stack through the whole preparation, the collector's reset included.
    The schedule depends on it: on CPython 3.8-3.10 every frame is an object
    the collector counts, and from 3.11 a frame becomes one when something
    walks the stack (torch.manual_seed does, in prepare) or when a frame
    that a traceback holds returns (--garbage traceback). Measured with the
    loop's frame made later: after the reset, on 3.10, a gen-0 count 9
    higher at every step and 6 gen-0 collections moved across a step
    boundary; after prepare() but before the reset, on 3.11 with torch, 1
    higher and one gen-0 collection moved.

    Everything a step uses is bound to a local first: the loop body looks
    up nothing per step beyond perf_counter_ns, gc.get_count, rng.random,
    recorder.take and stream.write_line (and gc.freeze once, int and round
    with --garbage-jitter), and it allocates no tracked object inside the
    timed region (HotLoopTest checks the lookups)."""
    prepare(r)
    start_run(r, stream)
    args, policy, device = r.args, r.policy, r.device
    step_fn, patterns, rng = r.step_fn, r.patterns, r.rng
    retained, recorder = r.retained, r.recorder
    empty_cache, collective = r.empty_cache, r.collective
    sync = device.synchronize
    # An asynchronous device's side of the step: the emulated device, or a
    # real one's events around the step's work (busy time, lead at the
    # sync, idle time in pauses). Bound to locals; None skips it.
    emu = r.emu
    if emu is not None:
        emu_slices, kernels, slice_fn = range(emu.kernels), emu.kernels, r.slice_fn
        emu_read, emu_write, emu_readv = os.read, os.write, os.readv
        emu_cmd, emu_credit, emu_ack, emu_result = emu.cmd, emu.credit, emu.ack, emu.result
        kmsg, mmsg, smsg, mid_syncs = emu.kmsg, emu.mmsg, emu.smsg, emu.mid_syncs
        spans, spans_whole, spans_rest, launched = emu.spans, emu.whole, emu.rest, emu.launched
        read_result = emu_read_result
    else:
        kernels, launched = 0, None
    ev_start, ev_end = device_events(device) if emu is None else (None, None)
    if ev_start is not None:
        spans = array.array("q", [0]) * EMU_RESULT_SLOTS
        spans[0] = 1
        ev_start_record, ev_end_record, elapsed_ms = ev_start.record, ev_end.record, ev_start.elapsed_time
    account = device_account
    # --emu-timeline: every step's timeline to a file, for docs' figures
    # (it allocates per step: never in a measured run).
    timeline = open(args.emu_timeline, "w") if args.emu_timeline and emu is not None else None
    _USED_SLOT = _USED
    rec_buf = recorder.buf if recorder is not None else None
    rec_width = Recorder.FIELDS
    # --device-wait-ms: the host waits, GIL released, as for kernels running
    # on an accelerator. A float prepared here, so the call in the loop
    # allocates nothing the collector tracks; None skips it entirely.
    device_wait = args.device_wait_ms / 1000.0 if args.device_wait_ms > 0 else None
    sleep = time.sleep
    dev_mem = device.memory_allocated
    rss = _rss_reader()
    cycles, objects, jitter = args.cycles, args.objects, args.garbage_jitter
    # --garbage-every: garbage on one step in N, for jobs that make less
    # than one object per step (a real loop with a rare young collection).
    every = args.garbage_every
    # --leak-kib-per-step: a planted leak. bytes are not tracked by the
    # collector and are filled (so their pages are resident), and appending
    # to one list allocates nothing tracked: the GC schedule is unchanged,
    # only RSS grows.
    leak = [] if args.leak_kib_per_step > 0 else None
    leak_bytes = args.leak_kib_per_step << 10
    manual_every, manual_gen = policy.manual_every, policy.manual_gen
    collect_every = policy.collect_every_step
    has_action = policy.has_step_action
    freeze_at = args.warmup if policy.freeze else -1
    state = recorder.state if recorder is not None else array.array("q", [0]) * _STATE_SLOTS
    in_scheduled = _IN_SCHEDULED
    retain, warmup = args.retain, args.warmup
    total = warmup + args.steps
    collect = gc.collect
    if freeze_at == 0:
        gc.freeze()
    wall0 = perf_counter_ns()
    for i in range(total):
        if i == freeze_at and i > 0:
            gc.freeze()
        t0 = perf_counter_ns()
        # ---- timed region: the step, its garbage, the policy's step-
        # boundary action, and the device sync that makes the time real.
        if emu is None:
            if ev_start is not None:
                ev_start_record()
            out = step_fn()
            keep = [] if retained is not None else None
            n = cycles
            if jitter:
                n = int(round(cycles * (1 + jitter * (2 * rng.random() - 1))))
            if every > 1 and i % every:
                n = 0
            for make in patterns:
                make(rng, n, objects, out, keep)
        else:
            out = None
            keep = [] if retained is not None else None
            n = cycles
            if jitter:
                n = int(round(cycles * (1 + jitter * (2 * rng.random() - 1))))
            if every > 1 and i % every:
                n = 0
            made = 0
            for k in emu_slices:
                if slice_fn is not None:
                    slice_fn()
                elif k == 0:
                    out = step_fn()
                upto = n * (k + 1) // kernels
                for make in patterns:
                    make(rng, upto - made, objects, out, keep)
                made = upto
                # The launch: a free slot in the queue first (the host
                # blocks here while `depth` kernels are pending), then the
                # kernel, stamped with the launch time.
                emu_read(emu_credit, 1)
                launched[k] = kmsg[1] = perf_counter_ns()
                emu_write(emu_cmd, kmsg)
                if mid_syncs[k]:
                    mmsg[1] = perf_counter_ns()
                    emu_write(emu_cmd, mmsg)
                    emu_read(emu_ack, 1)
            # The step's sync (loss.item()): the host waits for the queue
            # to drain; the policy's action comes after it, as in a loop
            # that logs its loss and then collects.
            t_sync = smsg[1] = perf_counter_ns()
            emu_write(emu_cmd, smsg)
            read_result(emu_readv, emu_result, spans_whole, spans_rest)
        scheduled = False
        if has_action:
            if manual_every and (i + 1) % manual_every == 0:
                state[in_scheduled] = 1
                collect(manual_gen)
                state[in_scheduled] = 0
                scheduled = True
            elif collect_every:
                state[in_scheduled] = 1
                collect()
                state[in_scheduled] = 0
                scheduled = True
            if empty_cache is not None:
                empty_cache()
        if device_wait is not None:
            # The device's share of the step: the host only waits, so a GC
            # pause on the host is a few percent of the step, not all of it.
            sleep(device_wait)
        if collective is not None:
            # The rank's own work ends here; what follows is its wait for
            # the slowest rank (its own pauses are inside own, the others'
            # in the wait): gcjitter scale resamples ranks from it.
            t_own = perf_counter_ns()
            # The gradient all-reduce: a rank that paused for GC makes
            # every other rank wait here.
            collective()
        if sync is not None:
            if ev_end is not None:
                ev_end_record()
                t_sync = perf_counter_ns()
            sync()
        t1 = perf_counter_ns()
        # ---- end of timed region
        if retained is not None:
            # Keep this step's garbage alive for `retain` steps, so it
            # survives young collections and is promoted before it dies, as
            # state that real loops hold across steps (logged losses, cached
            # batches) is: this is what feeds CPython's gen-2 trigger.
            retained[i % retain] = keep
            keep = None
        if leak is not None:
            leak.append(b"\x01" * leak_bytes)
        out = None
        dev = ""
        if ev_start is not None:
            # One busy span, the step's work on the device, ending when the
            # sync returned: an upper bound of busy time (gaps inside the
            # span, the device waiting on the host, count as busy).
            spans[2] = t1
            spans[1] = t1 - int(elapsed_ms(ev_end) * 1e6)
        if emu is not None or ev_start is not None:
            dev = account(spans, launched, kernels, t0, t1, t_sync, rec_buf, state[_USED_SLOT] if rec_buf is not None else 0, rec_width)
            if timeline is not None:
                write_timeline(timeline, i, t0, t1, t_sync, spans, launched, kernels,
                               rec_buf, state[_USED_SLOT] if rec_buf is not None else 0, rec_width)
        if recorder is not None:
            events, lost = recorder.take(t0)
        else:
            events, lost = "[]", 0
        c0, c1, c2 = gc.get_count()
        own = ',"own":%d' % (t_own - t0) if collective is not None else ""
        stream.write_line(
            '{"type":"step","i":%d,"warmup":%s,"ns":%d,"gc":%s,"lost":%d,"sched":%s,'
            '"count":[%d,%d,%d],"rss":%s,"dev_mem":%s%s}' % (
                i, "true" if i < warmup else "false", t1 - t0, events, lost,
                "true" if scheduled else "false", c0, c1, c2,
                rss() if rss is not None else "null",
                dev_mem() if dev_mem is not None else "null", dev + own))
    wall = perf_counter_ns() - wall0
    if recorder is not None:
        recorder.remove()
    if emu is not None:
        emu.close()
    if timeline is not None:
        timeline.close()
    return wall, gc.get_stats()


def end_record(r, stream, wall, stats1):
    """After the last step: the end record (the interpreter's own collection
    counts over the loop) and the process group's teardown."""
    recorder, stats0 = r.recorder, r.stats0
    r.long_lived = r.retained = None
    stream.write_obj({
        "type": "end",
        "steps": r.args.warmup + r.args.steps,
        "wall_ns": wall,
        "gc_stats": [{k: stats1[g][k] - stats0[g].get(k, 0) for k in stats1[g]} for g in range(len(stats1))],
        "recorded": list(recorder.totals) if recorder is not None else None,
        "freeze_count": gc.get_freeze_count(),
    })
    if r.collective is not None:
        import torch.distributed as dist
        dist.destroy_process_group()


# --------------------------------------------------------------------------
# Harness overhead measurement (used by bench's Go benchmark)


def measure_overhead(n):
    """The bare costs the harness is compared with (BenchmarkHarness in
    bench/ runs the real loop for the other side): a bare loop, the empty
    step of model none called in a bare loop, and one gen-0 collection with
    and without the recorder."""
    import json
    pc = perf_counter_ns
    gc.disable()
    t0 = pc()
    for _ in range(n):
        pass
    bare_loop = (pc() - t0) / n
    step_fn = _build_none(type("Sizes", (), {"work": 0})())
    t0 = pc()
    for _ in range(n):
        step_fn()
    bare_step = (pc() - t0) / n
    # One GC event: gc.collect(0) on an empty young generation, with and
    # without the recorder installed; both loops reset the buffer alike.
    m = max(n // 10, 1000)
    rec = Recorder(16)
    state, used = rec.state, _USED
    t0 = pc()
    for _ in range(m):
        gc.collect(0)
        state[used] = 0
    bare_gc = (pc() - t0) / m
    rec.install()
    t0 = pc()
    for _ in range(m):
        gc.collect(0)
        state[used] = 0
    with_rec = (pc() - t0) / m
    rec.remove()
    gc.enable()
    return json.dumps({
        "bare_loop_ns": bare_loop,
        "bare_step_ns": bare_step,
        "bare_gc0_ns": bare_gc,
        "recorded_gc0_ns": with_rec,
        "recorder_ns_per_event": with_rec - bare_gc,
    }, sort_keys=True)


# --------------------------------------------------------------------------
# Entry point


def _parser():
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise UsageError(message)

    p = Parser(prog="gcjitter-worker", description=__doc__.split("\n\n")[0])
    a = p.add_argument
    a("--model", default="mlp", help="mlp, gpt, resnet or none")
    a("--device", default="auto", help="auto, cpu, cuda[:i] or npu[:i]")
    a("--policy", default="default", help="GC policy, e.g. default, disabled, threshold:700,10,1000, freeze+manual:100")
    a("--steps", type=int, default=100, help="measured steps")
    a("--warmup", type=int, default=10, help="warm-up steps, recorded but flagged")
    a("--seed", type=int, default=1, help="seed for weights, data and garbage")
    a("--batch", type=int, default=8)
    a("--hidden", type=int, default=256)
    a("--layers", type=int, default=2)
    a("--heads", type=int, default=4)
    a("--seq", type=int, default=64)
    a("--vocab", type=int, default=1024)
    a("--image", type=int, default=32, help="resnet input size")
    a("--work", type=int, default=20000, help="model none: loop iterations per step")
    a("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    a("--compute-scale", type=float, default=1.0, metavar="F",
      help="F times the compute per step: the batch of a torch model, --work of model none")
    a("--device-wait-ms", type=float, default=0.0, metavar="X",
      help="wait X ms per step in the timed region, GIL released (an accelerator's share of the step)")
    a("--emu-device-ms", type=float, default=0.0, metavar="X",
      help="an emulated asynchronous device (a separate process): X ms of device work per step, "
           "launched as --emu-kernels kernels through the step's host work, with a step-end sync")
    a("--emu-kernels", type=int, default=8, metavar="K", help="emulated device: kernels per step")
    a("--emu-queue-depth", type=int, default=2, metavar="D",
      help="emulated device: kernels pending at most; the host blocks at a launch beyond it")
    a("--emu-syncs", type=int, default=0, metavar="S", help="emulated device: mid-step syncs per step")
    a("--emu-jitter", type=float, default=0.0, metavar="F",
      help="emulated device: vary each kernel's time by up to this fraction (seeded)")
    a("--emu-timeline", default="", metavar="FILE",
      help="emulated device: write every step's host and device timeline to FILE (for figures; allocates per step)")
    a("--garbage", default="none", help="pattern(s) joined by +: %s, or none" % ", ".join(sorted(PATTERNS)))
    a("--cycles", type=int, default=100, help="garbage cycles per step")
    a("--objects", type=int, default=4, help="objects per cycle")
    a("--long-lived", type=int, default=0, help="tracked objects alive for the whole run")
    a("--long-lived-refs", type=int, default=0,
      help="each long-lived object a list of this many references to random others (0: a Node): a heavier heap per object")
    a("--retain", type=int, default=0, help="keep each step's garbage alive for this many steps")
    a("--event-capacity", type=int, default=4096, help="GC events buffered per step")
    a("--cpus", default="", help="pin this process to these CPUs, e.g. 0-3,6")
    a("--garbage-every", type=int, default=1, metavar="N",
      help="make the step's garbage on one step in N only (1: every step): less than one cycle per step")
    a("--leak-kib-per-step", type=int, default=0, metavar="N",
      help="keep N KiB alive for good after every step, outside the timed region and untracked by the collector: a planted leak")
    a("--garbage-jitter", type=float, default=0.0, help="vary the cycles per step by up to this fraction (seeded)")
    a("--rank-seed", default="per-rank", help="multi-rank: per-rank (seed + 1000*rank) or shared")
    a("--allreduce-numel", type=int, default=65536, help="multi-rank: floats all-reduced every step")
    a("--dist-timeout", type=int, default=300, help="multi-rank: seconds a collective may wait")
    a("--no-recorder", dest="recorder", action="store_false", help="do not install the gc callback")
    a("--census", action="store_true",
      help="count the objects each collection walks (its generations' objects at its start); allocates in the callback: never for timings")
    a("--records-fd", type=int, default=-1, help="write records to this inherited file descriptor")
    a("--records", default="", help="write records to this file; {rank} is replaced by $RANK (default: stdout)")
    a("--check", action="store_true", help="validate the arguments and exit")
    a("--preflight", action="store_true",
      help="validate the arguments, import torch (and torch_npu) as a run would, resolve the device, and exit")
    a("--measure-overhead", type=int, default=0, metavar="N", help="print harness overhead over N steps and exit")
    return p


def _validate(args):
    for name, lo in (("steps", 0), ("warmup", 0), ("batch", 1), ("hidden", 1), ("layers", 0),
                     ("heads", 1), ("seq", 1), ("vocab", 2), ("image", 8), ("work", 0),
                     ("threads", 0), ("cycles", 0), ("objects", 1), ("long_lived", 0), ("long_lived_refs", 0),
                     ("retain", 0), ("garbage_every", 1), ("event_capacity", 1),
                     ("leak_kib_per_step", 0)):
        v = getattr(args, name)
        if v < lo:
            raise UsageError("--%s must be >= %d, got %d" % (name.replace("_", "-"), lo, v))
    # Written so that nan fails too: every comparison with nan is false.
    if not 0 < args.compute_scale < float("inf"):
        raise UsageError("--compute-scale must be a finite number > 0, got %r" % args.compute_scale)
    if not 0 <= args.device_wait_ms <= MAX_DEVICE_WAIT_MS:
        raise UsageError("--device-wait-ms must be in 0..%d (milliseconds), got %r"
                         % (MAX_DEVICE_WAIT_MS, args.device_wait_ms))
    if not 0 <= args.emu_device_ms <= MAX_DEVICE_WAIT_MS:
        raise UsageError("--emu-device-ms must be in 0..%d (milliseconds), got %r"
                         % (MAX_DEVICE_WAIT_MS, args.emu_device_ms))
    if args.emu_device_ms > 0:
        if args.device_wait_ms > 0:
            raise UsageError("--emu-device-ms and --device-wait-ms both stand for the device's time: use one")
        if not 1 <= args.emu_kernels <= EMU_MAX_KERNELS:
            raise UsageError("--emu-kernels must be in 1..%d, got %d" % (EMU_MAX_KERNELS, args.emu_kernels))
        if not 1 <= args.emu_queue_depth <= 4096:
            raise UsageError("--emu-queue-depth must be in 1..4096 (the pipe holds that many slots), got %d"
                             % args.emu_queue_depth)
        if not 0 <= args.emu_syncs < args.emu_kernels:
            raise UsageError("--emu-syncs must be in 0..%d (fewer than the kernels), got %d"
                             % (args.emu_kernels - 1, args.emu_syncs))
        if not 0 <= args.emu_jitter < 1:
            raise UsageError("--emu-jitter must be in 0..1 (exclusive), got %r" % args.emu_jitter)
        if args.device not in ("auto", "cpu"):
            raise UsageError("--emu-device-ms emulates a device on a host without one; on %s the "
                             "real device's events are measured" % args.device)
    if not 0 <= args.garbage_jitter <= 1:
        raise UsageError("--garbage-jitter must be in 0..1, got %g" % args.garbage_jitter)
    if args.rank_seed not in ("per-rank", "shared"):
        raise UsageError("--rank-seed must be per-rank or shared, got %r" % args.rank_seed)
    if args.allreduce_numel < 1 or args.dist_timeout < 1:
        raise UsageError("--allreduce-numel and --dist-timeout must be >= 1")
    if args.model not in ("mlp", "gpt", "resnet", "none"):
        raise UsageError("unknown model %r (want mlp, gpt, resnet or none)" % args.model)
    parse_policy(args.policy)
    parse_garbage(args.garbage)
    _parse_device(args.device)
    if args.cpus:
        parse_cpus(args.cpus)


def parse_cpus(text):
    cpus = set()
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise UsageError("bad CPU list %r (want e.g. 0-3,6)" % text)
        if a < 0 or b < a:
            raise UsageError("bad CPU list %r (want e.g. 0-3,6)" % text)
        cpus.update(range(a, b + 1))
    return cpus


def _open_stream(args):
    if args.records_fd >= 0:
        return Stream(args.records_fd)
    if args.records:
        # {rank} lets one command line under torchrun or a cluster launcher
        # give every rank its own file in a shared directory.
        path = args.records.replace("{rank}", os.environ.get("RANK", "0"))
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        return Stream(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    return Stream(sys.stdout.fileno())


def needs_torch(args):
    """Whether this worker imports torch: every model but none, an explicit
    accelerator, and several ranks (torch.distributed). bench.NeedsTorch is
    the same rule in Go, which picks the interpreter."""
    return args.model != "none" or args.device not in ("auto", "cpu") or world_from_env()[1] > 1


# --------------------------------------------------------------------------
# The warm server (docs/worker.md, "Warm starts")


def serve_warm(argv):
    """The fork server gcjitter's runner starts once per interpreter and
    environment: it imports torch (with --torch), collects, says "ready" on
    stdout and then reads run requests on stdin, forking one child per run
    and reporting "started PID" (from the child, once its process group and
    its channels are in place) and "exit PID STATUS CPU_NS" (the wait
    status, and the CPU time of the child and of the server since its last
    report).

    It returns only in a child, with the run's arguments, to main(), which
    then runs as in a cold process: the server's frames are gone, and it
    imports nothing a cold run would import later (json, socket and
    argparse come with the run), so the heap a run starts from, and its
    GC schedule, are a cold run's. A request is "LEN\n" then LEN bytes:
    the runner's pid, the fd numbers (in the runner) of the run's records,
    stdout and stderr pipes ("-": /dev/null), then the run's arguments,
    separated by NUL bytes. The child opens the pipes through
    /proc/PID/fd, so no module beyond os is needed to pass them."""
    if argv[:1] == ["--torch"]:
        import torch  # noqa: F401  (what every torch run imports first)
    gc.collect()
    # Hold fd 3 (a child's record channel), so the module pipe's ends are
    # above the fds a child takes over.
    hold = os.open(os.devnull, os.O_RDONLY)
    spent = 0.0  # the server's own CPU seconds reported so far
    os.write(1, b"ready\n")
    while True:
        req = _read_request(0)
        if req is None:
            os._exit(0)  # the runner closed the pipe: the session is over
        mr, mw = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(mr)
            os.close(hold)
            return _warm_child(req, mw)
        os.close(mw)
        try:
            os.setpgid(pid, pid)  # also here, so the group exists before "started"
        except OSError:
            pass  # the child set it, or has already exited
        while True:
            try:
                _, status, usage = os.wait4(pid, 0)
                break
            except InterruptedError:
                continue
        _preload(mr)
        # The child's CPU time, which this server reaped, and the server's
        # own since its last report (its import, the preload): the runner's
        # rusage sees neither, and would count them as other load.
        t = os.times()
        cpu_ns = int((usage.ru_utime + usage.ru_stime + t.user + t.system - spent) * 1e9)
        spent = t.user + t.system
        os.write(1, b"exit %d %d %d\n" % (pid, status, cpu_ns))


def _report_modules():
    """In a warm child, before the collector's reset: the modules imported
    so far, for the server (_preload)."""
    global _MODULES_FD
    fd, _MODULES_FD = _MODULES_FD, -1
    try:
        # The server reads once the child has ended: what does not fit in
        # the pipe is left out rather than waited for. sys.modules keeps
        # the order of import, so the server's come first.
        os.set_blocking(fd, False)
        data = "\n".join(list(sys.modules)[_MODULES_AT_FORK:]).encode("utf-8", "replace")
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass
    os.close(fd)


def _preload(fd):
    """In the server, after a child ended: import what the child had
    imported before its collector's reset (torch 2's optimizers import
    torch._dynamo and some 900 modules lazily: 0.8 s a run). Only those:
    a module a cold run imports after the reset must stay unimported, or
    the run's schedule would move. Then collect, as after torch."""
    data = b""
    while True:
        c = os.read(fd, 1 << 16)
        if not c:
            break
        data += c
    os.close(fd)
    new = [n for n in data.decode("utf-8", "replace").split("\n")
           if n and n not in sys.modules and not n.startswith("__")]
    for name in new:
        try:
            __import__(name)
        except BaseException:
            pass  # what a run could import, the server need not
    if new:
        gc.collect()


def _read_request(fd):
    head = b""
    while not head.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            return None
        head += c
    n = int(head)
    body = b""
    while len(body) < n:
        c = os.read(fd, n - len(body))
        if not c:
            return None
        body += c
    return body.decode("utf-8", "surrogateescape").split("\0")


def _warm_child(req, modules_fd):
    """In the forked child: its own process group, the run's channels on
    fds 0-3 as a cold run has them, then the run's arguments."""
    global _STARTED, _MODULES_FD, _MODULES_AT_FORK
    try:
        os.setpgid(0, 0)
        runner, fds, args = req[0], req[1:4], req[4:]
        opened = [os.open(os.devnull, os.O_RDONLY)]
        for n in (fds[1], fds[2], fds[0]):  # stdout, stderr, records
            path = os.devnull if n == "-" else "/proc/%s/fd/%s" % (runner, n)
            opened.append(os.open(path, os.O_WRONLY))
        os.write(1, b"started %d\n" % os.getpid())
        for target, fd in enumerate(opened):
            if fd != target:
                os.dup2(fd, target)
                os.close(fd)
    except BaseException as e:
        try:
            os.write(1, ("error %s: %s\n" % (type(e).__name__, e)).encode("utf-8", "replace"))
        finally:
            os._exit(127)
    _STARTED, _MODULES_FD, _MODULES_AT_FORK = "warm", modules_fd, len(sys.modules)
    sys.argv[1:] = args
    # CPython 3.12+ warns the server when it forks beside threads (BLAS's):
    # the registry the warning left in this module is no cold run's.
    globals().pop("__warningregistry__", None)
    return args


def main(argv=None):
    stream = None
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve-device"]:
        return serve_device(argv[1:])
    if argv[:1] == ["--warm-server"]:
        argv = serve_warm(argv[1:])
    try:
        args = _parser().parse_args(argv)
        if args.measure_overhead:
            print(measure_overhead(args.measure_overhead))
            return 0
        if not (args.check or args.preflight):
            stream = _open_stream(args)
        _validate(args)
        if args.check:
            return 0
        torch = None
        if needs_torch(args):
            try:
                import torch
            except ImportError as e:
                raise UsageError("torch is not importable by %s (%s); install it "
                                 "(Debian: apt-get install --no-install-recommends python3-torch) "
                                 "or pass the interpreter that has it" % (sys.executable, e))
        if args.preflight:
            # What every run of the plan would meet first: checked once,
            # before any run, so a plan that cannot run is refused whole.
            if torch is not None:
                resolve_device(args.device, torch, local_rank_from_env())
            return 0
        run(args, stream, torch)
        return 0
    except UsageError as e:
        msg = str(e)
        kind, code = "usage", EXIT_USAGE
    except BrokenPipeError:
        return 0  # the reader went away: nothing left to tell it
    except KeyboardInterrupt:
        msg, kind, code = "interrupted", "interrupted", 130
    except Exception as e:
        import traceback
        msg = "%s: %s" % (type(e).__name__, e)
        kind, code = "runtime", EXIT_RUNTIME
        traceback.print_exc()
    sys.stderr.write("gcjitter-worker: %s\n" % msg)
    if stream is not None:
        try:
            stream.write_obj({"type": "error", "kind": kind, "message": msg})
        except OSError:
            pass
    return code


if __name__ == "__main__":
    sys.exit(main())
