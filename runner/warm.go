package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Warm starts runs as children forked from a warm server: a worker process
// that imported torch once (the worker's serve_warm, bench/gcjitter_worker/warm.py; docs/worker.md,
// "Warm starts"). A server serves the runs of one case (Worker.WarmScope),
// interpreter, script and environment but for PYTHONHASHSEED and a rank's
// own entries (ownEnv):
// the hash secret is fixed when an
// interpreter starts, so every run it serves has the hash seed of the
// run that started it (the meta record's hash_seed says which), where
// cold runs have one per round. It keeps at most MaxWarmServers servers,
// the least recently used going first: two let an A/B of two
// interpreters alternate without a start per run, and an idle server is
// memory a measured run could want.
//
// A server that cannot start (torch does not import, no /proc) is not
// retried: its runs start cold, which reports what is wrong as a cold run
// would. The zero value is not usable; make one with NewWarm and Close it.
type Warm struct {
	mu   sync.Mutex
	held []*warmServer // least recently used first
	// failed holds why each key's server could not start; told, the keys
	// whose reason the log has had (a prestart's failure is told when a
	// run first meets it, not beside a preflight that fails anyway).
	failed map[string]string
	told   map[string]bool
	log    io.Writer
	// roots are the processes that imported torch and fork the servers
	// (fromRoot), least recently used first.
	roots []*warmServer
	// noRoot holds the root keys whose root could not fork a server:
	// their servers start on their own.
	noRoot map[string]bool
	// started counts the servers started, rootsStarted the roots (tests).
	started, rootsStarted int
}

// NewWarm is an empty pool; log gets one line per server that could not
// start (nil: none).
func NewWarm(log io.Writer) *Warm {
	return &Warm{failed: map[string]string{}, told: map[string]bool{}, noRoot: map[string]bool{}, log: log}
}

// WarmSupported says whether this platform can start warm runs: the
// server's children open the runner's pipes through /proc/PID/fd.
func WarmSupported() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d/fd", os.Getpid()))
	return err == nil
}

// Close stops the server, if one is running.
func (p *Warm) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.held {
		s.close()
	}
	for _, r := range p.roots {
		r.close()
	}
	p.held, p.roots = nil, nil
}

// MaxWarmServers is how many servers a pool keeps.
const MaxWarmServers = 2

// drop closes s after it failed to start a run, so the next run asks for
// a new one.
func (p *Warm) drop(s *warmServer, why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != nil {
		fmt.Fprintf(p.log, "gcjitter: %v; the run starts cold\n", why)
	}
	s.close()
	p.held = slices.DeleteFunc(p.held, func(x *warmServer) bool { return x == s })
}

// warmServer is one server process and the lines it writes.
type warmServer struct {
	key  string
	busy sync.Mutex    // one run at a time: the server waits for each child
	pid  int           // its process group's too
	in   *os.File      // requests
	msgs chan string   // its stdout, line by line; closed when it ends
	tail *tailWriter   // its stderr
	done chan struct{} // closed once it has been waited for
	gone chan struct{} // closed when msgs is
	err  error         // why it ended, after done
	once sync.Once
}

// server is the running server for key, started with env when there is
// none; nil (and no error) when warm starts are unavailable for key, so
// the run starts cold. The error is ctx's. forRun says a run asks (not a
// prestart): it tells the log why the server could not start.
func (p *Warm) server(ctx context.Context, key, python, script string, torch bool, env []string, startup time.Duration, forRun bool) (*warmServer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err() // ended while another start held the pool
	}
	defer func() {
		if why, ok := p.failed[key]; ok && forRun && !p.told[key] {
			p.told[key] = true
			if p.log != nil {
				fmt.Fprintf(p.log, "gcjitter: warm start unavailable (%s); these runs start cold\n", why)
			}
		}
	}()
	if _, ok := p.failed[key]; ok {
		return nil, nil
	}
	for i, s := range p.held {
		if s.key != key {
			continue
		}
		p.held = slices.Delete(p.held, i, i+1)
		if s.alive() {
			p.held = append(p.held, s)
			return s, nil
		}
		s.close()
		break
	}
	for len(p.held) >= MaxWarmServers {
		p.held[0].close()
		p.held = p.held[1:]
	}
	var s *warmServer
	var err error
	if torch {
		s, err = p.fromRoot(ctx, key, python, script, env, startup)
	} else {
		s, err = startServer(ctx, key, python, serverArgs(script, false, false), env, startup)
	}
	if ctx.Err() != nil {
		if s != nil {
			s.close() // ready as the context ended: held by no one
		}
		return nil, ctx.Err()
	}
	if err != nil {
		p.failed[key] = err.Error()
		return nil, nil
	}
	p.held, p.started = append(p.held, s), p.started+1
	return s, nil
}

