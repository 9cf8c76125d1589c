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
    """The fork server gcjitter's runner starts once per case, interpreter
    and environment: it imports torch (with --torch), collects, says
    "ready" on stdout and then reads run requests on stdin; with --root,
    it is a root that forks such servers (_serve_root). A request is one
    run's processes: one for a single-rank run, one per rank for a
    multi-rank one, all forked before any is waited for (their collectives wait on
    each other). Each child reports "started PID I" (I: its place in the
    request), once its process group and its channels are in place, or
    "error I WHY"; the server reports "exit PID STATUS CPU_NS" for each
    (the wait status, and the CPU time of the children reaped and of the
    server since its last report).

    It returns only in a child, with the run's arguments, to main(), which
    then runs as in a cold process: the server's frames are gone, and it
    imports nothing a cold run would import later (json, socket and
    argparse come with the run), so the heap a run starts from, and its
    GC schedule, are a cold run's. A request is "N\n", then N times
    "LEN\n" and LEN bytes: the runner's pid, the fd numbers (in the
    runner) of the process's records, stdout and stderr pipes ("-":
    /dev/null), the number K of environment entries that differ from the
    server's (a rank's RANK, MASTER_PORT, ...), those K entries
    (KEY=VALUE), then the arguments, separated by NUL bytes. The child
    opens the pipes through /proc/PID/fd, so no module beyond os is needed
    to pass them."""
    if "--torch" in argv:
        import torch  # noqa: F401  (what every torch run imports first)
    # torch's import formats its stack (torch.cuda's queued calls), which
    # caches the source of the files on it; this file is on a warm
    # server's stack and on no cold run's, and its two cached objects
    # would be in every child's census.
    linecache = sys.modules.get("linecache")
    if linecache is not None:
        linecache.cache.pop(__file__, None)
    gc.collect()
    # CPU seconds of the server and its reaped children reported so far;
    # a forked server starts owing the root's since its last fork (the
    # import), which a started server's first report includes as its own.
    spent = [0.0]
    if "--root" in argv:
        # Returns in a forked server only, holding nothing of the root's
        # loop: its heap is a server's that imported torch itself.
        spent[0] = -_serve_root()
    # Hold fd 3 (a child's record channel), so the module pipes' ends are
    # above the fds a child takes over.
    hold = os.open(os.devnull, os.O_RDONLY)
    os.write(1, b"ready\n")
    while True:
        reqs = _read_group(0)
        if reqs is None:
            os._exit(0)  # the runner closed the pipe: the session is over
        children = {}  # pid -> the read end of its module pipe
        for i, req in enumerate(reqs):
            mr, mw = os.pipe()
            pid = os.fork()
            if pid == 0:
                for fd in list(children.values()) + [mr, hold]:
                    os.close(fd)
                return _warm_child(req, i, mw)
            os.close(mw)
            try:
                os.setpgid(pid, pid)  # also here, so the group exists before "started"
            except OSError:
                pass  # the child set it, or has already exited
            children[pid] = mr
        _reap(children, spent)


def _serve_root():
    """The root (--root): one process per interpreter and environment that
    imported torch once and forks a case's server on request, so a
    session imports torch once, not once per case (a server is a case's:
    what its runs import becomes its heap). A request is one line, "PID
    IN OUT ERR": the runner's pid and the fds (in the runner) of the new
    server's stdin, stdout and stderr pipes. The child opens them through
    /proc/PID/fd, says "server PID" on the root's stdout (or "error WHY"),
    takes them as fds 0-2 and returns, to serve as a server started by
    the runner would; the root reads the next request. It ends when the
    runner closes its stdin; a server it forked ends when its own stdin
    closes. It returns, in the child, the root's CPU seconds since its last
    fork, for the server's first report: the runner counts CPU nobody
    reports as other load. Its own only: a server it reaps reported its
    CPU and its runs' itself."""
    reported = 0.0
    os.write(1, b"ready\n")
    while True:
        line = _read_line(0)
        if line is None:
            os._exit(0)
        try:  # reap the servers that ended (their runner closed them)
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        t = os.times()
        owed, reported = t.user + t.system - reported, t.user + t.system
        pid = os.fork()
        if pid == 0:
            _take_server_fds(line)
            return owed
        try:
            os.setpgid(pid, pid)  # also here, so the group exists before "server"
        except OSError:
            pass


