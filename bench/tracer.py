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
calls gcjitter_trace.step(). When several optimizers step in turn (a GAN's D
and G), a step ends at the one that stepped first last: one step per cycle. Step i is the time from the end of step i-1 to
the end of step i: the loop's data loading, forward, backward and whatever
the script does between optimizer steps. The time before the first step end
(imports, set-up, the first step) is not a step.

Environment (set by gcjitter trace): GCJITTER_TRACE_DIR, the directory for
streams; GCJITTER_TRACE_STEPS, steps to record (0: all); GCJITTER_TRACE_WARMUP,
leading steps marked warm-up; GCJITTER_TRACE_STEP_FN, module:qualname;
GCJITTER_TRACE_POLICY, a GC policy in the worker's grammar (parse_policy),
applied at interpreter start and at the step ends as the worker applies it.

Besides its stream, a process that stepped an optimizer or met the step
function leaves status-PID.json at exit: how its steps were marked, for
gcjitter's own account of the trace.
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
POLICY_ENV = "GCJITTER_TRACE_POLICY"

# Width reserved for the meta record's step count, rewritten in place at the
# end (JSON allows the padding spaces).
_STEPS_WIDTH = 12

# A new optimizer stepping while the stream holds at most this many steps
# starts the recording again with steps ending at it (a GAN's G steps first
# after D, a WGAN's after n_critic D steps); later, it is a phase of the job
# and is only noted.
CYCLE_WINDOW = 100

_tracer = None