func startServer(ctx context.Context, key, python string, args []string, env []string, startup time.Duration) (*warmServer, error) {
	cmd := exec.Command(python, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	tail := &tailWriter{max: 4 << 10}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, tail
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", python, err)
	}
	s := newWarmServer(key, cmd.Process.Pid, inW, outR, tail, cmd.Wait)
	return s, s.waitReady(ctx, startup)
}

// newWarmServer reads the lines of a server started as pid, whose
// requests go to in and whose stdout is out; wait is what ends with it
// (its exec.Cmd's Wait, or its stderr's copy).
func newWarmServer(key string, pid int, in, out *os.File, tail *tailWriter, wait func() error) *warmServer {
	s := &warmServer{key: key, pid: pid, in: in, msgs: make(chan string, 4), tail: tail,
		done: make(chan struct{}), gone: make(chan struct{})}
	go func() {
		defer close(s.gone)
		defer close(s.msgs)
		defer out.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.msgs <- sc.Text()
		}
	}()
	go func() {
		<-s.gone
		s.err = wait()
		close(s.done)
	}()
	return s
}

// waitReady waits for the server's "ready"; a server that says anything
// else, or nothing within startup, is closed.
func (s *warmServer) waitReady(ctx context.Context, startup time.Duration) error {
	var timeout <-chan time.Time
	if startup > 0 {
		t := time.NewTimer(startup)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case line, ok := <-s.msgs:
		if ok && line == "ready" {
			return nil
		}
		s.close()
		return fmt.Errorf("the server said %q, then: %s", line, LastLines(s.tail.String(), 3))
	case <-timeout:
		s.close()
		return fmt.Errorf("the server was not ready within %v", startup)
	case <-ctx.Done():
		s.close()
		return ctx.Err()
	}
}

// serverArgs are a server's arguments; a root forks the servers of a
// session's cases (fromRoot).
func serverArgs(script string, torch, root bool) []string {
	args := []string{script, "--warm-server"}
	if torch {
		args = append(args, "--torch")
	}
	if root {
		args = append(args, "--root")
	}
	return args
}

// fromRoot is key's server forked from the root of its interpreter and
// environment, which is started when there is none: a session imports
// torch once, not once per case (4.5 s for torch 2.15 here, 14-19 s on
// a GPU host). A root that cannot fork one is closed and the server
// starts on its own; one that cannot start is why key's cannot. The
// caller holds p.mu.
func (p *Warm) fromRoot(ctx context.Context, key, python, script string, env []string, startup time.Duration) (*warmServer, error) {
	rootKey := warmKey(python, script, true, "\x00root", env)
	if p.noRoot[rootKey] {
		return startServer(ctx, key, python, serverArgs(script, true, false), env, startup)
	}
	var root *warmServer
	for i, r := range p.roots {
		if r.key == rootKey {
			p.roots = slices.Delete(p.roots, i, i+1)
			if r.alive() {
				root = r
			} else {
				r.close()
			}
			break
		}
	}
	if root == nil {
		for len(p.roots) >= MaxWarmServers {
			p.roots[0].close()
			p.roots = p.roots[1:]
		}
		r, err := startServer(ctx, rootKey, python, serverArgs(script, true, true), env, startup)
		if err != nil {
			return nil, err
		}
		root, p.rootsStarted = r, p.rootsStarted+1
	}
	s, err := root.fork(ctx, key, startup)
	if err != nil {
		// Whatever it was doing, its next reply could be this one's. One
		// that could not fork will not for the next case.
		root.close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.noRoot[rootKey] = true
		return startServer(ctx, key, python, serverArgs(script, true, false), env, startup)
	}
	p.roots = append(p.roots, root)
	return s, nil
}

