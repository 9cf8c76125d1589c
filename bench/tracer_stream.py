"""gcjitter's tracer, one process's part: the record stream of its steps and
collections, and its status at exit (gcjitter_trace starts it in every
traced process that steps; installed as gcjitter_trace_stream)."""

import gc
import os
import sys

from gcjitter_worker.common import SCHEMA, perf_counter_ns
from gcjitter_worker.recorder import Recorder, _IN_SCHEDULED
from gcjitter_worker.records import Stream, _cpu_model, _rss_reader, python_facts

# Width reserved for the meta record's step count, rewritten in place at the
# end (JSON allows the padding spaces).
_STEPS_WIDTH = 12

# A new optimizer stepping while the stream holds at most this many steps
# starts the recording again with steps ending at it (a GAN's G steps first
# after D, a WGAN's after n_critic D steps); later, it is a phase of the job
# and is only noted.
CYCLE_WINDOW = 100


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
        self.recorder = Recorder(1 << 16)
        self.recorder.install()
        self.stream = None
        self.fd = None
        self.steps_at = 0
        self.t0 = None  # end of the previous step
        self.i = 0
        self.done = False
        self.rss = _rss_reader()
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
        self.stream = Stream(self.fd)
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
        return {
            "type": "meta",
            "schema": SCHEMA,
            "python": python_facts(),
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
            "cpu_model": _cpu_model(),
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
            state[_IN_SCHEDULED] = 1
            gc.collect(p.manual_gen)
            state[_IN_SCHEDULED] = 0
            collected = True
        elif p.collect_every_step:
            state[_IN_SCHEDULED] = 1
            gc.collect()
            state[_IN_SCHEDULED] = 0
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


def heap():
    """Objects the collector tracks, per generation: the young objects, the
    middle generation, and the long-lived heap a full collection walks."""
    return [len(gc.get_objects(g)) for g in range(3)]