class Tracer(object):
    def __init__(self, out_dir, steps, warmup, policy=None, gc0=None):
        self.out_dir = out_dir
        # -policy (a worker.Policy, applied at start by apply_policy), and
        # the collector's settings it left, which the job should not move.
        self.policy = policy
        self.gc0 = gc0
        self.gc_changed = None
        self.frozen = False
        # Step ends since the clock started, recorded or not: the policy's
        # step action goes on after -steps stops the recording.
        self.ends = 0
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
        # Optimizers by id(): (label, weak reference, id of the first
        # parameter), labels in order of first step; steps end at end_at's.
        self.optims = {}
        self.labels = []
        self.end_at = None
        self.end_ref = None
        self.late = []
        self.restarts = 0
        # -step-fn: patched (where), calls, or why not.
        self.step_fn = None
        self.fn_where = None
        self.fn_calls = 0
        self.fn_error = None

    def _open(self):
        rank = os.environ.get("RANK")
        # The pid too: processes that inherit one RANK keep their own files.
        name = ("rank-%s.pid-%d.jsonl" % (rank, self.pid)) if rank is not None else ("pid-%d.jsonl" % self.pid)
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
            "policy": self.policy.text if self.policy is not None else "traced",
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
            "notes": ["traced: " + " ".join(sys.argv), "steps end at " + self.marker()] + (
                ["the job changed the collector's settings: " + self.gc_changed] if self.gc_changed else []),
            "heap": heap(),
        }

    def step(self):
        """A step ended: record it (the first end only starts the clock)."""
        scheduled = False
        if self.t0 is not None and self.policy is not None and self.policy.has_step_action:
            # Inside the step's time, before t1, as the worker's loop does
            # it: the step that collects is the slow one, marked sched.
            if os.getpid() != self.pid:
                return
            self.ends += 1
            scheduled = self._step_action()
        t1 = perf_counter_ns()
        # getpid is a system call: after t1, not inside every step's time
        # (it put ~100-200 ns in each traced step). A forked child never
        # gets here through the module's functions (_after_fork drops the
        # parent's tracer there); this guards a bound method kept across
        # a fork.
        if self.done or os.getpid() != self.pid:
            return
        if self.t0 is None:
            self.recorder.take(t1)  # set-up's collections are not a step's
            self.recorder.totals = [0, 0, 0]
            self._check_gc()
            self._open()
            self._freeze_at(0)
            self.t0 = perf_counter_ns()
            return
        t0 = self.t0
        events, lost = self.recorder.take(t0)
        c0, c1, c2 = gc.get_count()
        rss = self.rss
        i = self.i
        data = ('{"type":"step","i":%d,"warmup":%s,"ns":%d,"gc":%s,"lost":%d,"sched":%s,'
                '"count":[%d,%d,%d],"rss":%s,"dev_mem":null}\n' % (
                    i, "true" if i < self.warmup else "false", t1 - t0, events, lost,
                    "true" if scheduled else "false",
                    c0, c1, c2, rss() if rss is not None else "null")).encode("utf-8")
        # The count moves first and one write follows with no call between:
        # a Ctrl-C the job handles (KeyboardInterrupt, raised where the
        # interpreter checks for signals: at calls and loops, after a
        # builtin returns) lands before both or after both, never between
        # the line and its count (a repeated index left the stream
        # incomplete and the job without a run).
        fd = self.stream.fd
        self.i = i + 1
        n = os.write(fd, data)
        while n < len(data):
            n += os.write(fd, data[n:])
        if self.limit and self.i >= self.warmup + self.limit:
            self.finish()
            return
        self._freeze_at(self.i)
        # The tracer's own work is not the next step's.
        self.t0 = perf_counter_ns()

    def _step_action(self):
        """The policy's step-end action (manual:N, collect-every-step,
        empty-cache-every-step), as the worker's loop does it: collections
        marked manual in the recorder. Whether it collected."""
        p, state = self.policy, self.recorder.state
        collected = False
        if p.manual_every and self.ends % p.manual_every == 0:
            state[worker._IN_SCHEDULED] = 1
            gc.collect(p.manual_gen)
            state[worker._IN_SCHEDULED] = 0
            collected = True
        elif p.collect_every_step:
            state[worker._IN_SCHEDULED] = 1
            gc.collect()
            state[worker._IN_SCHEDULED] = 0
            collected = True
        if p.empty_cache_every_step:
            _empty_cache()
        return collected

    def _freeze_at(self, i):
        """freeze: once, when the warm-up's i steps are done (outside any
        step's time, as the worker freezes before its first measured step)."""
        if self.policy is not None and self.policy.freeze and not self.frozen and i == self.warmup:
            self.frozen = True
            gc.freeze()

    def _check_gc(self):
        """The job moved the collector's settings away from what it had at
        interpreter start (under -policy, what the policy set): the run then
        measures the job's settings, not the policy named. Noted once."""
        if self.gc_changed or self.gc0 is None:
            return
        enabled, thresholds, frozen = self.gc0
        what = []
        if gc.isenabled() != enabled:
            what.append("gc.enable()" if gc.isenabled() else "gc.disable()")
        if gc.get_threshold() != thresholds:
            what.append("gc.set_threshold%s (was %s)" % (gc.get_threshold(), thresholds))
        if gc.get_freeze_count() > frozen and not self.frozen:
            what.append("gc.freeze() (%d objects)" % gc.get_freeze_count())
        if what:
            self.gc_changed = ", ".join(what)

    def marker(self):
        """What ends a step, in words (the meta's note, gcjitter's line)."""
        if self.explicit:
            return "gcjitter_step()"
        if self.step_fn:
            return "-step-fn " + self.step_fn
        if len(self.labels) > 1:
            return "%s's step (optimizers in turn: %s)" % (self.end_at, ", ".join(self.labels))
        return "%s's step" % self.end_at

    def optimizer_stepped(self, opt):
        """An optimizer's step returned: a step ends if it is end_at's."""
        if self.explicit or os.getpid() != self.pid:
            return
        if self.done and (self.policy is None or not self.policy.has_step_action):
            return
        e = self.optims.get(id(opt))
        if e is None or e[1]() is not opt:
            e = self._new_optimizer(opt)
        if e[0] is self.end_at:
            self.step()

    def _new_optimizer(self, opt):
        import weakref
        cls = type(opt).__name__
        try:
            params = id(opt.param_groups[0]["params"][0])
        except Exception:
            params = None
        try:
            ref = weakref.ref(opt)
        except TypeError:
            ref = lambda: opt  # noqa: E731 (kept alive; rare)
        for key, (label, old, old_params) in list(self.optims.items()):
            if params is not None and old_params == params and label.rsplit("#", 1)[0] == cls:
                # The same class over the same parameters (an optimizer
                # made anew each epoch): the same role, under its name.
                del self.optims[key]
                e = self.optims[id(opt)] = (label, ref, params)
                if label is self.end_at:
                    self.end_ref = ref
                return e
            if old() is None:
                del self.optims[key]
                self.labels.remove(label)
        n = 1 + sum(1 for label in self.labels if label.rsplit("#", 1)[0] == cls)
        label = "%s#%d" % (cls, n)
        e = self.optims[id(opt)] = (label, ref, params)
        self.labels.append(label)
        if self.end_ref is not None and self.end_ref() is None:
            # The optimizer that ended steps is gone: this one takes its
            # place, the recording goes on.
            self.end_at, self.end_ref = label, ref
        elif self.end_at is None or (self.i <= CYCLE_WINDOW and not self.done):
            # Steps end at the optimizer that stepped first last: start
            # the recording again at its step.
            if self.end_at is not None:
                self._restart()
            self.end_at, self.end_ref = label, ref
        else:
            self.late.append(label)
        return e

    def _restart(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = self.stream = None
        self.t0 = None
        self.i = self.ends = 0
        self.restarts += 1

    def fn_returned(self):
        self.fn_calls += 1
        if not self.explicit:
            self.step()

    def finish(self):
        """Write the end record and the step count, and the status; stop
        recording."""
        if self.done:
            return
        self.done = True
        self.recorder.remove()
        if os.getpid() != self.pid:
            return
        self._check_gc()
        self._write_status()
        if self.fd is None:
            return
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

    def _write_status(self):
        """status-PID.json, for a process that stepped an optimizer or met
        the step function: what marked its steps (written whole, renamed)."""
        if not self.labels and not self.fn_where and not self.fn_error and not self.explicit:
            return
        status = {
            "pid": self.pid,
            "stream": self.fd is not None,
            "steps": self.i,
            "marker": self.marker() if (self.end_at or self.step_fn or self.explicit) else None,
            "optimizers": self.labels,
            "end_at": self.end_at,
            "late_optimizers": self.late,
            "step_fn": self.step_fn,
            "step_fn_where": self.fn_where,
            "step_fn_calls": self.fn_calls,
            "step_fn_error": self.fn_error,
            "explicit": self.explicit,
            "policy": self.policy.text if self.policy is not None else None,
            "gc_changed": self.gc_changed,
        }
        path = os.path.join(self.out_dir, "status-%d.json" % self.pid)
        try:
            with open(path + ".tmp", "w") as f:
                f.write(self._dumps(status))
            os.replace(path + ".tmp", path)
        except OSError:
            pass


def _empty_cache():
    """empty-cache-every-step: the job's device cache, where torch has one
    in use (none on a CPU, as the worker notes)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    if "torch_npu" in sys.modules:
        torch.npu.empty_cache()
    elif torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _gc_settings():
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def apply_policy(policy):
    """At interpreter start, what the worker's start_run sets before its
    loop: thresholds, and automatic collection off for disabled and manual
    (without its resetting collection: the job has made nothing yet).
    freeze and the step actions come at the step ends."""
    if policy.threshold is not None:
        t = list(gc.get_threshold())
        t[: len(policy.threshold)] = policy.threshold
        gc.set_threshold(*t)
    if policy.disabled or policy.manual_every:
        gc.disable()


def heap():
    """Objects the collector tracks, per generation: the young objects, the
    middle generation, and the long-lived heap a full collection walks."""
    return [len(gc.get_objects(g)) for g in range(3)]


def step():
    """Mark the end of a training step (for loops without an optimizer, or
    with several): from the first call on, only these calls mark steps."""
    t = _tracer or _child_tracer()
    if t is not None:
        t.explicit = True
        t.step()


def _optimizer_step(opt):
    """An optimizer's step returned: ignored once the script marks its own."""
    t = _tracer or _child_tracer()
    if t is not None:
        t.optimizer_stepped(opt)


def _fn_returned():
    t = _tracer or _child_tracer()
    if t is not None:
        t.fn_returned()


# What start() read from the environment, for a forked child's tracer.
_config = {}
_forked = [False]


def _after_fork():
    """In a forked child (torch.multiprocessing's default, hogwild's
    trainers, data loader workers): the parent's tracer copy stays silent;
    the child gets its own once it ends a step (_child_tracer), so workers
    that never step cost nothing."""
    global _tracer
    if _tracer is not None and _tracer.pid != os.getpid():
        _tracer.recorder.remove()
        _tracer.done = True
        _tracer = None
        _forked[0] = True


def _child_tracer():
    global _tracer
    if not _forked[0] or _tracer is not None:
        return _tracer
    # What the child starts from is what its parent left it (a change
    # the job made there is the parent's to report).
    _tracer = Tracer(_config["out"], _config["steps"], _config["warmup"], _config["policy"], _gc_settings())
    _tracer.step_fn = _config["step_fn"]
    # A multiprocessing child leaves by os._exit after its finalizers,
    # never through atexit.
    import atexit
    atexit.register(_tracer.finish)
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(_tracer, _tracer.finish, exitpriority=100)
    return _tracer


# Calls of wrapped step functions in progress: a subclass's step that calls
# super().step() ends one step, not two, when both classes are wrapped.
_depth = [0]


def _wrap(fn, on_return):
    """fn, calling on_return(its first argument) when an outermost call
    returns (the optimizer, for a step method)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _depth[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1
            if _depth[0] == 0:
                on_return(args[0] if args else None)
    wrapper.__gcjitter_traced__ = True
    return wrapper


def _hook_optimizer(optim_mod):
    """Step ends at optimizer.step: torch's global post-hook (2.0+), else
    each Optimizer subclass's step wrapped when its first instance is made."""
    hook = getattr(optim_mod, "register_optimizer_step_post_hook", None)
    if hook is not None:
        hook(lambda opt, args, kwargs: _optimizer_step(opt))
        return
    Optimizer = optim_mod.Optimizer
    init = Optimizer.__init__

    def __init__(self, *args, **kwargs):
        cls = type(self)
        if not getattr(cls.step, "__gcjitter_traced__", False):
            cls.step = _wrap(cls.step, _optimizer_step)
        init(self, *args, **kwargs)
    Optimizer.__init__ = __init__


def _hook_step_fn(spec):
    """module:qualname: the step ends when that function returns. Nothing
    here may raise into the job's import: a name that is not there is
    noted in the status (gcjitter says so) and the job runs on."""
    _tracer.step_fn = spec
    mod_name, _, qual = spec.partition(":")
    if not mod_name or not qual:
        _tracer.fn_error = "want module:qualname"
        return

    def patch(mod):
        _patched(mod, mod_name, qual)
    if mod_name == "__main__":
        # The script's own module: patched when the step function is first
        # defined, by a trace function on the main module's frames.
        _patch_main(qual)
        return
    _after_import(mod_name, patch)


def _patched(mod, mod_name, qual):
    """Patch the step function into mod, noting where or why not; never
    raises into the job's import."""
    t = _tracer or _child_tracer()
    try:
        where = _patch_attr(mod, mod_name, qual)
    except Exception as e:  # gcjitter says so, from the status
        if t is not None:
            t.fn_error = str(e)
        return
    if t is not None:
        t.fn_where = where


def _patch_attr(mod, mod_name, qual):
    """Wrap mod's qual (a function, or a method of a class in it) in place;
    where it was found. Raises what is missing."""
    parts = qual.split(".")
    owner, where = mod, mod_name
    for p in parts[:-1]:
        if not hasattr(owner, p):
            raise LookupError("%s has no %s" % (where, p))
        owner, where = getattr(owner, p), where + "." + p
    name = parts[-1]
    if not hasattr(owner, name):
        raise LookupError("%s has no %s" % (where, name))
    # A class's static and class methods are wrapped inside their
    # descriptor, or they would become plain methods.
    raw = owner.__dict__.get(name) if isinstance(owner, type) else None
    if isinstance(raw, (staticmethod, classmethod)):
        setattr(owner, name, type(raw)(_wrap(raw.__func__, lambda _: _fn_returned())))
    else:
        fn = getattr(owner, name)
        if not callable(fn):
            raise LookupError("%s.%s is not a function" % (where, name))
        setattr(owner, name, _wrap(fn, lambda _: _fn_returned()))
    return where + "." + name


def _patch_main(qual):
    name = qual.split(".")[0]

    def tracer(frame, event, arg):
        if frame.f_globals.get("__name__") != "__main__":
            return None
        if event == "line" or event == "return":
            if frame.f_globals.get(name) is not None:
                sys.settrace(None)
                frame.f_trace = None
                _patched(sys.modules.get("__main__"), "__main__", qual)
                return None
        return tracer
    sys.settrace(tracer)


def _after_import(name, fn):
    """Call fn(module) once module name is imported (now, if it is)."""
    if name in sys.modules:
        fn(sys.modules[name])
        return
    import importlib.abc

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            # The finders after this one, as the import would have asked.
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
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
    # gcjitter checked it with the Go twin of this parser; a failure here
    # is the tracer's start failing, reported by trace_site.
    text = os.environ.get(POLICY_ENV)
    policy = worker.parse_policy(text) if text else None
    if policy is not None:
        apply_policy(policy)
    gc0 = _gc_settings()
    _tracer = Tracer(out, steps, warmup, policy, gc0)
    import atexit
    atexit.register(_tracer.finish)
    spec = os.environ.get(STEP_FN_ENV)
    _config.update(out=out, steps=steps, warmup=warmup, step_fn=spec or None, policy=policy)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork)
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


