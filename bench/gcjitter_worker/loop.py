"""The run: preparation, the collector's reset, the timed steps and the end
record; and the harness's overhead measurement."""

import array
import gc
import os
import random
import time

from . import warm
from .common import UsageError, perf_counter_ns
from .device import EMU_RESULT_SLOTS, EmulatedDevice, device_account, device_events, emu_read_result, resolve_device, write_timeline
from .garbage import build_long_lived, parse_garbage
from .models import _build_none, build_model, scale_compute
from .policy import parse_policy
from .recorder import Recorder, _IN_SCHEDULED, _STATE_SLOTS, _USED
from .records import _rss_reader, meta_record

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


def settle_heap():
    """The collector's reset: full collections until the tracked heap
    stops shrinking. A collection untracks a tuple or a dict only when all
    it holds is untracked already, so a nested one (code constants, a
    module's tables) takes a pass per level, in an order set by how the
    heap was built: after one collection a cold run and a warm child,
    whose server collected before it forked, held a few tracked tuples
    apart (the census differed by 1-3 objects a full collection). The
    fixed point is the same for both."""
    tracked = -1
    for _ in range(8):
        gc.collect()
        n = len(gc.get_objects())
        if n == tracked:
            return
        tracked = n


def start_run(r, stream):
    """The end of the preparation: the collector's starting state, the meta
    record, the recorder's callback. Called by hot_loop (see there)."""
    args, policy = r.args, r.policy
    # Start every run from the same collector state: the heap built by
    # prepare() is old, nothing is pending, counts are zero. Then apply the
    # policy.
    if warm._MODULES_FD >= 0:
        warm._report_modules()
    settle_heap()
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
