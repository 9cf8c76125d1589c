"""The recorder: gc.callbacks writing into preallocated arrays, so that
recording allocates nothing the collector tracks."""

import array
import gc
import sys

from .common import perf_counter_ns

# The recorder's state: the slots of one array("q") that the gc callback,
# the hot loop and Recorder.take share. An array of integers rather than
# attributes, so the callback only stores integers and allocates nothing.
# The callback binds these as default arguments and the hot loop as locals,
# so neither looks them up in the module's globals per event or per step.
_USED = 0          # slots of Recorder.buf in use: events buffered * FIELDS
_LOST = 1          # events dropped since the last take (the buffer was full)
_START = 2         # perf_counter_ns() at the start of the running collection
_IN_SCHEDULED = 3  # 1 while the policy's own gc.collect runs: events are "manual"
_STATE_SLOTS = 4


class Recorder(object):
    """Collects GC events without allocating tracked objects in the
    callback: the callback only stores integers into one flat preallocated
    array, FIELDS slots per event (fewer lookups than one array per field),
    and into the state array (slots _USED, _LOST, _START, _IN_SCHEDULED)."""

    # start ns, pause ns, generation, collected, uncollectable, manual, and
    # where the interpreter reports them (CPython 3.15's info dict), the
    # collection's candidates and its own duration in ns; -1 where not.
    FIELDS = 8

    def __init__(self, capacity, census=False, extended=None):
        width = self.FIELDS
        limit = capacity * width
        self.cap = capacity
        self.buf = buf = array.array("q", [0]) * limit
        self.state = state = array.array("q", [0]) * _STATE_SLOTS
        # --census: the objects in the generations each collection is
        # about to walk, counted at its start. Counting builds lists, so it
        # allocates in the callback: a census run is never timed, and a
        # list made and freed leaves the collector's counts as they were,
        # so the run has the timed runs' schedule (Go checks it).
        # Made whether or not this run counts: the closure and its cells
        # are tracked objects, and a census run must allocate what a timed
        # run does (only installing the callback differs).
        self.census = census
        objects = array.array("q", [0]) * capacity
        self.objects = objects if census else None
        get_objects = gc.get_objects

        def on_census(phase, info):
            if phase == "start":
                i = state[_USED] // width
                if i < capacity:
                    n = len(get_objects(0))
                    if info["generation"] >= 1:
                        n += len(get_objects(1))
                    if info["generation"] >= 2:
                        n += len(get_objects(2))
                    objects[i] = n

        def on_gc(phase, info, perf_counter_ns=perf_counter_ns, USED=_USED, LOST=_LOST,
                  START=_START, IN_SCHEDULED=_IN_SCHEDULED):
            if phase == "start":
                state[START] = perf_counter_ns()
                return
            end = perf_counter_ns()
            i = state[USED]
            if i < limit:
                start = state[START]
                buf[i] = start
                buf[i + 1] = end - start
                buf[i + 2] = info["generation"]
                buf[i + 3] = info["collected"]
                buf[i + 4] = info["uncollectable"]
                buf[i + 5] = state[IN_SCHEDULED]
                buf[i + 6] = -1
                buf[i + 7] = -1
                state[USED] = i + width
            else:
                state[LOST] += 1

        # CPython 3.15 adds the candidates and the duration (a float of
        # seconds: int() of it makes an int, which the collector does not
        # track). A callback of its own, so older interpreters look up
        # nothing more per event.
        def on_gc_extended(phase, info, perf_counter_ns=perf_counter_ns, USED=_USED, LOST=_LOST,
                           START=_START, IN_SCHEDULED=_IN_SCHEDULED, int=int):
            if phase == "start":
                state[START] = perf_counter_ns()
                return
            end = perf_counter_ns()
            i = state[USED]
            if i < limit:
                start = state[START]
                buf[i] = start
                buf[i + 1] = end - start
                buf[i + 2] = info["generation"]
                buf[i + 3] = info["collected"]
                buf[i + 4] = info["uncollectable"]
                buf[i + 5] = state[IN_SCHEDULED]
                buf[i + 6] = info["candidates"]
                buf[i + 7] = int(info["duration"] * 1e9)
                state[USED] = i + width
            else:
                state[LOST] += 1
        if extended is None:
            extended = sys.version_info >= (3, 15)
        self.callback = on_gc_extended if extended else on_gc
        self.census_callback = on_census
        if not census:
            self.census_callback = None
        self.totals = [0, 0, 0]  # per generation, kept outside the callback

    def install(self):
        if self.census_callback is not None:
            gc.callbacks.append(self.census_callback)
        gc.callbacks.append(self.callback)

    def remove(self):
        for cb in (self.callback, self.census_callback):
            if cb is not None and cb in gc.callbacks:
                gc.callbacks.remove(cb)

    def take(self, t0):
        """Format and clear the buffered events as a JSON array. Events that
        started before t0 (the step's start) happened between steps."""
        state = self.state
        used = state[_USED]
        lost = state[_LOST]
        state[_LOST] = 0
        if used == 0:
            return "[]", lost
        buf, totals, s = self.buf, self.totals, "["
        objects = self.objects
        for i in range(0, used, self.FIELDS):
            if i:
                s += ","
            g = buf[i + 2]
            if 0 <= g < 3:
                totals[g] += 1
            s += '{"gen":%d,"ns":%d,"collected":%d,"uncollectable":%d,"in_step":%s,"manual":%s' % (
                g, buf[i + 1], buf[i + 3], buf[i + 4],
                "true" if buf[i] >= t0 else "false",
                "true" if buf[i + 5] else "false")
            if buf[i + 6] >= 0:
                s += ',"candidates":%d,"duration_ns":%d' % (buf[i + 6], buf[i + 7])
            s += ',"objects":%d}' % objects[i // self.FIELDS] if objects is not None else "}"
        s += "]"
        # Events fired while formatting belong to the next record.
        extra = state[_USED] - used
        if extra:
            buf[0:extra] = buf[used:used + extra]
            if objects is not None:
                n, w = used // self.FIELDS, extra // self.FIELDS
                objects[0:w] = objects[n:n + w]
        state[_USED] = extra
        return s, lost
