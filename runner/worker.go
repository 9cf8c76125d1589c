package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"golang.org/x/sys/unix"
)

// DefaultGrace is how long a worker has between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Worker is one worker process to start.
type Worker struct {
	Python      string   // interpreter
	Script      string   // path of the worker program (bench.WriteWorker)
	Args        []string // worker flags (bench.Config.Args); --records-fd is added
	Env         []string // the whole environment; nil means this process's
	RecordsPath string   // where the record stream is written as it arrives
	// Stdout and Stderr receive the workload's own output; nil discards it.
	// The last lines of stderr are kept in Result.StderrTail either way.
	Stdout, Stderr io.Writer
	Grace          time.Duration // SIGTERM to SIGKILL; 0 means DefaultGrace
	// OnRecord, when set, sees every record as it arrives (progress). It
	// runs on the reading goroutine.
	OnRecord func(bench.Record)
	// Timeouts; zero means none. Startup runs until the first record,
	// Silence between two records, Total over the whole run.
	Startup, Silence, Total time.Duration
	// Warm, when set, starts the run forked from a warm server of the
	// pool (Torch: one that imported torch) instead of a fresh
	// interpreter; the run starts cold where the pool cannot serve it.
	Warm  *Warm
	Torch bool
	// WarmScope names the runs that may share a server: a case's (its
	// name). A server imports what its runs imported before their
	// collector's reset (the worker's _preload), and a run of another
	// case would start with that in its heap: after one of resnet's runs
	// (torchvision), an ascend-gpt-periodic-gc run made 8 full
	// collections in 200 steps instead of a cold run's 9, each walking
	// more. "" shares a server with every run of the same key.
	WarmScope string
	// Group, with Warm, starts this rank with the other ranks of its run
	// from one server (a multi-rank run's ranks must start together).
	Group *WarmGroup
}

// process is a started run: its pid (and process group) and how to wait
// for its exit code, or the signal that killed it.
type process struct {
	pid  int
	wait func() (code int, signal string, err error)
	// unreaped is the CPU time of a process gcjitter did not reap (a warm
	// run's, reaped by its server), read after wait; nil otherwise.
	unreaped func() time.Duration
}

// TimeoutError says which of a worker's timeouts expired.
type TimeoutError struct {
	Which string // startup, silence or total
	After time.Duration
}

func (e *TimeoutError) Error() string {
	switch e.Which {
	case "startup":
		return fmt.Sprintf("no record within %v of starting (start-up timeout)", e.After)
	case "silence":
		return fmt.Sprintf("no record for %v (silence timeout): the worker hung", e.After)
	}
	return fmt.Sprintf("run took longer than %v (total timeout)", e.After)
}

// Result is what a finished worker left behind.
type Result struct {
	Stream     *bench.Stream
	ExitCode   int    // -1 when killed by a signal
	Signal     string // the signal that killed it, if any: "SIGKILL"
	StderrTail string
	// Stopped is why the runner stopped the worker: a *TimeoutError, or the
	// context's error (cancelled, e.g. by Ctrl-C); nil when it ran its course.
	Stopped error
	// StoppedGroup is set by RunGroup on the rank whose failure stopped the
	// others: the one to blame, not whichever failed rank is lowest.
	StoppedGroup bool
	// Launcher is set on every rank when the launcher itself failed before
	// any rank wrote a record: its argv[0], for the reason.
	Launcher string
	// UnreapedCPU is the run's CPU time that gcjitter's own rusage cannot
	// see (a warm run is its server's child): the host-load sample counts
	// it as the run's, not as other load.
	UnreapedCPU time.Duration
}

// Failed reports whether the run did not complete: a non-zero exit, an error
// record, or a stream without its end.
func (r *Result) Failed() bool {
	return r.ExitCode != 0 || r.Stream.Error != nil || !r.Stream.Complete()
}