// zombieStatus is how a server forked by a root ended, as exec.Cmd's
// Wait says it of a server started here ("signal: killed" tells an OOM
// kill): the root reaps its servers only at its next request, so the
// ended one is still in /proc, whose stat holds its wait status (the 52nd
// field); nil when it cannot be read. Its pipes close once its last
// thread has dropped its files, with the status already set, but it reads
// Z only after every thread has exited: a moment later under load, when
// the status is read anyway.
func zombieStatus(pid int) error {
	deadline := time.Now().Add(zombieWait)
	for {
		f := procStat(pid)
		if len(f) < 50 {
			return nil
		}
		code, err := strconv.Atoi(f[49])
		if err != nil {
			return nil
		}
		if f[0] == "Z" || code != 0 || time.Now().After(deadline) {
			ws := syscall.WaitStatus(code)
			switch {
			case ws.Signaled():
				return fmt.Errorf("signal: %v", ws.Signal())
			case ws.ExitStatus() != 0:
				return fmt.Errorf("exit status %d", ws.ExitStatus())
			}
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombieWait bounds the wait for an ended server to read Z.
const zombieWait = time.Second

// fork asks the root for a server: it forks one that opens the pipes
// made here through /proc and says "server PID" on the root's stdout
// (bench/gcjitter_worker/warm.py's _serve_root).
func (root *warmServer) fork(ctx context.Context, key string, startup time.Duration) (*warmServer, error) {
	var ends []*os.File // the server's ends, closed here once it has them
	defer func() {
		if ends != nil {
			// Failed: the root first, so no child of it opens these fds'
			// numbers once they are reused.
			root.close()
		}
		for _, f := range ends {
			f.Close()
		}
	}()
	var pipes [3][2]*os.File // stdin, stdout, stderr: read and write ends
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				p[0].Close()
				p[1].Close()
			}
			return nil, err
		}
		pipes[i] = [2]*os.File{r, w}
	}
	inR, inW, outR, outW, errR, errW := pipes[0][0], pipes[0][1], pipes[1][0], pipes[1][1], pipes[2][0], pipes[2][1]
	ends = []*os.File{inR, outW, errW}
	closeOurs := func() { inW.Close(); outR.Close(); errR.Close() }
	if _, err := fmt.Fprintf(root.in, "%d %d %d %d\n", os.Getpid(), inR.Fd(), outW.Fd(), errW.Fd()); err != nil {
		closeOurs()
		return nil, fmt.Errorf("warm root: %w", err)
	}
	var timeout <-chan time.Time
	if startup > 0 {
		t := time.NewTimer(startup)
		defer t.Stop()
		timeout = t.C
	}
	var pid int
	select {
	case line, ok := <-root.msgs:
		if !ok {
			closeOurs()
			return nil, root.lost()
		}
		if _, err := fmt.Sscanf(line, "server %d", &pid); err != nil || pid <= 0 {
			closeOurs()
			return nil, fmt.Errorf("warm root: %s", strings.TrimPrefix(line, "error "))
		}
	case <-timeout:
		closeOurs()
		return nil, fmt.Errorf("the warm root forked no server within %v", startup)
	case <-ctx.Done():
		closeOurs()
		return nil, ctx.Err()
	}
	tail := &tailWriter{max: 4 << 10}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer errR.Close()
		io.Copy(tail, errR)
	}()
	s := newWarmServer(key, pid, inW, outR, tail, func() error { <-copied; return zombieStatus(pid) })
	// It holds its ends now: the pipes end with it.
	for _, f := range ends {
		f.Close()
	}
	ends = nil
	return s, s.waitReady(ctx, startup)
}