def _take_server_fds(line):
    """In a server forked by the root: its own process group and the
    runner's pipes as fds 0-2."""
    try:
        os.setpgid(0, 0)
        runner, fds = line.split()[0], line.split()[1:4]
        modes = (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY)
        opened = [os.open(b"/proc/%s/fd/%s" % (runner, n), m) for n, m in zip(fds, modes)]
        os.write(1, b"server %d\n" % os.getpid())
        for target, fd in enumerate(opened):
            os.dup2(fd, target)
            os.close(fd)
    except BaseException as e:
        try:
            os.write(1, ("error %s: %s\n" % (type(e).__name__, e)).encode("utf-8", "replace"))
        finally:
            os._exit(127)


def _reap(children, spent):
    """Waits for a request's children, reporting each exit as it comes;
    the last is reported after the preload, so the runner's next run
    never meets it."""
    modules = []
    while children:
        # waitpid, not wait4: wait4 imports the resource module into this
        # server, and every later child would start with its 35 objects,
        # which a cold run's heap does not hold at the reset (the census
        # differed by 35 objects per full collection).
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if pid not in children:
            continue
        modules.append(_read_modules(children.pop(pid)))
        if not children:
            _preload(modules)
        # The child's CPU time, which this server reaped (os.times counts
        # reaped children), and the server's own since its last report
        # (its import, the preload): the runner's rusage sees neither, and
        # would count them as other load.
        t = os.times()
        total = t.user + t.system + t.children_user + t.children_system
        cpu_ns = int((total - spent[0]) * 1e9)
        spent[0] = total
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


def _read_modules(fd):
    """What a child wrote on its module pipe (it has ended), as names."""
    data = b""
    while True:
        c = os.read(fd, 1 << 16)
        if not c:
            break
        data += c
    os.close(fd)
    return data.decode("utf-8", "replace").split("\n")


def _preload(reported):
    """In the server, after a request's children ended: import what they
    had imported before their collector's reset (torch 2's optimizers
    import torch._dynamo and some 900 modules lazily: 0.8 s a run). Only
    those: a module a cold run imports after the reset must stay
    unimported, or the run's schedule would move. Then collect, as after
    torch."""
    new = []
    for names in reported:
        new += [n for n in names if n and n not in sys.modules and not n.startswith("__")]
    for name in new:
        try:
            __import__(name)
        except BaseException:
            pass  # what a run could import, the server need not
    if new:
        gc.collect()


def _read_group(fd):
    """A request's processes, each a list of fields; None at the end of
    the requests."""
    n = _read_head(fd)
    if n is None:
        return None
    reqs = []
    for _ in range(n):
        req = _read_request(fd)
        if req is None:
            return None
        reqs.append(req)
    return reqs


def _read_head(fd):
    head = _read_line(fd)
    return None if head is None else int(head)


def _read_line(fd):
    """One line, without its newline; None at the end of the requests."""
    line = b""
    while not line.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            return None
        line += c
    return line[:-1]


def _read_request(fd):
    n = _read_head(fd)
    if n is None:
        return None
    body = b""
    while len(body) < n:
        c = os.read(fd, n - len(body))
        if not c:
            return None
        body += c
    return body.decode("utf-8", "surrogateescape").split("\0")


def _warm_child(req, index, modules_fd):
    """In the forked child: its own process group, the run's channels on
    fds 0-3 as a cold run has them, its own environment entries (a rank's),
    then the run's arguments."""
    global _STARTED, _MODULES_FD, _MODULES_AT_FORK
    try:
        os.setpgid(0, 0)
        runner, fds = req[0], req[1:4]
        k = int(req[4])
        env, args = req[5:5 + k], req[5 + k:]
        opened = [os.open(os.devnull, os.O_RDONLY)]
        for n in (fds[1], fds[2], fds[0]):  # stdout, stderr, records
            path = os.devnull if n == "-" else "/proc/%s/fd/%s" % (runner, n)
            opened.append(os.open(path, os.O_WRONLY))
        # Before the run reads them (torch.distributed's env:// rendezvous,
        # the per-rank seed): bytes and str only, nothing the collector
        # tracks, so the heap is a cold rank's.
        for kv in env:
            key, _, value = kv.partition("=")
            os.environ[key] = value
        os.write(1, b"started %d %d\n" % (os.getpid(), index))
        for target, fd in enumerate(opened):
            if fd != target:
                os.dup2(fd, target)
                os.close(fd)
    except BaseException as e:
        try:
            os.write(1, ("error %d %s: %s\n" % (index, type(e).__name__, e)).encode("utf-8", "replace"))
        finally:
            os._exit(127)
    _STARTED, _MODULES_FD, _MODULES_AT_FORK = "warm", modules_fd, len(sys.modules)
    sys.argv[1:] = args
    # CPython 3.12+ warns the server when it forks beside threads (BLAS's):
    # the registry the warning left in this module is no cold run's.
    globals().pop("__warningregistry__", None)
    return args
