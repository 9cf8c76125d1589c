"""gcjitter's tracer: records an unmodified training script's steps and
garbage collections in the worker's record stream.

`gcjitter trace` puts a directory first on PYTHONPATH that holds this module
(as gcjitter_trace), the worker (as gcjitter_worker, for its recorder and
stream) and a sitecustomize that runs the user's own sitecustomize and then
start(). Every Python process of the job loads it; a process writes a stream
only once it has a step, so launchers and data-loader workers leave none.

A step ends when the optimizer's step returns (torch's global optimizer
step post-hook where torch has it, a wrapper of Optimizer.step otherwise),
when the function named by GCJITTER_TRACE_STEP_FN returns, or when the script
calls gcjitter_trace.step(). Step i is the time from the end of step i-1 to
the end of step i: the loop's data loading, forward, backward and whatever
the script does between optimizer steps. The time before the first step end
(imports, set-up, the first step) is not a step.

Environment (set by gcjitter trace): GCJITTER_TRACE_DIR, the directory for
streams; GCJITTER_TRACE_STEPS, steps to record (0: all); GCJITTER_TRACE_WARMUP,
leading steps marked warm-up; GCJITTER_TRACE_STEP_FN, module:qualname.
"""

import gc
import os
import sys

import gcjitter_worker as worker

perf_counter_ns = worker.perf_counter_ns

DIR_ENV = "GCJITTER_TRACE_DIR"
STEPS_ENV = "GCJITTER_TRACE_STEPS"
WARMUP_ENV = "GCJITTER_TRACE_WARMUP"
STEP_FN_ENV = "GCJITTER_TRACE_STEP_FN"

# Width reserved for the meta record's step count, rewritten in place at the
# end (JSON allows the padding spaces).
_STEPS_WIDTH = 12

_tracer = None


class Tracer(object):
    def __init__(self, out_dir, steps, warmup):
        self.out_dir = out_dir
        self.limit = steps
        self.warmup = warmup
        self.pid = os.getpid()
        self.recorder = worker.Recorder(1 << 16)
        self.recorder.install()
        self.stream = None
        self.fd = None
        self.steps_at = 0
        self.t0 = None  # end of the previous step
        self.i = 0
        self.done = False
        self.rss = worker._rss_reader()
        self.stats0 = None
        # Set once the script calls gcjitter_step(): its steps, not the
        # optimizer's, then mark the boundaries.
        self.explicit = False

    def _open(self):
        rank = os.environ.get("RANK")
        name = ("rank-%s.jsonl" % rank) if rank is not None else ("pid-%d.jsonl" % self.pid)
        path = os.path.join(self.out_dir, name)
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.stream = worker.Stream(self.fd)
        meta = self._meta()
        line = self._dumps(meta)
        key = '"steps": '
        at = line.index(key) + len(key)
        line = line[:at] + "0".ljust(_STEPS_WIDTH) + line[at + 1:]
        self.steps_at = len(line[:at].encode("utf-8"))
        self.stream.write_line(line)
        self.stats0 = gc.get_stats()

    @staticmethod
    def _dumps(obj):
        import json
        return json.dumps(obj, sort_keys=True, default=str, allow_nan=False)

    def _meta(self):
        import platform
        import socket
        torch = sys.modules.get("torch")
        device = {"kind": "cpu", "index": 0, "name": platform.processor() or "cpu"}
        if torch is not None:
            try:
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    idx = torch.cuda.current_device()
                    device = {"kind": "cuda", "index": idx, "name": torch.cuda.get_device_name(idx)}
            except Exception:
                pass
            if "torch_npu" in sys.modules:
                device = {"kind": "npu", "index": 0, "name": "npu"}
        free_threaded = bool(getattr(sys, "_is_gil_enabled", None)) and not sys._is_gil_enabled()
        return {
            "type": "meta",
            "schema": worker.SCHEMA,
            "python": {
                "version": platform.python_version(),
                "implementation": platform.python_implementation(),
                "build": " ".join(platform.python_build()),
                "compiler": platform.python_compiler(),
                "executable": sys.executable,
                "free_threaded": free_threaded,
            },
            "torch": getattr(torch, "__version__", None) if torch is not None else None,
            "torch_npu": getattr(sys.modules.get("torch_npu"), "__version__", None),
            "device": device,
            "gc": {"enabled": gc.isenabled(), "thresholds": list(gc.get_threshold()),
                   "freeze_count": gc.get_freeze_count(), "stats": gc.get_stats()},
            "policy": "traced",
            "model": "traced",
            "sizes": {},
            "garbage": {"pattern": "traced"},
            "allocator": {},
            "threads": torch.get_num_threads() if torch is not None else None,
            "seed": 0,
            "hash_seed": os.environ.get("PYTHONHASHSEED"),
            "pid": self.pid,
            "rank": int(os.environ.get("RANK", "0")),
            "world_size": int(os.environ.get("WORLD_SIZE", "1")),
            "host": socket.gethostname(),
            "cpu_model": worker._cpu_model(),
            "steps": 0,
            "warmup": self.warmup,
            "recorder": True,
            "notes": ["traced: " + " ".join(sys.argv)],
            "heap": heap(),
        }

    def step(self):
        """A step ended: record it (the first end only starts the clock)."""
        t1 = perf_counter_ns()
        if self.done or os.getpid() != self.pid:
            return
        if self.t0 is None:
            self.recorder.take(t1)  # set-up's collections are not a step's
            self.recorder.totals = [0, 0, 0]
            self._open()
            self.t0 = perf_counter_ns()
            return
        t0 = self.t0
        events, lost = self.recorder.take(t0)
        c0, c1, c2 = gc.get_count()
        rss = self.rss
        i = self.i
        self.stream.write_line(
            '{"type":"step","i":%d,"warmup":%s,"ns":%d,"gc":%s,"lost":%d,"sched":false,'
            '"count":[%d,%d,%d],"rss":%s,"dev_mem":null}' % (
                i, "true" if i < self.warmup else "false", t1 - t0, events, lost,
                c0, c1, c2, rss() if rss is not None else "null"))
        self.i = i + 1
        if self.limit and self.i >= self.warmup + self.limit:
            self.finish()
            return
        # The tracer's own work is not the next step's.
        self.t0 = perf_counter_ns()

    def finish(self):
        """Write the end record and the step count; stop recording."""
        if self.done or self.fd is None or os.getpid() != self.pid:
            if not self.done:
                self.recorder.remove()
            self.done = True
            return
        self.done = True
        self.recorder.remove()
        stats1 = gc.get_stats()
        self.stream.write_obj({
            "type": "end",
            "steps": self.i,
            "wall_ns": 0,
            "gc_stats": [{k: stats1[g][k] - self.stats0[g].get(k, 0) for k in stats1[g]} for g in range(len(stats1))],
            "recorded": list(self.recorder.totals),
            "freeze_count": gc.get_freeze_count(),
            "heap": heap(),
        })
        measured = max(self.i - self.warmup, 0)
        os.pwrite(self.fd, str(measured).ljust(_STEPS_WIDTH).encode("ascii"), self.steps_at)
        os.close(self.fd)
        self.fd = None