func (s *warmServer) alive() bool {
	select {
	case <-s.gone:
		return false
	default:
		return true
	}
}

// close ends the server: its children are runs, each in a group of its
// own that the run's supervision ends.
func (s *warmServer) close() {
	s.once.Do(func() {
		s.in.Close()
		syscall.Kill(-s.pid, syscall.SIGKILL)
		<-s.done
	})
}

// warmRun is a process started by a server: what Worker.Run needs of
// one.
type warmRun struct {
	pid    int
	server *warmServer
	exit   chan string // its "exit" line; closed unread when the server ended
	// cpu is the process's CPU time, which its server reaped (set by
	// wait): gcjitter's own rusage cannot see it.
	cpu time.Duration
}

// warmProc is one process of a request: a single-rank run's, or one
// rank's of a multi-rank run.
type warmProc struct {
	records, stdout, stderr *os.File // write ends; stdout nil: /dev/null
	env                     []string // KEY=VALUE entries the server's environment lacks or differs in
	args                    []string
}

// start asks s for procs, forked together (a multi-rank run's ranks wait
// on each other's collectives, so none may wait for another's start). It
// returns once every child has its process group and its channels, so
// the caller can close its copies of the write ends; when one cannot, the
// others are killed and reaped and none is returned.
func (s *warmServer) start(procs []warmProc) ([]*warmRun, error) {
	s.busy.Lock()
	fd := func(f *os.File) string {
		if f == nil {
			return "-"
		}
		return strconv.Itoa(int(f.Fd()))
	}
	var req strings.Builder
	fmt.Fprintf(&req, "%d\n", len(procs))
	for _, p := range procs {
		fields := append([]string{strconv.Itoa(os.Getpid()), fd(p.records), fd(p.stdout), fd(p.stderr), strconv.Itoa(len(p.env))}, p.env...)
		body := strings.Join(append(fields, p.args...), "\x00")
		fmt.Fprintf(&req, "%d\n%s", len(body), body)
	}
	if _, err := io.WriteString(s.in, req.String()); err != nil {
		s.busy.Unlock()
		return nil, fmt.Errorf("warm server: %w", err)
	}
	runs := make([]*warmRun, len(procs))
	answered := make([]bool, len(procs))
	var started []int  // every pid a child reported, for the kill on failure
	var exits []string // exits read while children were still starting
	errored := 0       // children that said "error" and whose exit is not read yet
	var err error
	kill := func() {
		for _, pid := range started {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	for left := len(procs); left > 0; {
		line, ok := <-s.msgs
		if !ok {
			kill()
			s.busy.Unlock()
			return nil, s.lost()
		}
		var pid, i int
		switch {
		case strings.HasPrefix(line, "exit "):
			exits = append(exits, line)
			if _, e := fmt.Sscanf(line, "exit %d", &pid); e != nil || slices.Contains(started, pid) {
				break
			}
			if errored > 0 {
				errored-- // a child that said "error" (before it exited)
				break
			}
			// A child that ended before it could say anything (killed
			// between the fork and its reply): it will never answer.
			err = fmt.Errorf("warm start failed: a child (pid %d) ended before it started", pid)
			left--
		case strings.HasPrefix(line, "started "):
			if _, e := fmt.Sscanf(line, "started %d %d", &pid, &i); e != nil || pid <= 0 || i < 0 || i >= len(procs) || answered[i] {
				err = fmt.Errorf("warm server: bad reply %q", line)
				if pid > 0 {
					started = append(started, pid)
				}
				continue
			}
			started = append(started, pid)
			runs[i], answered[i] = &warmRun{pid: pid, server: s, exit: make(chan string, 1)}, true
			left--
		default:
			// The child could not take its channels; the server reports
			// its exit with the others'.
			err = fmt.Errorf("warm start failed: %s", strings.TrimPrefix(line, "error "))
			errored++
			if _, e := fmt.Sscanf(line, "error %d", &i); e == nil && i >= 0 && i < len(procs) && !answered[i] {
				answered[i] = true
				left--
			}
		}
	}
	if err != nil {
		// Nothing measured has begun: stop the children that started and
		// let the server report every exit before it serves again.
		kill()
		for n := len(exits); n < len(procs); {
			line, ok := <-s.msgs
			if !ok {
				break
			}
			if strings.HasPrefix(line, "exit ") {
				n++
			}
		}
		s.busy.Unlock()
		return nil, err
	}
	go s.deliver(runs, exits)
	return runs, nil
}

// deliver hands each child's "exit" line to its run, exits being the
// ones read before all had started, and frees the server for the next
// request once all are in. A server that ends first closes the runs'
// channels: their exits are lost.
func (s *warmServer) deliver(runs []*warmRun, exits []string) {
	defer s.busy.Unlock()
	byPID := make(map[int]*warmRun, len(runs))
	for _, r := range runs {
		byPID[r.pid] = r
	}
	for len(byPID) > 0 {
		var line string
		if len(exits) > 0 {
			line, exits = exits[0], exits[1:]
		} else if l, ok := <-s.msgs; ok {
			line = l
		} else {
			for _, r := range byPID {
				close(r.exit)
			}
			return
		}
		var pid int
		if _, err := fmt.Sscanf(line, "exit %d", &pid); err != nil || byPID[pid] == nil {
			continue // not one of ours: nothing waits for it
		}
		byPID[pid].exit <- line
		delete(byPID, pid)
	}
}

// wait is the run's exit code, or the signal that killed it; the error
// is a server that ended before it reported the exit.
func (r *warmRun) wait() (int, string, error) {
	var line string
	var ok bool
	select {
	case line, ok = <-r.exit:
	case <-time.After(warmExitWait):
		// Its records ended, so the run has; a server that cannot say so
		// (stuck in its preload, or reading a module pipe a grandchild
		// holds) would hold the session forever. Stopped, it is lost.
		r.server.close()
		return 0, "", &LostServerError{Why: fmt.Sprintf("did not report the run's exit within %s of its end, and was stopped", warmExitWait)}
	}
	if !ok {
		return 0, "", r.server.lost()
	}
	var p, status int
	var cpuNS int64
	if _, err := fmt.Sscanf(line, "exit %d %d %d", &p, &status, &cpuNS); err != nil || p != r.pid {
		return 0, "", fmt.Errorf("warm server: bad reply %q", line)
	}
	r.cpu = time.Duration(cpuNS)
	ws := syscall.WaitStatus(status)
	if ws.Signaled() {
		return -1, signalName(ws.Signal()), nil
	}
	return ws.ExitStatus(), "", nil
}

// warmExitWait bounds the wait for a server's report of a run's exit once
// the run's records have ended: the server reaps it, reads what it
// imported and imports that (torch 2's preload, seconds on a slow host)
// before it reports the last exit of a request.
var warmExitWait = 2 * time.Minute

// LostServerError is a warm server that ended while it held a run: the
// run's exit status is unknown, so the run failed, not the session.
type LostServerError struct{ Why string }

func (e *LostServerError) Error() string { return "its warm server " + e.Why }

// lost is the error of a server that ended while a run was asked of it.
func (s *warmServer) lost() error {
	<-s.done
	why := "exited"
	if s.err != nil {
		why = s.err.Error()
	}
	if t := LastLines(s.tail.String(), 3); t != "" {
		why += ": " + t
	}
	return &LostServerError{why}
}

// warmKey names the server a run can use: its scope (Worker.WarmScope)
// and all but the hash seed and the entries a process brings itself
// (ownEnv).
func warmKey(python, script string, torch bool, scope string, env []string) string {
	key := []string{python, script, strconv.FormatBool(torch), scope}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PYTHONHASHSEED=") {
			key = append(key, kv)
		}
	}
	return strings.Join(key, "\x00")
}

