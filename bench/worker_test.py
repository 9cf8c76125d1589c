"""Unit tests of the worker's Python parts: policy parsing, device dispatch
(with fake torch / torch_npu modules, since no accelerator exists here), the
allocation-free recorder and the record format.

Run: cd bench && python3 -m unittest worker_test   (make test does).
Standard library only, like the worker.
"""

import array
import gc
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest
import zipapp

from gcjitter_worker import cli as wcli
from gcjitter_worker import common as wcommon
from gcjitter_worker import device as wdevice
from gcjitter_worker import loop as wloop
from gcjitter_worker import models as wmodels
from gcjitter_worker import policy as wpolicy
from gcjitter_worker import recorder as wrecorder
from gcjitter_worker import records as wrecords

BENCH = os.path.dirname(os.path.abspath(__file__))
_zipapp = []


def program():
    """The argv that runs the worker as gcjitter ships it: the package in
    one zipapp, __main__.py at its root (Python's zipapp here; Go's
    buildWorker makes the same layout)."""
    if not _zipapp:
        d = tempfile.mkdtemp(prefix="gcjitter-worker-test-")
        stage = os.path.join(d, "stage")
        pkg = os.path.join(BENCH, "gcjitter_worker")
        os.makedirs(os.path.join(stage, "gcjitter_worker"))
        for name in sorted(os.listdir(pkg)):
            if name.endswith(".py"):
                with open(os.path.join(pkg, name), "rb") as f:
                    data = f.read()
                with open(os.path.join(stage, "gcjitter_worker", name), "wb") as f:
                    f.write(data)
                if name == "__main__.py":
                    with open(os.path.join(stage, name), "wb") as f:
                        f.write(data)
        zipapp.create_archive(stage, os.path.join(d, "worker.pyz"))
        _zipapp.append(d)
    return [sys.executable, os.path.join(_zipapp[0], "worker.pyz")]


def tearDownModule():
    import shutil
    for d in _zipapp:
        shutil.rmtree(d, ignore_errors=True)


class PolicyTest(unittest.TestCase):
    def test_valid(self):
        cases = {
            "default": dict(),
            "disabled": dict(disabled=True),
            "threshold:700,10,1000": dict(threshold=(700, 10, 1000)),
            "threshold:0": dict(threshold=(0,)),
            "freeze": dict(freeze=True),
            "manual:100": dict(manual_every=100, manual_gen=2),
            "manual:50:1": dict(manual_every=50, manual_gen=1),
            "collect-every-step": dict(collect_every_step=True),
            "empty-cache-every-step": dict(empty_cache_every_step=True),
            "freeze+manual:100": dict(freeze=True, manual_every=100),
            "threshold:10000+freeze+empty-cache-every-step": dict(
                threshold=(10000,), freeze=True, empty_cache_every_step=True),
        }
        for text, want in cases.items():
            with self.subTest(text):
                p = wpolicy.parse_policy(text)
                for k, v in want.items():
                    self.assertEqual(getattr(p, k), v, k)

    def test_invalid(self):
        for text in ["", "bogus", "default+freeze", "manual", "manual:0", "manual:x",
                     "manual:10:3", "manual:10:1:1", "threshold:", "threshold:1,2,3,4",
                     "threshold:-1", "threshold:a", "freeze:1", "freeze+freeze",
                     "disabled+manual:5", "disabled+threshold:5", "manual:5+collect-every-step",
                     "manual:5+threshold:100", "collect-every-step:2", "Default"]:
            with self.subTest(text):
                with self.assertRaises(wcommon.UsageError) as cm:
                    wpolicy.parse_policy(text)
                self.assertNotIn("\n", str(cm.exception))


class FakeAccel(object):
    """A torch.cuda / torch.npu stand-in that counts calls."""

    def __init__(self, n=1, available=True):
        self.n, self.available = n, available
        self.calls = {"synchronize": 0, "empty_cache": 0, "set_device": 0}

    def is_available(self):
        return self.available

    def device_count(self):
        return self.n

    def set_device(self, i):
        self.calls["set_device"] += 1
        self.device_set = i

    def get_device_name(self, i):
        return "Fake Accelerator %d" % i

    def synchronize(self):
        self.calls["synchronize"] += 1

    def empty_cache(self):
        self.calls["empty_cache"] += 1

    def memory_allocated(self):
        return 12345


def fake_torch(cuda=None, npu=None):
    t = types.SimpleNamespace(__version__="0.0-fake", cuda=cuda or FakeAccel(available=False),
                              get_num_threads=lambda: 1, set_num_threads=lambda n: None,
                              version=types.SimpleNamespace(cuda="12.4-fake"))
    if npu is not None:
        t.npu = npu
    return t


