"""gcjitter step worker: one training process whose every step and every
garbage collection is recorded.

The worker runs a synthetic training loop (a torch model, or pure Python for
hosts without torch), makes seeded cyclic garbage in plain Python objects each
step, applies one GC policy, and writes a versioned JSON-lines record stream
(meta, step..., end | error) to a channel of its own (--records-fd or
--records), never to stdout/stderr, which belong to the workload.

Constraints that shape this package:
  * standard library plus torch (torch_npu when importable); CPython 3.8-3.15,
    free-threaded builds included, so no syntax newer than 3.8;
  * nothing inside the timed region or the gc callback may allocate objects
    the collector tracks, or the recorder would move the schedule it observes:
    events go into preallocated arrays and step records are formatted by hand;
  * every step record is written with one os.write, so a crash loses nothing
    already measured;
  * one program: gcjitter ships these modules as one zipapp (bench.WorkerSource,
    built in Go from the embedded sources with fixed names, order and times, so
    its bytes and their hash, the worker every run records, depend on the
    sources only); `gcjitter worker -script` prints it, and users run it with
    their own launcher (python w.pyz, torchrun w.pyz). Importing this package
    imports none of its modules: a run imports what __main__ does.

The parts, by job: common (schema, exit statuses, clock), policy, device
(real devices and the emulated one), models, garbage, recorder (the gc
callbacks), records (the stream and the meta record), loop (the run), warm
(the fork server), cli (flags and main).

The Go side (bench/records.go) owns the schema; keep SCHEMA in step with it.
"""
