#!/bin/sh
# stall.sh SHARE MS DIR [PYTHON]: makes DIR/python, an interpreter whose
# training steps stall in SHARE of the steps (0.03: 3%, spread evenly, the
# same steps in every run) by a busy wait of MS milliseconds right after the
# backward pass, as a slow hook or a data loader would make: a tail that is
# not the collector's (issue #43's planted stall). A sitecustomize wraps
# torch.Tensor.backward once torch is imported, so neither the worker nor
# the case changes; the unchanged side of a trial is the same wrapper at
# MS = 0 (its module adds the same few objects to the heap).
set -eu
share=${1:?usage: stall.sh SHARE MS DIR [PYTHON]}
ms=${2:?usage: stall.sh SHARE MS DIR [PYTHON]}
dir=${3:?usage: stall.sh SHARE MS DIR [PYTHON]}
py=${4:-/usr/bin/python3}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cat > "$dir/sitecustomize.py" <<PY
import sys
import time

_SHARE = $share
_NS = int($ms * 1e6)


def _patch(torch):
    backward = torch.Tensor.backward
    calls = [0]

    def stalled(self, *args, **kwargs):
        out = backward(self, *args, **kwargs)
        calls[0] += 1
        n = calls[0]
        # Evenly spread: a stall each time n * SHARE crosses an integer.
        if _NS and int(n * _SHARE) != int((n - 1) * _SHARE):
            until = time.perf_counter_ns() + _NS
            while time.perf_counter_ns() < until:
                pass
        return out

    torch.Tensor.backward = stalled


class _AfterTorch:
    # Patches torch right after its own import runs, without importing it
    # here (the interpreter starts as the worker expects).
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AfterTorch())
PY
cat > "$dir/python" <<SH
#!/bin/sh
PYTHONPATH="$dir\${PYTHONPATH:+:\$PYTHONPATH}" exec "$py" "\$@"
SH
chmod +x "$dir/python"
echo "$dir/python"
