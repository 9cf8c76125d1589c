#!/bin/sh
# slower-collector.sh FRACTION DIR [PYTHON]: makes DIR/python, an
# interpreter whose full (generation 2) collections each take FRACTION
# longer: a sitecustomize on its PYTHONPATH busy-waits, after every full
# collection, FRACTION of the time the collection took. Its callback is
# installed before the worker's recorder, so the recorder's pause includes
# the wait: what an upgrade that made the collector slower would look like,
# with the same interpreter, the same GC schedule and the same heap (the
# environment key does not change). The known truth of the gate's
# slower-collector trials (docs/gate.md, "A slower collector").
set -eu
f=${1:?usage: slower-collector.sh FRACTION DIR [PYTHON]}
dir=${2:?usage: slower-collector.sh FRACTION DIR [PYTHON]}
py=${3:-/usr/bin/python3}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cat > "$dir/sitecustomize.py" <<PY
import gc
import time

_FRACTION = $f
_started = [0]


def _slower(phase, info, clock=time.perf_counter_ns, started=_started):
    # Integers only: nothing tracked is allocated inside a collection.
    if info["generation"] != 2:
        return
    if phase == "start":
        started[0] = clock()
        return
    until = clock() + int((clock() - started[0]) * _FRACTION)
    while clock() < until:
        pass


gc.callbacks.append(_slower)
PY
cat > "$dir/python" <<SH
#!/bin/sh
PYTHONPATH="$dir\${PYTHONPATH:+:\$PYTHONPATH}" exec "$py" "\$@"
SH
chmod +x "$dir/python"
echo "$dir/python"