class DeviceTest(unittest.TestCase):
    def setUp(self):
        # No real torch_npu exists here; make the import fail or succeed at will.
        self._orig = wdevice._import_torch_npu

    def tearDown(self):
        wdevice._import_torch_npu = self._orig

    def npu_importable(self, ok):
        wdevice._import_torch_npu = (lambda: object()) if ok else (lambda: None)

    def test_auto_prefers_npu_then_cuda_then_cpu(self):
        self.npu_importable(True)
        d = wdevice.resolve_device("auto", fake_torch(cuda=FakeAccel(), npu=FakeAccel()))
        self.assertEqual((d.kind, d.torch_device), ("npu", "npu:0"))
        self.npu_importable(False)
        d = wdevice.resolve_device("auto", fake_torch(cuda=FakeAccel(), npu=FakeAccel()))
        self.assertEqual((d.kind, d.torch_device), ("cuda", "cuda:0"))
        d = wdevice.resolve_device("auto", fake_torch())
        self.assertEqual((d.kind, d.synchronize), ("cpu", None))

    def test_npu_unavailable_falls_back_on_auto_only(self):
        self.npu_importable(True)
        t = fake_torch(npu=FakeAccel(available=False))
        self.assertEqual(wdevice.resolve_device("auto", t).kind, "cpu")
        with self.assertRaises(wcommon.UsageError):
            wdevice.resolve_device("npu", t)

    def test_explicit_index(self):
        self.npu_importable(False)
        cuda = FakeAccel(n=2)
        d = wdevice.resolve_device("cuda:1", fake_torch(cuda=cuda))
        self.assertEqual((d.kind, d.index, d.name), ("cuda", 1, "Fake Accelerator 1"))
        self.assertEqual(cuda.calls["set_device"], 1)
        with self.assertRaises(wcommon.UsageError):
            wdevice.resolve_device("cuda:2", fake_torch(cuda=FakeAccel(n=2)))
        with self.assertRaises(wcommon.UsageError):
            wdevice.resolve_device("cuda", fake_torch())
        for bad in ["tpu", "cpu:1", "cuda:x", "cuda:-1"]:
            with self.assertRaises(wcommon.UsageError):
                wdevice.resolve_device(bad, fake_torch())

    def test_local_rank_picks_the_device(self):
        # Under torchrun each rank on a host takes its own accelerator.
        self.npu_importable(False)
        cuda = FakeAccel(n=4)
        d = wdevice.resolve_device("auto", fake_torch(cuda=cuda), local_rank=2)
        self.assertEqual((d.kind, d.index, d.torch_device), ("cuda", 2, "cuda:2"))
        self.assertEqual(cuda.device_set, 2)
        self.npu_importable(True)
        npu = FakeAccel(n=8)
        d = wdevice.resolve_device("npu", fake_torch(npu=npu), local_rank=5)
        self.assertEqual((d.kind, d.torch_device), ("npu", "npu:5"))
        # An explicit index wins over the local rank.
        d = wdevice.resolve_device("npu:1", fake_torch(npu=FakeAccel(n=8)), local_rank=5)
        self.assertEqual(d.torch_device, "npu:1")
        # More ranks than devices: a clear error, not every rank on device 0.
        self.npu_importable(False)
        with self.assertRaises(wcommon.UsageError) as e:
            wdevice.resolve_device("cuda", fake_torch(cuda=FakeAccel(n=1)), local_rank=3)
        self.assertIn("run at most 1 ranks per host, or use device cpu", str(e.exception))
        # cpu ignores it.
        self.assertEqual(wdevice.resolve_device("auto", fake_torch(), local_rank=3).kind, "cpu")

    def test_local_rank_from_env(self):
        env = dict(os.environ)
        try:
            os.environ.update(WORLD_SIZE="4", RANK="6", LOCAL_RANK="2")
            self.assertEqual(wloop.local_rank_from_env(), 2)
            os.environ["WORLD_SIZE"] = "1"
            self.assertEqual(wloop.local_rank_from_env(), 0)
        finally:
            os.environ.clear()
            os.environ.update(env)

    def run_loop(self, torch, device, policy, steps=7, warmup=2):
        args = wcli._parser().parse_args([
            "--model", "none", "--work", "10", "--device", device, "--policy", policy,
            "--steps", str(steps), "--warmup", str(warmup), "--garbage", "pairs", "--cycles", "5"])
        r, w = os.pipe()
        try:
            wloop.run(args, wrecords.Stream(w), torch)
        finally:
            os.close(w)
        with os.fdopen(r) as f:
            return [json.loads(line) for line in f]

    def test_loop_synchronizes_every_step_on_cuda(self):
        self.npu_importable(False)
        cuda = FakeAccel()
        recs = self.run_loop(fake_torch(cuda=cuda), "auto", "empty-cache-every-step")
        self.assertEqual(recs[0]["device"]["kind"], "cuda")
        self.assertEqual(recs[0]["notes"], [])
        self.assertEqual(cuda.calls["synchronize"], 9)
        self.assertEqual(cuda.calls["empty_cache"], 9)
        self.assertEqual({r["dev_mem"] for r in recs if r["type"] == "step"}, {12345})

    def test_loop_synchronizes_every_step_on_npu(self):
        self.npu_importable(True)
        npu, cuda = FakeAccel(), FakeAccel()
        recs = self.run_loop(fake_torch(cuda=cuda, npu=npu), "npu", "default")
        self.assertEqual(recs[0]["device"]["kind"], "npu")
        self.assertEqual(npu.calls["synchronize"], 9)
        self.assertEqual(npu.calls["empty_cache"], 0)
        self.assertEqual(cuda.calls["synchronize"], 0)

    def test_empty_cache_not_applicable_on_cpu(self):
        self.npu_importable(False)
        recs = self.run_loop(fake_torch(), "cpu", "empty-cache-every-step")
        self.assertIn("not applicable on cpu", recs[0]["notes"][0])
        self.assertEqual(recs[-1]["type"], "end")