// ownEnv splits env into what a server is started with and what each of
// its children sets for itself: the rank entries (GroupEnv's), which
// differ between the ranks of one run and the rendezvous port between
// runs, so that every rank of every run of a multi-rank case forks from
// one server. The key keeps the world size: a rank imports
// torch.distributed before its collector's reset, which its server then
// preloads (_preload), and a single-rank run's server must not hold it.
func ownEnv(env []string) (server, own []string, key []string) {
	rankKeys := GroupEnv(0, 1, 0)
	key = []string{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := rankKeys[k]; !ok {
			server = append(server, kv)
			continue
		}
		own = append(own, kv)
		if k == "WORLD_SIZE" {
			key = append(key, kv)
		}
	}
	return server, own, append(key, server...)
}

// startOne starts one process from p's server for key; nil (no error)
// when the pool cannot serve it, so it starts cold. The error is ctx's.
func (p *Warm) startOne(ctx context.Context, key string, how serverSpec, proc warmProc) (*warmRun, error) {
	s, err := p.server(ctx, key, how.python, how.script, how.torch, how.env, how.startup, true)
	if s == nil || err != nil {
		return nil, err
	}
	runs, err := s.start([]warmProc{proc})
	if err != nil {
		// Nothing of the run has started: it starts cold, and the next
		// asks for a new server.
		p.drop(s, err)
		return nil, nil
	}
	return runs[0], nil
}

