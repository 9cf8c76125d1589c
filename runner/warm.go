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
// "Warm starts"). A server serves the runs of one interpreter, script and
// environment but for PYTHONHASHSEED: the hash secret is fixed when an
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
	mu     sync.Mutex
	held   []*warmServer // least recently used first
	failed map[string]bool
	log    io.Writer
	// started counts the servers started (tests).
	started int
}

// NewWarm is an empty pool; log gets one line per server that could not
// start (nil: none).
func NewWarm(log io.Writer) *Warm {
	return &Warm{failed: map[string]bool{}, log: log}
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
	p.held = nil
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
	busy sync.Mutex // one run at a time: the server waits for each child
	cmd  *exec.Cmd
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
// the run starts cold. The error is ctx's.
func (p *Warm) server(ctx context.Context, key, python, script string, torch bool, env []string, startup time.Duration) (*warmServer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed[key] {
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
	s, err := startServer(ctx, key, python, script, torch, env, startup)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		p.failed[key] = true
		if p.log != nil {
			fmt.Fprintf(p.log, "gcjitter: warm start unavailable (%v); these runs start cold\n", err)
		}
		return nil, nil
	}
	p.held, p.started = append(p.held, s), p.started+1
	return s, nil
}

func startServer(ctx context.Context, key, python, script string, torch bool, env []string, startup time.Duration) (*warmServer, error) {
	args := []string{script, "--warm-server"}
	if torch {
		args = append(args, "--torch")
	}
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
	s := &warmServer{key: key, cmd: cmd, in: inW, msgs: make(chan string, 4), tail: &tailWriter{max: 4 << 10},
		done: make(chan struct{}), gone: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, s.tail
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", python, err)
	}
	go func() {
		defer close(s.gone)
		defer close(s.msgs)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.msgs <- sc.Text()
		}
	}()
	go func() {
		<-s.gone
		s.err = cmd.Wait()
		close(s.done)
	}()
	var timeout <-chan time.Time
	if startup > 0 {
		t := time.NewTimer(startup)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case line, ok := <-s.msgs:
		if ok && line == "ready" {
			return s, nil
		}
		s.close()
		return nil, fmt.Errorf("the server said %q, then: %s", line, LastLines(s.tail.String(), 3))
	case <-timeout:
		s.close()
		return nil, fmt.Errorf("the server was not ready within %v", startup)
	case <-ctx.Done():
		s.close()
		return nil, ctx.Err()
	}
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
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	})
}

// warmRun is a run started by a server: what Worker.Run needs of a process.
type warmRun struct {
	pid  int
	wait func() (code int, signal string, err error)
	// cpu is the run's CPU time, which its server reaped (set by wait):
	// gcjitter's own rusage cannot see it.
	cpu time.Duration
}

// start asks s for a run with args whose records, stdout and stderr go to
// the write ends given (stdout nil: /dev/null). It returns once the child
// has its process group and its channels, so the caller can close its
// copies of the write ends.
func (s *warmServer) start(args []string, records, stdout, stderr *os.File) (*warmRun, error) {
	s.busy.Lock()
	fd := func(f *os.File) string {
		if f == nil {
			return "-"
		}
		return strconv.Itoa(int(f.Fd()))
	}
	body := strings.Join(append([]string{strconv.Itoa(os.Getpid()), fd(records), fd(stdout), fd(stderr)}, args...), "\x00")
	if _, err := fmt.Fprintf(s.in, "%d\n%s", len(body), body); err != nil {
		s.busy.Unlock()
		return nil, fmt.Errorf("warm server: %w", err)
	}
	line, ok := <-s.msgs
	pid, err := 0, error(nil)
	switch {
	case !ok:
		err = s.lost()
	case strings.HasPrefix(line, "started "):
		pid, err = strconv.Atoi(strings.TrimPrefix(line, "started "))
	default:
		// The child could not take its channels; the server reports its
		// exit next.
		err = fmt.Errorf("warm start failed: %s", strings.TrimPrefix(line, "error "))
		<-s.msgs
	}
	if err != nil || pid <= 0 {
		s.busy.Unlock()
		if err == nil {
			err = fmt.Errorf("warm server: bad reply %q", line)
		}
		return nil, err
	}
	run := &warmRun{pid: pid}
	run.wait = func() (int, string, error) {
		defer s.busy.Unlock()
		line, ok := <-s.msgs
		if !ok {
			return 0, "", s.lost()
		}
		var p, status int
		var cpuNS int64
		if _, err := fmt.Sscanf(line, "exit %d %d %d", &p, &status, &cpuNS); err != nil || p != pid {
			return 0, "", fmt.Errorf("warm server: bad reply %q", line)
		}
		run.cpu = time.Duration(cpuNS)
		ws := syscall.WaitStatus(status)
		if ws.Signaled() {
			return -1, signalName(ws.Signal()), nil
		}
		return ws.ExitStatus(), "", nil
	}
	return run, nil
}

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

// warmKey names the server a run can use: all but the hash seed.
func warmKey(python, script string, torch bool, env []string) string {
	key := []string{python, script, strconv.FormatBool(torch)}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PYTHONHASHSEED=") {
			key = append(key, kv)
		}
	}
	return strings.Join(key, "\x00")
}