def check_step_fn(spec, script):
    """Before the job starts: what -step-fn names that is not there, or "".
    Read from the source, never imported (importing the job's module could
    run the job): module found as the import would find it, the name bound
    at its top level (or in a class there). What the source cannot settle
    (an extension module, a star import) is left to the patch at import."""
    import ast
    import difflib
    mod_name, _, qual = spec.partition(":")
    if not mod_name or not qual:
        return "want module:qualname (e.g. train:train_step)"
    if mod_name == "__main__":
        path = script
    else:
        path, missing = _find_source(mod_name)
        if missing:
            return missing
    if not path or not path.endswith(".py"):
        return ""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return ""  # the job meets it itself
    body, where = tree.body, path
    for k, part in enumerate(qual.split(".")):
        names = {}
        star = _bindings(body, names)
        node = names.get(part)
        if node is None:
            if star or (k == 0 and "__getattr__" in names):
                return ""
            close = difflib.get_close_matches(part, list(names), 3)
            return "%s defines no %s%s" % (where, part, (" (did you mean %s?)" % ", ".join(close)) if close else "")
        if not isinstance(node, ast.ClassDef):
            return ""  # bound by an import or an assignment: left to the patch
        body, where = node.body, "%s: class %s" % (path, node.name)
    return ""


def _bindings(body, names):
    """Names bound in a scope's statements (blocks included, not nested
    functions or classes) into names; whether a star import is among them."""
    import ast
    star = False
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    star = True
                else:
                    names.setdefault(a.asname or a.name.split(".")[0], node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.setdefault(n.id, node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                star = _bindings(inner, names) or star
    return star


def _find_source(mod_name):
    """(source path or None, what is missing or "") for a module, found
    the way the import would find it, without running any of it."""
    import importlib.machinery
    import importlib.util
    parts = mod_name.split(".")
    locations, spec = None, None
    for k in range(len(parts)):
        name = ".".join(parts[:k + 1])
        if k == 0:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
        elif locations is None:
            if name in _imported_names(mod_name, k):
                return None, ""  # made by its parent's import (os.path)
            return None, "%s is a module, not a package: no module %s" % (parts[k - 1], name)
        else:
            spec = importlib.machinery.PathFinder.find_spec(name, list(locations))
        if spec is None:
            return None, "no module named %s" % name
        locations = spec.submodule_search_locations
    return spec.origin, ""


def _imported_names(mod_name, k):
    """Modules that a plain module puts in sys.modules when imported
    (os.path), which the static lookup cannot see: imported here, in the
    check's own process."""
    import importlib
    parent = ".".join(mod_name.split(".")[:k])
    try:
        importlib.import_module(parent)
    except Exception:
        return ()
    return [n for n in sys.modules if n.startswith(parent + ".")]


def _check_main():
    """python -c 'import gcjitter_trace; gcjitter_trace._check_main()'
    SPEC SCRIPT: prints what is missing, exit 1; exit 0 when nothing is."""
    spec, script = sys.argv[1], sys.argv[2]
    if script:
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    else:
        sys.path.insert(0, os.getcwd())
    missing = check_step_fn(spec, script)
    if missing:
        sys.stdout.write(missing + "\n")
        sys.exit(1)