// serverSpec is how to start a server.
type serverSpec struct {
	python, script string
	torch          bool
	env            []string
	startup        time.Duration
}

// WarmGroup starts the ranks of one multi-rank run together, from one
// server: each rank's Worker joins it, and the last to join asks the
// server for all of them. Either every rank starts warm or every rank
// starts cold. Make one per run with NewWarmGroup.
type WarmGroup struct {
	n        int
	mu       sync.Mutex
	keys     []string
	procs    []warmProc
	spec     serverSpec
	starting bool // all joined: they wait for ready, whatever their context
	gaveUp   bool // one left before all had joined: the group starts cold
	ready    chan struct{}
	runs     []*warmRun
	err      error
}

// NewWarmGroup is a group for a run of ranks processes.
func NewWarmGroup(ranks int) *WarmGroup {
	return &WarmGroup{n: ranks, ready: make(chan struct{})}
}

// join adds proc and waits for the others; it returns proc's run, or
// nil (no error) when the group starts cold. The error is ctx's, when
// it ended before every rank had joined.
func (g *WarmGroup) join(ctx context.Context, pool *Warm, key string, spec serverSpec, proc warmProc) (*warmRun, error) {
	g.mu.Lock()
	if g.gaveUp {
		g.mu.Unlock()
		return nil, g.err
	}
	slot := len(g.procs)
	g.keys, g.procs = append(g.keys, key), append(g.procs, proc)
	if slot == 0 {
		g.spec = spec
	}
	if len(g.procs) == g.n {
		g.starting = true
		g.mu.Unlock()
		g.start(ctx, pool)
	} else {
		g.mu.Unlock()
	}
	select {
	case <-g.ready:
	case <-ctx.Done():
		g.mu.Lock()
		if !g.starting {
			if !g.gaveUp { // another waiter may have given up first
				g.gaveUp, g.err = true, ctx.Err()
				close(g.ready) // the others' contexts ended too (RunGroup's is theirs)
			}
			g.mu.Unlock()
			return nil, g.err
		}
		g.mu.Unlock()
		<-g.ready // the children are forked: this rank must supervise its own
	}
	if g.runs == nil {
		return nil, g.err
	}
	return g.runs[slot], nil
}

// start asks one server for every rank: the ranks differ only in their
// own entries (ownEnv), or the group starts cold.
func (g *WarmGroup) start(ctx context.Context, pool *Warm) {
	defer close(g.ready)
	for _, k := range g.keys {
		if k != g.keys[0] {
			return
		}
	}
	s, err := pool.server(ctx, g.keys[0], g.spec.python, g.spec.script, g.spec.torch, g.spec.env, g.spec.startup, true)
	if s == nil || err != nil {
		g.err = err
		return
	}
	runs, err := s.start(g.procs)
	if err != nil {
		pool.drop(s, err)
		return
	}
	g.runs = runs
}