def heap():
    """Objects the collector tracks, per generation: the young objects, the
    middle generation, and the long-lived heap a full collection walks."""
    return [len(gc.get_objects(g)) for g in range(3)]


def step():
    """Mark the end of a training step (for loops without an optimizer, or
    with several): from the first call on, only these calls mark steps."""
    if _tracer is not None:
        _tracer.explicit = True
        _tracer.step()


def _auto_step():
    """A step end seen by a hook: ignored once the script marks its own."""
    if _tracer is not None and not _tracer.explicit:
        _tracer.step()


# Calls of wrapped step functions in progress: a subclass's step that calls
# super().step() ends one step, not two, when both classes are wrapped.
_depth = [0]


def _wrap(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _depth[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1
            if _depth[0] == 0:
                _auto_step()
    wrapper.__gcjitter_traced__ = True
    return wrapper


def _hook_optimizer(optim_mod):
    """Step ends at optimizer.step: torch's global post-hook (2.0+), else
    each Optimizer subclass's step wrapped when its first instance is made."""
    hook = getattr(optim_mod, "register_optimizer_step_post_hook", None)
    if hook is not None:
        hook(lambda opt, args, kwargs: _auto_step())
        return
    Optimizer = optim_mod.Optimizer
    init = Optimizer.__init__

    def __init__(self, *args, **kwargs):
        cls = type(self)
        if not getattr(cls.step, "__gcjitter_traced__", False):
            cls.step = _wrap(cls.step)
        init(self, *args, **kwargs)
    Optimizer.__init__ = __init__


def _hook_step_fn(spec):
    """module:qualname: the step ends when that function returns."""
    mod_name, _, qual = spec.partition(":")
    if not mod_name or not qual:
        sys.stderr.write("gcjitter trace: -step-fn %r: want module:qualname\n" % spec)
        return

    def patch(mod):
        parts = qual.split(".")
        owner = mod
        for p in parts[:-1]:
            owner = getattr(owner, p)
        setattr(owner, parts[-1], _wrap(getattr(owner, parts[-1])))
    if mod_name == "__main__":
        # The script's own module: patched when the step function is first
        # defined, by a trace function on the main module's frames.
        _patch_main(qual)
        return
    _after_import(mod_name, patch)


def _patch_main(qual):
    name = qual.split(".")[-1]

    def tracer(frame, event, arg):
        if frame.f_globals.get("__name__") != "__main__":
            return None
        if event == "line" or event == "return":
            fn = frame.f_globals.get(name)
            if callable(fn) and not getattr(fn, "__gcjitter_traced__", False):
                frame.f_globals[name] = _wrap(fn)
                sys.settrace(None)
                frame.f_trace = None
                return None
        return tracer
    sys.settrace(tracer)


def _after_import(name, fn):
    """Call fn(module) once module name is imported (now, if it is)."""
    if name in sys.modules:
        fn(sys.modules[name])
        return
    import importlib.abc
    import importlib.machinery

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def run(module):
                exec_module(module)
                fn(module)
            spec.loader.exec_module = run
            return spec
    sys.meta_path.insert(0, Finder())


def start():
    global _tracer
    out = os.environ.get(DIR_ENV)
    if not out or _tracer is not None:
        return
    steps = int(os.environ.get(STEPS_ENV, "0") or 0)
    warmup = int(os.environ.get(WARMUP_ENV, "0") or 0)
    _tracer = Tracer(out, steps, warmup)
    import atexit
    atexit.register(_tracer.finish)
    spec = os.environ.get(STEP_FN_ENV)
    if spec:
        _hook_step_fn(spec)
    else:
        _after_import("torch.optim.optimizer", _hook_optimizer)
    # The script may also call gcjitter_step() without importing anything.
    import builtins
    builtins.gcjitter_step = step
    _finish_on_sigterm()


def _finish_on_sigterm():
    """A SIGTERM (a CI timeout) ends the stream before the process dies the
    way it would have: the default action, re-raised. A handler the script
    installs later replaces this one."""
    import signal
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_term(signum, frame):
        if _tracer is not None:
            _tracer.finish()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    signal.signal(signal.SIGTERM, on_term)