FAKE_TORCH_NPU = textwrap.dedent('''
    """A fake torch_npu: registers torch.npu the way the real one does, with
    calls counted and written to $FAKE_NPU_LOG at exit."""
    import atexit, json, os, torch

    calls = {"synchronize": 0, "empty_cache": 0}
    __version__ = "2.1.0.fake"

    class _NPU(object):
        def is_available(self): return True
        def device_count(self): return 1
        def set_device(self, i): pass
        def get_device_name(self, i): return "Ascend910B-fake"
        def synchronize(self): calls["synchronize"] += 1
        def empty_cache(self): calls["empty_cache"] += 1
        def memory_allocated(self): return 4096

    torch.npu = _NPU()

    @atexit.register
    def _dump():
        with open(os.environ["FAKE_NPU_LOG"], "w") as f:
            json.dump(calls, f)
''')


class FakeTorchNPUOnPathTest(unittest.TestCase):
    """The whole worker, as the runner starts it, with a fake torch_npu
    package injected on sys.path next to the real torch."""

    def test_worker_dispatches_to_npu(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("needs torch")
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "torch_npu"))
            with open(os.path.join(d, "torch_npu", "__init__.py"), "w") as f:
                f.write(FAKE_TORCH_NPU)
            log, records = os.path.join(d, "calls.json"), os.path.join(d, "r.jsonl")
            env = dict(os.environ, PYTHONPATH=d, FAKE_NPU_LOG=log)
            p = subprocess.run(
                program() + ["--model", "none", "--work", "10",
                 "--device", "npu", "--policy", "empty-cache-every-step",
                 "--steps", "5", "--warmup", "1", "--records", records],
                env=env, stderr=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(records) as f:
                recs = [json.loads(line) for line in f]
            with open(log) as f:
                calls = json.load(f)
        meta = recs[0]
        self.assertEqual((meta["device"]["kind"], meta["device"]["name"]), ("npu", "Ascend910B-fake"))
        self.assertEqual(meta["torch_npu"], "2.1.0.fake")
        self.assertEqual(calls, {"synchronize": 6, "empty_cache": 6})
        self.assertEqual(recs[1]["dev_mem"], 4096)


FAKE_CUDA_SITECUSTOMIZE = textwrap.dedent('''
    """Makes the real torch report one CUDA device, with the calls the worker
    makes counted and written to $FAKE_CUDA_LOG at exit. Injected on
    sys.path as sitecustomize, so it runs before the worker's own code."""
    import atexit, json, os, torch

    calls = {"synchronize": 0, "empty_cache": 0, "set_device": []}

    def _count(name):
        def f(*a):
            calls[name] += 1
        return f

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.set_device = lambda i: calls["set_device"].append(i)
    torch.cuda.get_device_name = lambda i=None: "H200-fake"
    torch.cuda.synchronize = _count("synchronize")
    torch.cuda.empty_cache = _count("empty_cache")
    torch.cuda.memory_allocated = lambda *a: 8192

    class Event(object):
        """A timing event whose device work always took 1 us."""
        def __init__(self, enable_timing=False):
            assert enable_timing
        def record(self):
            calls["record"] = calls.get("record", 0) + 1
        def elapsed_time(self, end):
            return 0.001
    torch.cuda.Event = Event

    @atexit.register
    def _dump():
        with open(os.environ["FAKE_CUDA_LOG"], "w") as f:
            json.dump(calls, f)
''')


def run_worker_with_path(test, files, argv, extra_env=None):
    """Runs the whole worker as the runner does, with the given modules
    written into a directory placed first on sys.path."""
    try:
        import torch  # noqa: F401
    except ImportError:
        test.skipTest("needs torch")
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            path = os.path.join(d, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        records = os.path.join(d, "r.jsonl")
        env = dict(os.environ, PYTHONPATH=d)
        env.update({k: v.replace("{dir}", d) for k, v in (extra_env or {}).items()})
        p = subprocess.run(program() + argv + ["--records", records],
                           env=env, stderr=subprocess.PIPE, universal_newlines=True)
        test.assertEqual(p.returncode, 0, p.stderr)
        with open(records) as f:
            recs = [json.loads(line) for line in f]
        logs = {}
        for name in os.listdir(d):
            if name.endswith(".log"):
                with open(os.path.join(d, name)) as f:
                    logs[name] = json.load(f)
        return recs, logs


class FakeCUDAOnPathTest(unittest.TestCase):
    """The whole worker on cuda through the real torch, its torch.cuda made
    to report one device: every step synchronizes and the empty-cache policy
    releases the cache once per step. (auto's preference order is tested
    in DeviceTest; model none on auto never imports torch, so stays on cpu.)"""

    def test_worker_dispatches_to_cuda(self):
        recs, logs = run_worker_with_path(
            self, {"sitecustomize.py": FAKE_CUDA_SITECUSTOMIZE},
            ["--model", "none", "--work", "10", "--device", "cuda",
             "--policy", "empty-cache-every-step", "--steps", "5", "--warmup", "1"],
            {"FAKE_CUDA_LOG": "{dir}/cuda.log"})
        meta = recs[0]
        self.assertEqual((meta["device"]["kind"], meta["device"]["name"]), ("cuda", "H200-fake"))
        self.assertEqual(meta["notes"], [])
        self.assertEqual(logs["cuda.log"], {"synchronize": 6, "empty_cache": 6, "set_device": [0], "record": 12})
        steps = [r for r in recs if r["type"] == "step"]
        self.assertEqual({r["dev_mem"] for r in steps}, {8192})
        # The device's side of the step, from the events: 1 us busy, clipped
        # to the step's wall time (a clean CI run's step took 992 ns).
        busy = [min(1000, r["ns"]) for r in steps]
        self.assertEqual([r["dev_busy"] for r in steps], busy)
        self.assertEqual([r["dev_idle"] for r in steps], [r["ns"] - b for r, b in zip(steps, busy)])


class ResnetWithoutTorchvisionTest(unittest.TestCase):
    """Without torchvision the resnet model is the built-in ResNet-18 and
    the meta record says so."""

    def test_builtin_resnet18(self):
        broken = "raise ImportError('torchvision hidden by the test')\n"
        recs, _ = run_worker_with_path(
            self, {"torchvision/__init__.py": broken},
            ["--model", "resnet", "--image", "32", "--batch", "2", "--device", "cpu",
             "--steps", "3", "--warmup", "1", "--threads", "1"])
        self.assertIn("built-in ResNet-18", " ".join(recs[0]["notes"]))
        steps = [r for r in recs if r["type"] == "step"]
        self.assertEqual(len(steps), 4)
        self.assertEqual(recs[-1]["type"], "end")

    def test_builtin_resnet18_matches_torchvision(self):
        try:
            import torch
            import torchvision
        except ImportError:
            self.skipTest("needs torch and torchvision")
        def shapes(m):
            return [tuple(p.shape) for p in m.parameters()]
        self.assertEqual(shapes(wmodels._resnet18(torch.nn, 10)),
                         shapes(torchvision.models.resnet18(num_classes=10)))


def run_worker(test, argv):
    """Runs the whole worker (model none needs no torch) and returns its
    records."""
    with tempfile.TemporaryDirectory() as d:
        records = os.path.join(d, "r.jsonl")
        p = subprocess.run(program() + argv + ["--records", records],
                           env=dict(os.environ, PYTHONHASHSEED="0"),
                           stderr=subprocess.PIPE, universal_newlines=True)
        test.assertEqual(p.returncode, 0, p.stderr)
        with open(records) as f:
            return [json.loads(line) for line in f]


def gc_schedule(recs):
    """What must not move: collections per generation as the interpreter
    counted them, and the generation of every recorded collection, step by
    step."""
    end = recs[-1]
    return ([g["collections"] for g in end["gc_stats"]],
            [[e["gen"] for e in r["gc"]] for r in recs if r["type"] == "step"])


# A seeded run whose garbage makes collections of every generation.
GARBAGE_RUN = ["--model", "none", "--work", "200", "--device", "cpu", "--steps", "150",
               "--warmup", "5", "--garbage", "pairs+ring+graph+logdict", "--cycles", "40",
               "--objects", "5", "--long-lived", "20000", "--retain", "6", "--seed", "3"]


class WorkloadKnobsTest(unittest.TestCase):
    """--compute-scale and --device-wait-ms change how long a step takes,
    never which collections it makes."""

    def parse(self, *argv):
        args = wcli._parser().parse_args(list(argv))
        wcli._validate(args)
        return args

    def test_validation(self):
        for argv in (["--compute-scale", "0.5"], ["--compute-scale", "3"],
                     ["--device-wait-ms", "0"], ["--device-wait-ms", "2.5"],
                     ["--device-wait-ms", "3600000"]):
            with self.subTest(argv):
                self.parse(*argv)
        for argv in (["--compute-scale", "0"], ["--compute-scale", "-1"],
                     ["--compute-scale", "nan"], ["--compute-scale", "inf"],
                     ["--compute-scale", "x"], ["--device-wait-ms", "-1"],
                     ["--device-wait-ms", "nan"], ["--device-wait-ms", "inf"],
                     ["--device-wait-ms", "3600001"]):
            with self.subTest(argv):
                with self.assertRaises(wcommon.UsageError) as cm:
                    self.parse(*argv)
                self.assertIn(argv[0], str(cm.exception))
                self.assertNotIn("\n", str(cm.exception))

    def test_scale_compute(self):
        for argv, want in (
                (["--model", "mlp", "--batch", "8", "--compute-scale", "2"], (16, 20000)),
                (["--model", "gpt", "--batch", "3", "--compute-scale", "0.5"], (2, 20000)),
                (["--model", "resnet", "--batch", "8", "--compute-scale", "0.01"], (1, 20000)),
                (["--model", "none", "--work", "1000", "--compute-scale", "2"], (8, 2000)),
                (["--model", "none", "--work", "0", "--compute-scale", "2"], (8, 0)),
                (["--model", "none", "--work", "10", "--compute-scale", "0.001"], (8, 1)),
                (["--model", "mlp", "--batch", "8"], (8, 20000))):
            with self.subTest(argv):
                args = self.parse(*argv)
                wmodels.scale_compute(args)
                self.assertEqual((args.batch, args.work), want)

    def test_compute_scale_doubles_work_and_is_in_meta(self):
        base = ["--model", "none", "--work", "1000", "--steps", "3", "--warmup", "1"]
        meta = run_worker(self, base)[0]
        self.assertEqual((meta["sizes"]["work"], meta["compute_scale"], meta["device_wait_ms"]), (1000, 1, 0))
        meta = run_worker(self, base + ["--compute-scale", "2"])[0]
        self.assertEqual((meta["sizes"]["work"], meta["compute_scale"]), (2000, 2))

    def test_compute_scale_doubles_the_batch(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("needs torch")
        recs = run_worker(self, ["--model", "mlp", "--batch", "4", "--hidden", "16", "--device", "cpu",
                                 "--threads", "1", "--steps", "2", "--warmup", "0", "--compute-scale", "2"])
        self.assertEqual((recs[0]["sizes"]["batch"], recs[0]["compute_scale"]), (8, 2))
        self.assertEqual(recs[-1]["type"], "end")

    def test_device_wait_makes_every_step_at_least_that_long(self):
        recs = run_worker(self, ["--model", "none", "--work", "10", "--steps", "20", "--warmup", "1",
                                 "--device-wait-ms", "5"])
        self.assertEqual(recs[0]["device_wait_ms"], 5)
        steps = [r for r in recs if r["type"] == "step"]
        self.assertEqual(len(steps), 21)
        # Only a lower bound: the machine is noisy.
        for r in steps:
            self.assertGreaterEqual(r["ns"], 5000000, "step %d" % r["i"])

    def test_no_wait_no_call(self):
        def loop(*extra):
            args = wcli._parser().parse_args(
                ["--model", "none", "--work", "10", "--device", "cpu", "--steps", "4", "--warmup", "1"] + list(extra))
            r, w = os.pipe()
            calls = []
            orig = wloop.time.sleep
            wloop.time.sleep = lambda s: calls.append(s)
            try:
                wloop.run(args, wrecords.Stream(w), None)
            finally:
                wloop.time.sleep = orig
                os.close(w)
            with os.fdopen(r) as f:
                f.read()
            return calls
        self.assertEqual(loop(), [])
        self.assertEqual(loop("--device-wait-ms", "2"), [0.002] * 5)

    def test_knobs_do_not_move_the_gc_schedule(self):
        want = gc_schedule(run_worker(self, GARBAGE_RUN))
        self.assertTrue(all(want[0]), "not every generation collected: the test would prove nothing: %s" % want[0])
        for extra in (["--device-wait-ms", "1"], ["--compute-scale", "3"]):
            with self.subTest(extra):
                got = gc_schedule(run_worker(self, GARBAGE_RUN + extra))
                self.assertEqual(got[0], want[0], "collections per generation")
                self.assertEqual(got[1], want[1], "collections step by step")


class GarbageEveryTest(unittest.TestCase):
    def test_garbage_on_one_step_in_n(self):
        # The collector's young count grows by a step's garbage on every
        # third step and stays put on the others; 3 cycles of 2 objects
        # stay far below a collection, so the counts are exact.
        recs = run_worker(self, ["--model", "none", "--work", "1", "--steps", "9", "--warmup", "0",
                                 "--garbage", "ring", "--cycles", "3", "--objects", "2",
                                 "--garbage-every", "3", "--no-recorder"])
        self.assertEqual(recs[0]["garbage"]["every"], 3)
        counts = [r["count"][0] for r in recs if r["type"] == "step"]
        grew = [i for i in range(1, len(counts)) if counts[i] - counts[i - 1] >= 6]
        self.assertEqual(grew, [3, 6], counts)
        with self.assertRaises(wcommon.UsageError):
            wcli._validate(wcli._parser().parse_args(["--garbage-every", "0"]))


class EmulatedDeviceTest(unittest.TestCase):
    """The emulated asynchronous device: a separate process with a bounded
    launch queue, whose side of every step lands on the step record, and
    whose pipes leave the collector's schedule as deterministic as ever."""

    EMU = ["--emu-device-ms", "4", "--emu-kernels", "8", "--emu-queue-depth", "3"]

    def test_every_step_carries_the_device_side(self):
        # 64 kernels: the step's result is over PIPE_BUF, and the host's
        # work between launches leaves the device idle between kernels.
        for kernels in (8, 64):
            with self.subTest(kernels=kernels):
                self.check_device_side(kernels)

    def check_device_side(self, kernels):
        kernel_ns = 4000000 // kernels
        recs = run_worker(self, GARBAGE_RUN[:13] + ["40"] + GARBAGE_RUN[14:] + self.EMU[:3] + [str(kernels)] + self.EMU[4:])
        meta = recs[0]
        self.assertEqual(meta["emulated_device"], {"kind": "emulated", "kernel_ns": kernel_ns, "kernels": kernels,
                                                   "queue_depth": 3, "mid_syncs": 0})
        steps = [r for r in recs if r["type"] == "step"]
        self.assertEqual(len(steps), 155)
        for r in steps:
            # The device's timeline is its own: busy is exactly the work
            # launched, all inside the step (the host waited for it).
            self.assertEqual(r["dev_busy"], 4000000, r)
            self.assertEqual(r["dev_idle"], r["ns"] - r["dev_busy"])
            self.assertGreaterEqual(r["dev_slack"], 0)
            self.assertLessEqual(r["dev_slack"], 3 * kernel_ns, "the lead is at most the queue's work")
            self.assertLessEqual(r["dev_idle_gc"], r["dev_idle"])
            in_step = [e for e in r["gc"] if e["in_step"]]
            self.assertEqual(r["dev_lead_gc"] >= 0, bool(in_step), r)
        # Its process is gone with the run: no orphan emulator.
        # "--": without it pgrep takes --serve-device as its own option,
        # exits 2 and prints nothing, and the check could never fail.
        done = subprocess.run(["pgrep", "-f", "--", "--serve-device"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertIn(done.returncode, (0, 1), done.stderr)
        self.assertEqual(done.stdout.strip(), b"", "a device process outlived its worker")

    def test_schedule_is_deterministic(self):
        argv = GARBAGE_RUN + self.EMU + ["--emu-syncs", "2"]
        self.assertEqual(gc_schedule(run_worker(self, argv)), gc_schedule(run_worker(self, argv)))

    def test_bad_flags_are_usage_errors(self):
        for extra, want in ((["--emu-kernels", "0"], "--emu-kernels"),
                            (["--emu-kernels", "300"], "--emu-kernels"),
                            (["--emu-queue-depth", "0"], "--emu-queue-depth"),
                            (["--emu-syncs", "8"], "--emu-syncs"),
                            (["--emu-jitter", "1"], "--emu-jitter"),
                            (["--device-wait-ms", "3"], "use one")):
            args = wcli._parser().parse_args(["--model", "none"] + self.EMU + extra)
            with self.assertRaisesRegex(wcommon.UsageError, want):
                wcli._validate(args)

    def test_idle_gaps_between_64_kernels_are_not_busy(self):
        """Known truth: 64 kernels of 50 us launched 100 us apart, so the
        device is busy 64 of the 127 kernel-times from the first launch to
        the last end, in 64 spans. Stamps are the device's input (start =
        max(launch, previous end)), so the truth holds however late the
        pipes deliver them."""
        kernels, kernel_ns = 64, 50000
        dev = wdevice.EmulatedDevice(kernels * kernel_ns / 1e6, kernels, kernels, 0, 0.0, 1)
        try:
            self.assertEqual(dev.kernel_ns, kernel_ns)
            t0 = wcommon.perf_counter_ns() + 1000000
            for k in range(kernels):
                os.read(dev.credit, 1)
                dev.launched[k] = dev.kmsg[1] = t0 + 2 * k * kernel_ns
                os.write(dev.cmd, dev.kmsg)
            t1 = t0 + (2 * kernels - 1) * kernel_ns
            dev.smsg[1] = t1
            os.write(dev.cmd, dev.smsg)
            wdevice.emu_read_result(os.readv, dev.result, dev.whole, dev.rest)
        finally:
            dev.close()
        spans = dev.spans
        text = wdevice.device_account(spans, dev.launched, kernels, t0, t1, t1, array.array("q"), 0, wrecorder.Recorder.FIELDS)
        got = json.loads("{" + text[1:] + "}")
        self.assertEqual((got["dev_busy"], got["dev_idle"]), (kernels * kernel_ns, (kernels - 1) * kernel_ns),
                         "device-util %.3f, want 64/127 = %.3f" % (got["dev_busy"] / (t1 - t0), kernels / (2 * kernels - 1)))
        self.assertEqual(spans[0], kernels, "one busy span per kernel: every gap between them is idle")
        self.assertEqual(list(spans[wdevice.EMU_ENDS:wdevice.EMU_ENDS + kernels]),
                         [t0 + (2 * k + 1) * kernel_ns for k in range(kernels)])

    def test_a_split_result_is_read_whole(self):
        """The result is over PIPE_BUF, so the pipe may hand it over in
        pieces, cut anywhere: it is read whole, and reading it allocates
        nothing the collector tracks. readv is a fake that hands over the
        pieces 1, 4094, 4 and the rest."""
        size = wdevice.EMU_RESULT_SLOTS * 8
        src = bytes((7 * k + 3) % 251 for k in range(size))
        cuts = array.array("q", [0, 1, 4095, 4099, size])
        at = array.array("q", [0])

        def readv(fd, bufs):
            i = at[0]
            at[0] = i + 1
            lo, hi = cuts[i], cuts[i + 1]
            b = bufs[0]
            for k in range(hi - lo):
                b[k] = src[lo + k]
            return hi - lo

        spans = array.array("q", [0]) * wdevice.EMU_RESULT_SLOTS
        whole, rest = [memoryview(spans).cast("B")], [bytearray(size)]
        read = wdevice.emu_read_result

        def call():
            at[0] = 0
            read(readv, -1, whole, rest)

        call()
        self.assertEqual(spans.tobytes(), src)
        self.assertEqual(at[0], 4, "the fake handed over every piece")
        moved = collections_started(self, call)
        self.assertEqual(moved, 0, "reading a split result started %d collections: it allocates tracked objects" % moved)
        # The device gone after the first piece: an error, not a short result.
        at[0] = 0
        with self.assertRaisesRegex(EOFError, "mid-result"):
            read(lambda fd, bufs: readv(fd, bufs) if at[0] == 0 else 0, -1, whole, rest)

    def test_account_hides_a_pause_the_queue_covers(self):
        """Known truth on a hand-made timeline (ns): a step from 0 to 100,
        two kernels launched at 10 and 20 ending at 40 and 60, then the
        host idles the device from 60 to 90 and one more kernel runs to
        100. A collection from 30 to 50 starts with 30 queued (lead 30,
        hidden); one from 65 to 90 falls in the idle gap (exposed)."""
        spans = array.array("q", [0]) * wdevice.EMU_RESULT_SLOTS
        spans[0:5] = array.array("q", [2, 10, 60, 90, 100])
        ends = wdevice.EMU_ENDS
        spans[ends:ends + 3] = array.array("q", [40, 60, 100])
        launched = array.array("q", [10, 20, 90])
        W = wrecorder.Recorder.FIELDS
        def account(events):
            buf = array.array("q", [0]) * (W * len(events))
            for i, (start, pause) in enumerate(events):
                buf[i * W], buf[i * W + 1] = start, pause
            text = wdevice.device_account(spans, launched, 3, 0, 100, 95, buf, len(buf), W)
            return json.loads("{" + text[1:] + "}")
        hidden = account([(30, 20)])
        self.assertEqual(hidden, {"dev_busy": 60, "dev_idle": 40, "dev_idle_gc": 0,
                                  "dev_slack": 5, "dev_lead_gc": 30})
        # The longer collection, in the gap, leads: nothing was queued.
        exposed = account([(65, 25), (30, 20)])
        self.assertEqual((exposed["dev_idle_gc"], exposed["dev_lead_gc"]), (25, 0))
        before = account([(-5, 3)])  # between steps: not the step's
        self.assertEqual((before["dev_idle_gc"], before["dev_lead_gc"]), (0, -1))


def collections_started(test, call, times=200):
    """How many of `times` calls of call() started a collection. A net-zero
    transient allocation is invisible in gc.get_count(), yet it can trip
    the gen-0 threshold and move a collection. So the young count is
    stepped through a low threshold one object at a time, and a call that
    allocates a tracked object starts a collection now and then."""
    seen = array.array("q", [0])

    def detector(phase, info):
        if phase == "stop":
            seen[0] += 1

    def settle():
        pass  # a call: 3.12+ runs a scheduled collection here

    hold = [None] * times
    old = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(detector)
    gc.set_threshold(10)
    moved = 0
    try:
        for j in range(times):
            hold[j] = []
            settle()
            before = seen[0]
            call()
            settle()
            if seen[0] != before:
                moved += 1
    finally:
        gc.set_threshold(*old)
        gc.callbacks.remove(detector)
    test.assertGreater(seen[0], 5, "the young count never crossed the threshold: the test proves nothing")
    return moved


class RecorderTest(unittest.TestCase):
    def test_callback_allocates_no_tracked_objects(self):
        rec = wrecorder.Recorder(16)
        cb = rec.callback
        info = {"generation": 2, "collected": 10 ** 12, "uncollectable": 3, "candidates": 10 ** 6, "duration": 0.25}

        def call():
            cb("start", info)
            cb("stop", info)

        moved = collections_started(self, call)
        self.assertEqual(moved, 0, "calling the gc callback started %d collections: it allocates tracked objects" % moved)
        self.assertEqual((rec.state[wrecorder._USED], rec.state[wrecorder._LOST]), (16 * rec.FIELDS, 200 - 16),
                         "overflow must be counted as lost")
        events, lost = rec.take(0)
        self.assertEqual((len(json.loads(events)), lost), (16, 200 - 16))
        self.assertEqual(rec.totals, [0, 0, 16])

    def test_take_formats_json_and_keeps_late_events(self):
        rec = wrecorder.Recorder(8)
        for g in (0, 1):
            rec.callback("start", {})
            rec.callback("stop", {"generation": g, "collected": 5, "uncollectable": 0, "candidates": 0, "duration": 0.0})
        events, lost = rec.take(0)
        got = json.loads(events)
        self.assertEqual([e["gen"] for e in got], [0, 1])
        self.assertTrue(all(e["in_step"] and not e["manual"] for e in got))
        self.assertEqual((lost, rec.state[wrecorder._USED]), (0, 0))
        # An event before the step's start is marked as between steps.
        rec.callback("start", {})
        rec.callback("stop", {"generation": 0, "collected": 0, "uncollectable": 0, "candidates": 0, "duration": 0.0})
        events, _ = rec.take(wcommon.perf_counter_ns() + 10 ** 9)
        self.assertFalse(json.loads(events)[0]["in_step"])

    def test_candidates_and_duration_where_reported(self):
        # CPython 3.15's info dict: candidates and duration (seconds) on
        # each event; older interpreters: neither, and nothing looked up.
        for extended in (False, True):
            rec = wrecorder.Recorder(4, extended=extended)
            rec.callback("start", {})
            rec.callback("stop", {"generation": 1, "collected": 2, "uncollectable": 0,
                                  "candidates": 321, "duration": 0.0015})
            got = json.loads(rec.take(0)[0])[0]
            if extended:
                self.assertEqual((got["candidates"], got["duration_ns"]), (321, 1500000))
            else:
                self.assertNotIn("candidates", got)
            self.assertEqual(_lookups(rec.callback), (set(), set()))
        if sys.version_info >= (3, 15):
            rec = wrecorder.Recorder(64)
            rec.install()
            try:
                gc.collect(0)
            finally:
                rec.remove()
            got = json.loads(rec.take(0)[0])
            self.assertTrue(got and all(e["candidates"] >= 0 and e["duration_ns"] >= 0 for e in got), got)

    def test_state_slots_are_named(self):
        slots = (wrecorder._USED, wrecorder._LOST, wrecorder._START, wrecorder._IN_SCHEDULED)
        self.assertEqual(sorted(slots), list(range(wrecorder._STATE_SLOTS)))
        rec = wrecorder.Recorder(4)
        self.assertEqual(len(rec.state), wrecorder._STATE_SLOTS)
        rec.callback("start", {})
        start = rec.state[wrecorder._START]
        self.assertGreater(start, 0, "the start of a collection goes into _START")
        rec.state[wrecorder._IN_SCHEDULED] = 1
        rec.callback("stop", {"generation": 2, "collected": 1, "uncollectable": 0, "candidates": 0, "duration": 0.0})
        rec.state[wrecorder._IN_SCHEDULED] = 0
        rec.callback("start", {})
        rec.callback("stop", {"generation": 0, "collected": 0, "uncollectable": 0, "candidates": 0, "duration": 0.0})
        self.assertEqual(rec.state[wrecorder._USED], 2 * rec.FIELDS)
        self.assertEqual(rec.buf[0], start)
        events, _ = rec.take(0)
        self.assertEqual([e["manual"] for e in json.loads(events)], [True, False],
                         "events are manual while _IN_SCHEDULED is set")


def _lookups(fn, first=None, last=None):
    """The names fn's bytecode looks up as globals and as attributes,
    limited to the source lines strictly between the lines that start with
    first and last (stripped) when they are given. By line, not by offset,
    so a compiler that moves blocks around cannot hide one."""
    import dis
    import inspect
    lines, start = inspect.getsourcelines(fn)
    lo, hi = start, start + len(lines)
    if first is not None:
        stripped = [l.strip() for l in lines]
        lo = start + next(k for k, l in enumerate(stripped) if l.startswith(first))
        hi = start + next(k for k, l in enumerate(stripped) if l.startswith(last))
    glob, attr, line = set(), set(), None
    for ins in dis.get_instructions(fn):
        n = getattr(ins, "line_number", None)  # 3.13+
        if n is None and not isinstance(ins.starts_line, bool):
            n = ins.starts_line
        if n is not None:
            line = n
        if line is None or not lo < line < hi:
            continue
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            glob.add(ins.argval)
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"):
            attr.add(ins.argval)
    return glob, attr


class WarmEndTest(unittest.TestCase):
    """warm.end: a warm child leaves without the interpreter's finalisation
    but as an exit would otherwise (atexit, stdio, threads, its code); a
    cold one exits as any program does."""

    def _child(self, started):
        script = textwrap.dedent("""
            import atexit, os, sys, threading, time
            sys.path.insert(0, %r)
            from gcjitter_worker import warm
            warm._STARTED = %r
            class Finalised(object):
                def __del__(self):
                    os.write(1, b"finalised\\n")
            marker = Finalised()
            atexit.register(lambda: os.write(1, b"atexit\\n"))
            threading.Thread(target=lambda: (time.sleep(0.2), os.write(1, b"thread\\n"))).start()
            sys.stdout.write("buffered\\n")
            warm.end(3)
        """) % (BENCH, started)
        p = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE, timeout=60)
        return p.returncode, p.stdout.decode().split()

    def test_warm_child_skips_finalisation_only(self):
        code, out = self._child("warm")
        self.assertEqual(code, 3)
        self.assertEqual(sorted(out), ["atexit", "buffered", "thread"])

    def test_cold_run_exits_as_any_program(self):
        code, out = self._child("cold")
        self.assertEqual(code, 3)
        self.assertIn("finalised", out)
        self.assertEqual(sorted(set(out) - {"finalised"}), ["atexit", "buffered", "thread"])


class HotLoopTest(unittest.TestCase):
    """The hot loop's lookups per step and the callback's per event: a new
    one has to be a decision, not an accident of a refactor."""

    def test_loop_body_looks_up_only_what_it_must(self):
        glob, attr = _lookups(wloop.hot_loop, "for i in range(total):", "wall = perf_counter_ns() - wall0")
        # write_timeline: only with --emu-timeline, after the step's end
        # time, in runs made for a figure and never measured.
        self.assertEqual(glob, {"perf_counter_ns", "gc", "int", "round", "write_timeline"},
                         "globals looked up per step: bind new ones to locals before the loop")
        # append: the planted leak (--leak-kib-per-step), after the step's
        # end time and only when a leak is asked for: a decision, not an
        # accident (its lookup costs nothing timed).
        self.assertEqual(attr, {"freeze", "random", "take", "get_count", "write_line", "append"},
                         "attributes looked up per step: bind new ones to locals before the loop")

    def test_callback_looks_up_nothing(self):
        glob, attr = _lookups(wrecorder.Recorder(1).callback)
        self.assertEqual((glob, attr), (set(), set()),
                         "the gc callback must use locals only (state slots are bound as default arguments)")

    def test_no_recorder_manual_policy(self):
        # --no-recorder: the policy's in-scheduled flag goes into a state
        # array of its own; the loop still collects on schedule.
        args = wcli._parser().parse_args([
            "--model", "none", "--work", "10", "--device", "cpu", "--policy", "manual:3",
            "--steps", "7", "--warmup", "2", "--garbage", "pairs", "--cycles", "5", "--no-recorder"])
        r, w = os.pipe()
        try:
            wloop.run(args, wrecords.Stream(w), None)
        finally:
            os.close(w)
            gc.enable()  # manual disabled automatic collection in this process
        with os.fdopen(r) as f:
            recs = [json.loads(line) for line in f]
        steps = [x for x in recs if x["type"] == "step"]
        self.assertEqual([x["i"] for x in steps if x["sched"]], [2, 5, 8])
        self.assertEqual({json.dumps(x["gc"]) for x in steps}, {"[]"})
        self.assertEqual((recs[0]["recorder"], recs[-1]["type"], recs[-1]["recorded"]), (False, "end", None))
        self.assertEqual(recs[-1]["gc_stats"][2]["collections"], 3)


if __name__ == "__main__":
    unittest.main()
