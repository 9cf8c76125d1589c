"""Devices: the real ones (cpu, cuda, npu) and the emulated asynchronous
device of --emu-device-ms, whose process (serve_device) runs the kernels."""

import array
import os
import random
import sys
import time

from .common import UsageError
from .policy import _int_field

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


# The device process runs serve_device from this package, wherever it is:
# _ROOT is the directory or the zipapp that holds it, put on sys.path by
# the -c program (-I ignores PYTHONPATH). --serve-device after it names
# the process (tests find orphans by it) and is skipped.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SERVE_DEVICE = ("import sys; sys.path.insert(0, sys.argv[1]); "
                 "from gcjitter_worker.device import serve_device; sys.exit(serve_device(sys.argv[3:]))")


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
            [sys.executable, "-I", "-S", "-c", _SERVE_DEVICE, _ROOT, "--serve-device",
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
    """The device process: CMD,CREDIT,ACK,RESULT KERNEL_NS JITTER SEED
    (also the worker's --serve-device). Runs until the host closes CMD."""
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
