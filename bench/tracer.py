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

from gcjitter_worker.policy import parse_policy
from gcjitter_trace_stream import Tracer

DIR_ENV = "GCJITTER_TRACE_DIR"
STEPS_ENV = "GCJITTER_TRACE_STEPS"
WARMUP_ENV = "GCJITTER_TRACE_WARMUP"
STEP_FN_ENV = "GCJITTER_TRACE_STEP_FN"
POLICY_ENV = "GCJITTER_TRACE_POLICY"

_tracer = None


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
    policy = parse_policy(text) if text else None
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
