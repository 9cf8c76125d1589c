"""gcjitter step worker: one training process whose every step and every
garbage collection is recorded.

This module is the command line (the flags, their checks, main); the
package's __init__ says how the parts fit and what constrains them.
"""

import os
import sys

from .common import EXIT_RUNTIME, EXIT_USAGE, UsageError
from .device import EMU_MAX_KERNELS, _parse_device, resolve_device, serve_device
from .garbage import PATTERNS, parse_garbage
from .loop import local_rank_from_env, measure_overhead, parse_cpus, run, world_from_env
from .models import MAX_DEVICE_WAIT_MS
from .policy import parse_policy
from .records import Stream
from .warm import serve_warm

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