// Reason says in one line why a run failed, for the user and the manifest.
func (r *Result) Reason() string {
	s := r.Stream
	var te *TimeoutError
	switch {
	case r.Launcher != "" && r.Stopped == nil:
		return fmt.Sprintf("the launcher %s exited with status %d before any rank wrote a record (its output is in the run's stderr file)", r.Launcher, r.ExitCode)
	case errors.As(r.Stopped, &te):
		return fmt.Sprintf("stopped after %d steps: %v", len(s.Steps), te)
	case r.Stopped != nil:
		return fmt.Sprintf("stopped after %d steps: %v", len(s.Steps), r.Stopped)
	case s.Error != nil:
		return fmt.Sprintf("worker error (%s): %s", s.Error.Kind, s.Error.Message)
	case r.Signal != "":
		return fmt.Sprintf("worker killed by %s after %d steps", r.Signal, len(s.Steps))
	case r.ExitCode != 0:
		return fmt.Sprintf("worker exited with status %d after %d steps", r.ExitCode, len(s.Steps))
	case len(s.Problems) > 0: // first: a rejected meta record explains a missing one
		return fmt.Sprintf("record stream has %d bad %s, first: %v", len(s.Problems), plural(len(s.Problems), "line"), s.Problems[0])
	case s.Meta == nil:
		return "worker wrote no meta record"
	case s.End == nil:
		return fmt.Sprintf("worker exited without an end record after %d steps", len(s.Steps))
	case len(s.Steps) != s.End.Steps:
		return fmt.Sprintf("end record says %d steps, stream has %d", s.End.Steps, len(s.Steps))
	}
	return ""
}

// Run starts the worker, streams its records to RecordsPath and waits for it.
// When ctx ends, the worker's whole process group gets SIGTERM, then SIGKILL
// after the grace period; the records received so far are kept either way.
// The error is for failures to start or to write records; a worker that
// fails is a Result with Failed() true.
func (w *Worker) Run(ctx context.Context) (*Result, error) {
	out, err := os.OpenFile(w.RecordsPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("records file: %w", err)
	}
	defer out.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()

	args := append(append([]string{}, w.Args...), "--records-fd", "3")
	stderr, tail := stderrTail(w.Stderr)
	var p *process
	if w.Warm != nil {
		if p, err = w.startWarm(ctx, args, pw, stderr); err != nil {
			pw.Close()
			return nil, err
		}
	}
	if p == nil {
		cmd := exec.Command(w.Python, append([]string{w.Script}, args...)...)
		cmd.Env = w.Env
		cmd.ExtraFiles = []*os.File{pw} // fd 3 in the child
		cmd.Stdout = w.Stdout
		cmd.Stderr = stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			pw.Close()
			return nil, fmt.Errorf("starting %s: %w", w.Python, err)
		}
		p = &process{pid: cmd.Process.Pid, wait: func() (int, string, error) { return exitStatus(cmd.Wait()) }}
	}
	pw.Close() // the child holds the only write end: EOF when it exits

	runCtx, stop, release := supervise(ctx, p.pid, w.Grace, w.Total)
	defer release()
	watchdog := newRecordWatchdog(w.Startup, w.Silence, stop)
	defer watchdog.close()

	// Reading goes on until every process holding the pipe has exited, so
	// records written just before a crash are still saved. When the disk
	// refuses a write, the worker is stopped: measuring on without keeping
	// the records would only waste the machine.
	var writeErr error
	rd := bench.NewReader(io.TeeReader(pr, writerFunc(func(p []byte) (int, error) {
		n, err := out.Write(p)
		if err != nil && writeErr == nil {
			writeErr = err
			stop(fmt.Errorf("writing the records: %w", err)) // err names the file
		}
		return n, nil // keep draining the pipe so the worker never blocks
	})), w.RecordsPath)
	stream := new(bench.Stream)
	for rd.Scan() {
		rec := rd.Record()
		watchdog.record()
		collect(stream, rec)
		if w.OnRecord != nil {
			w.OnRecord(rec)
		}
	}
	readErr := rd.Err()
	code, signal, waitErr := p.wait()
	watchdog.close()                      // it exited: a timer firing now must not read as a hang
	syscall.Kill(-p.pid, syscall.SIGKILL) // what it left in its group would disturb the next runs

	res := &Result{Stream: stream, StderrTail: tail.String(), ExitCode: code, Signal: signal}
	if p.unreaped != nil {
		res.UnreapedCPU = p.unreaped()
	}
	if runCtx.Err() != nil {
		res.Stopped = context.Cause(runCtx)
	}
	var lost *LostServerError
	if errors.As(waitErr, &lost) && res.Stopped == nil {
		res.Stopped, res.ExitCode, waitErr = waitErr, -1, nil
	}
	if waitErr != nil {
		return res, waitErr
	}
	if err := out.Sync(); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		return res, fmt.Errorf("writing the records: %w", writeErr)
	}
	if readErr != nil {
		return res, fmt.Errorf("reading records: %w", readErr)
	}
	return res, nil
}

