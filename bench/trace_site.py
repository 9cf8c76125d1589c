"""sitecustomize for gcjitter trace: runs the user's own sitecustomize (this
one shadows it on PYTHONPATH), then starts the tracer."""

import os
import sys


def _run_shadowed():
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_run_shadowed()
if os.environ.get("GCJITTER_TRACE_DIR"):
    try:
        import gcjitter_trace
        gcjitter_trace.start()
    except Exception as e:  # the job runs on, untraced, and says so
        sys.stderr.write("gcjitter trace: the tracer did not start: %r\n" % (e,))
