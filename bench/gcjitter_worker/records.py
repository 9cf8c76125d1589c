"""The record stream (one os.write per record) and the meta record's
provenance."""

import gc
import os
import sys

from . import warm
from .common import SCHEMA

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
        "start": warm._STARTED,
    }
