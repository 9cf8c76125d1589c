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
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        # As site.py says it for a sitecustomize of the job's that fails;
        # the job and the tracer go on.
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))


_run_shadowed()
if os.environ.get("GCJITTER_TRACE_DIR"):
    try:
        import gcjitter_trace
        gcjitter_trace.start()
    except Exception as e:  # the job runs on, untraced; gcjitter says so
        try:
            import json
            path = os.path.join(os.environ["GCJITTER_TRACE_DIR"], "status-%d.json" % os.getpid())
            with open(path, "w") as f:
                json.dump({"pid": os.getpid(), "tracer_error": "%s: %s" % (type(e).__name__, e)}, f)
        except Exception:
            sys.stderr.write("gcjitter trace: the tracer did not start: %r\n" % (e,))