func collect(s *bench.Stream, rec bench.Record) {
	switch r := rec.(type) {
	case *bench.Meta:
		s.Meta = r
	case *bench.Step:
		s.Steps = append(s.Steps, r)
	case *bench.End:
		s.End = r
	case *bench.ErrorRecord:
		s.Error = r
	case *bench.SyntaxError:
		s.Problems = append(s.Problems, r)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// LastLines is the last n lines of s (a worker's stderr tail, say).
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// exitStatus splits cmd.Wait's error into an exit code and the signal that
// killed the process; err is a failure to wait at all.
func exitStatus(waitErr error) (code int, signal string, err error) {
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signal = signalName(ws.Signal())
		}
	default:
		return 0, "", waitErr
	}
	return code, signal, nil
}

// signalName is "SIGKILL" rather than Go's "killed", so a reason reads
// "worker killed by SIGKILL" and names what to look for (the OOM killer,
// a scheduler's time limit).
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return sig.String()
}

// serverFor is the server w's run is started from: its key in the pool,
// how to start it, and the run's own environment entries (a rank's).
func (w *Worker) serverFor() (key string, spec serverSpec, own []string) {
	env := w.Env
	if env == nil {
		env = os.Environ()
	}
	serverEnv, own, keyEnv := ownEnv(env)
	key = warmKey(w.Python, w.Script, w.Torch, w.WarmScope, keyEnv)
	return key, serverSpec{python: w.Python, script: w.Script, torch: w.Torch, env: serverEnv, startup: w.Startup}, own
}

// Prestart starts, and waits for, the warm server w's run will be
// started from, so that its import can overlap other work before the run
// (a session's preflight); the run then finds it ready. A server that
// cannot start is left to the run, which starts cold as it would have.
func (w *Worker) Prestart(ctx context.Context) {
	if w.Warm == nil {
		return
	}
	key, spec, _ := w.serverFor()
	w.Warm.server(ctx, key, spec.python, spec.script, spec.torch, spec.env, spec.startup, false)
}

// startWarm starts the run from a server of w.Warm; nil (no error) when
// the pool cannot serve it, so it starts cold. The error is ctx's, or a
// server that failed a run it had accepted.
func (w *Worker) startWarm(ctx context.Context, args []string, records *os.File, stderr io.Writer) (*process, error) {
	key, spec, own := w.serverFor()
	// The child writes to pipes of ours, copied as exec.Cmd copies a
	// cold run's output. A file too: the child would reopen it through
	// /proc with an offset of its own, at 0, and a run's stdout and
	// stderr (one file, the run's .stderr) would overwrite each other.
	var copies sync.WaitGroup
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close() // the child has its own
		}
	}()
	pipe := func(to io.Writer) (*os.File, error) {
		if to == nil {
			return nil, nil
		}
		r, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		closers = append(closers, pw)
		copies.Add(1)
		go func() {
			defer copies.Done()
			defer r.Close()
			io.Copy(to, r)
		}()
		return pw, nil
	}
	proc := warmProc{records: records, env: own, args: args}
	var err error
	if w.Stdout != nil {
		if proc.stdout, err = pipe(w.Stdout); err != nil {
			return nil, err
		}
	}
	if proc.stderr, err = pipe(stderr); err != nil {
		return nil, err
	}
	var run *warmRun
	if w.Group != nil {
		run, err = w.Group.join(ctx, w.Warm, key, spec, proc)
	} else {
		run, err = w.Warm.startOne(ctx, key, spec, proc)
	}
	for _, f := range closers {
		f.Close()
	}
	closers = nil
	if run == nil {
		copies.Wait()
		return nil, err
	}
	return &process{pid: run.pid, wait: func() (int, string, error) {
		code, signal, err := run.wait()
		copies.Wait()
		return code, signal, err
	}, unreaped: func() time.Duration { return run.cpu }}, nil
}
