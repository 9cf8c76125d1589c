"""gcjitter trace's check of -step-fn before the job starts, in a process of
its own (installed as gcjitter_trace_check): what the spec names that the
job's source does not define."""

import os
import sys


def check_step_fn(spec, script):
    """Before the job starts: what -step-fn names that is not there, or "".
    Read from the source, never imported (importing the job's module could
    run the job): module found as the import would find it, the name bound
    at its top level (or in a class there). What the source cannot settle
    (an extension module, a star import) is left to the patch at import."""
    import ast
    import difflib
    mod_name, _, qual = spec.partition(":")
    if not mod_name or not qual:
        return "want module:qualname (e.g. train:train_step)"
    if mod_name == "__main__":
        path = script
    else:
        path, missing = _find_source(mod_name)
        if missing:
            return missing
    if not path or not path.endswith(".py"):
        return ""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return ""  # the job meets it itself
    body, where = tree.body, path
    for k, part in enumerate(qual.split(".")):
        names = {}
        star = _bindings(body, names)
        node = names.get(part)
        if node is None:
            if star or (k == 0 and "__getattr__" in names):
                return ""
            close = difflib.get_close_matches(part, list(names), 3)
            return "%s defines no %s%s" % (where, part, (" (did you mean %s?)" % ", ".join(close)) if close else "")
        if not isinstance(node, ast.ClassDef):
            return ""  # bound by an import or an assignment: left to the patch
        body, where = node.body, "%s: class %s" % (path, node.name)
    return ""


def _bindings(body, names):
    """Names bound in a scope's statements (blocks included, not nested
    functions or classes) into names; whether a star import is among them."""
    import ast
    star = False
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    star = True
                else:
                    names.setdefault(a.asname or a.name.split(".")[0], node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.setdefault(n.id, node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                star = _bindings(inner, names) or star
    return star


def _find_source(mod_name):
    """(source path or None, what is missing or "") for a module, found
    the way the import would find it, without running any of it."""
    import importlib.machinery
    import importlib.util
    parts = mod_name.split(".")
    locations, spec = None, None
    for k in range(len(parts)):
        name = ".".join(parts[:k + 1])
        if k == 0:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
        elif locations is None:
            if name in _imported_names(mod_name, k):
                return None, ""  # made by its parent's import (os.path)
            return None, "%s is a module, not a package: no module %s" % (parts[k - 1], name)
        else:
            spec = importlib.machinery.PathFinder.find_spec(name, list(locations))
        if spec is None:
            return None, "no module named %s" % name
        locations = spec.submodule_search_locations
    return spec.origin, ""


def _imported_names(mod_name, k):
    """Modules that a plain module puts in sys.modules when imported
    (os.path), which the static lookup cannot see: imported here, in the
    check's own process."""
    import importlib
    parent = ".".join(mod_name.split(".")[:k])
    try:
        importlib.import_module(parent)
    except Exception:
        return ()
    return [n for n in sys.modules if n.startswith(parent + ".")]


def _check_main():
    """python -c 'import gcjitter_trace_check; gcjitter_trace_check._check_main()'
    SPEC SCRIPT: prints what is missing, exit 1; exit 0 when nothing is."""
    spec, script = sys.argv[1], sys.argv[2]
    if script:
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    else:
        sys.path.insert(0, os.getcwd())
    missing = check_step_fn(spec, script)
    if missing:
        sys.stdout.write(missing + "\n")
        sys.exit(1)
