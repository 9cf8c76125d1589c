"""The warm server (docs/worker.md, "Warm starts"): one process that
imported torch once forks a child per run."""

import gc
import os
import sys


# How this process started: "cold" (its own interpreter), or "warm" (forked
# by serve_warm from a server that imported torch once). The meta record
# says which.
_STARTED = "cold"
# In a warm child, where to report the modules imported before the
# collector's reset, for the server to import before the next fork (-1:
# nowhere).
_MODULES_FD = -1
_MODULES_AT_FORK = 0


# --------------------------------------------------------------------------
# The warm server (docs/worker.md, "Warm starts")


def serve_warm(argv):
    """The fork server gcjitter's runner starts once per interpreter and
    environment: it imports torch (with --torch), collects, says "ready" on
    stdout and then reads run requests on stdin, forking one child per run
    and reporting "started PID" (from the child, once its process group and
    its channels are in place) and "exit PID STATUS CPU_NS" (the wait
    status, and the CPU time of the child and of the server since its last
    report).

    It returns only in a child, with the run's arguments, to main(), which
    then runs as in a cold process: the server's frames are gone, and it
    imports nothing a cold run would import later (json, socket and
    argparse come with the run), so the heap a run starts from, and its
    GC schedule, are a cold run's. A request is "LEN\n" then LEN bytes:
    the runner's pid, the fd numbers (in the runner) of the run's records,
    stdout and stderr pipes ("-": /dev/null), then the run's arguments,
    separated by NUL bytes. The child opens the pipes through
    /proc/PID/fd, so no module beyond os is needed to pass them."""
    if argv[:1] == ["--torch"]:
        import torch  # noqa: F401  (what every torch run imports first)
    # torch's import formats its stack (torch.cuda's queued calls), which
    # caches the source of the files on it; this file is on a warm
    # server's stack and on no cold run's, and its two cached objects
    # would be in every child's census.
    linecache = sys.modules.get("linecache")
    if linecache is not None:
        linecache.cache.pop(__file__, None)
    gc.collect()
    # Hold fd 3 (a child's record channel), so the module pipe's ends are
    # above the fds a child takes over.
    hold = os.open(os.devnull, os.O_RDONLY)
    spent = 0.0  # CPU seconds of the server and its reaped children reported so far
    os.write(1, b"ready\n")
    while True:
        req = _read_request(0)
        if req is None:
            os._exit(0)  # the runner closed the pipe: the session is over
        mr, mw = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(mr)
            os.close(hold)
            return _warm_child(req, mw)
        os.close(mw)
        try:
            os.setpgid(pid, pid)  # also here, so the group exists before "started"
        except OSError:
            pass  # the child set it, or has already exited
        # waitpid, not wait4: wait4 imports the resource module into this
        # server, and every later child would start with its 35 objects,
        # which a cold run's heap does not hold at the reset (the census
        # differed by 35 objects per full collection).
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        _preload(mr)
        # The child's CPU time, which this server reaped (os.times counts
        # reaped children), and the server's own since its last report
        # (its import, the preload): the runner's rusage sees neither, and
        # would count them as other load.
        t = os.times()
        total = t.user + t.system + t.children_user + t.children_system
        cpu_ns = int((total - spent) * 1e9)
        spent = total
        os.write(1, b"exit %d %d %d\n" % (pid, status, cpu_ns))


def end(code):
    """How a run's process ends. A cold one exits as any program does. A
    warm child joins its threads, runs its atexit handlers and flushes
    stdio as an exit would, then leaves without the interpreter's
    finalisation: freeing the inherited heap module by module took 0.7 s
    a run on torch 2.15 after the run's last record (BENCHMARKS.md,
    "Warm against cold starts"), which a cold run pays too but no record
    measures."""
    if _STARTED != "warm":
        sys.exit(code)
    try:
        threading = sys.modules.get("threading")
        if threading is not None and hasattr(threading, "_shutdown"):
            threading._shutdown()
        import atexit
        atexit._run_exitfuncs()
        for f in (sys.stdout, sys.stderr):
            if f is not None:
                f.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def _report_modules():
    """In a warm child, before the collector's reset: the modules imported
    so far, for the server (_preload)."""
    global _MODULES_FD
    fd, _MODULES_FD = _MODULES_FD, -1
    try:
        # The server reads once the child has ended: what does not fit in
        # the pipe is left out rather than waited for. sys.modules keeps
        # the order of import, so the server's come first.
        os.set_blocking(fd, False)
        data = "\n".join(list(sys.modules)[_MODULES_AT_FORK:]).encode("utf-8", "replace")
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass
    os.close(fd)


def _preload(fd):
    """In the server, after a child ended: import what the child had
    imported before its collector's reset (torch 2's optimizers import
    torch._dynamo and some 900 modules lazily: 0.8 s a run). Only those:
    a module a cold run imports after the reset must stay unimported, or
    the run's schedule would move. Then collect, as after torch."""
    data = b""
    while True:
        c = os.read(fd, 1 << 16)
        if not c:
            break
        data += c
    os.close(fd)
    new = [n for n in data.decode("utf-8", "replace").split("\n")
           if n and n not in sys.modules and not n.startswith("__")]
    for name in new:
        try:
            __import__(name)
        except BaseException:
            pass  # what a run could import, the server need not
    if new:
        gc.collect()


def _read_request(fd):
    head = b""
    while not head.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            return None
        head += c
    n = int(head)
    body = b""
    while len(body) < n:
        c = os.read(fd, n - len(body))
        if not c:
            return None
        body += c
    return body.decode("utf-8", "surrogateescape").split("\0")


def _warm_child(req, modules_fd):
    """In the forked child: its own process group, the run's channels on
    fds 0-3 as a cold run has them, then the run's arguments."""
    global _STARTED, _MODULES_FD, _MODULES_AT_FORK
    try:
        os.setpgid(0, 0)
        runner, fds, args = req[0], req[1:4], req[4:]
        opened = [os.open(os.devnull, os.O_RDONLY)]
        for n in (fds[1], fds[2], fds[0]):  # stdout, stderr, records
            path = os.devnull if n == "-" else "/proc/%s/fd/%s" % (runner, n)
            opened.append(os.open(path, os.O_WRONLY))
        os.write(1, b"started %d\n" % os.getpid())
        for target, fd in enumerate(opened):
            if fd != target:
                os.dup2(fd, target)
                os.close(fd)
    except BaseException as e:
        try:
            os.write(1, ("error %s: %s\n" % (type(e).__name__, e)).encode("utf-8", "replace"))
        finally:
            os._exit(127)
    _STARTED, _MODULES_FD, _MODULES_AT_FORK = "warm", modules_fd, len(sys.modules)
    sys.argv[1:] = args
    # CPython 3.12+ warns the server when it forks beside threads (BLAS's):
    # the registry the warning left in this module is no cold run's.
    globals().pop("__warningregistry__", None)
    return args
