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
)

// Launched is a group of ranks that an external launcher starts: one
// process (torchrun) whose children are the ranks. Its children do not
// inherit gcjitter's pipe (torchrun closes inherited descriptors), so each
// rank writes its own record stream, and gcjitter follows the files as
// they grow: the same timeouts apply, and what was written stays on disk
// whatever happens to the launcher.
type Launched struct {
	// Command is the launcher's argv up to the worker script, e.g.
	// python -m torch.distributed.run --nproc_per_node=4 ...
	Command []string
	Script  string
	Args    []string // worker flags; --records with {rank} is added
	Env     []string
	// RecordsPaths are rank k's stream paths; Template is the same path
	// with {rank}, as the worker expands it.
	RecordsPaths []string
	Template     string
	Stdout       io.Writer
	Stderr       io.Writer
	Grace        time.Duration
	OnRecord     func(rank int, rec bench.Record)
	// Startup until any rank's first record, Silence between records of
	// any rank, Total over the run; zero means none.
	Startup, Silence, Total time.Duration
}

// pollInterval is how often a followed stream is checked for new lines.
const pollInterval = 20 * time.Millisecond

// Run starts the launcher and follows every rank's stream until the
// launcher exits. Results are per rank, as RunGroup's: a rank whose stream
// is complete succeeded even when the launcher failed because of another.
func (g *Launched) Run(ctx context.Context) ([]*Result, error) {
	for _, p := range g.RecordsPaths {
		// A stream left by an earlier attempt must not be read as this run's.
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("records file: %w", err)
		}
	}
	argv := append(append([]string{}, g.Command...), g.Script)
	argv = append(argv, g.Args...)
	argv = append(argv, "--records", g.Template)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = g.Env
	cmd.Stdout = g.Stdout
	var tail *tailWriter
	cmd.Stderr, tail = stderrTail(g.Stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Ranks in sessions of their own (torchrun's) hold the launcher's
	// output pipe: once it has exited, Wait stops waiting for them.
	cmd.WaitDelay = launcherWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the launcher %s: %w", argv[0], err)
	}
	runCtx, stop, release := supervise(ctx, cmd.Process.Pid, g.Grace, g.Total)
	defer release()
	watchdog := newRecordWatchdog(g.Startup, g.Silence, stop) // any rank's record counts
	defer watchdog.close()

	exited := make(chan struct{})
	streams := make([]*bench.Stream, len(g.RecordsPaths))
	exits := make([]*exitWatch, len(g.RecordsPaths))
	readErrs := make([]error, len(g.RecordsPaths))
	var wg sync.WaitGroup
	for k, path := range g.RecordsPaths {
		streams[k] = new(bench.Stream)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fr := &followReader{path: path, exited: exited}
			defer fr.close()
			rd := bench.NewReader(fr, path)
			for rd.Scan() {
				rec := rd.Record()
				watchdog.record()
				collect(streams[k], rec)
				if m, ok := rec.(*bench.Meta); ok && exits[k] == nil && m.PID > 0 {
					exits[k] = watchExit(m.PID, cmd.Process.Pid, exited)
				}
				if g.OnRecord != nil {
					g.OnRecord(k, rec)
				}
			}
			readErrs[k] = rd.Err()
		}()
	}
	waitErr := cmd.Wait()
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		// It exited; what held its pipes is dealt with below.
		waitErr = nil
		if !cmd.ProcessState.Success() {
			waitErr = &exec.ExitError{ProcessState: cmd.ProcessState}
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ranks it left behind in its group
	close(exited)                                   // and those in sessions of their own: their watches kill them
	wg.Wait()
	watchdog.close() // it exited and every stream is read: no hang to detect

	code, signal, err := exitStatus(waitErr)
	if err != nil {
		return nil, err
	}
	var stopped error
	if runCtx.Err() != nil {
		stopped = context.Cause(runCtx)
	}
	out := make([]*Result, len(streams))
	for k, s := range streams {
		out[k] = &Result{Stream: s, StderrTail: tail.String(), Stopped: stopped}
		// A rank's own exit status is the launcher's secret; its stream
		// says whether it finished. When all finished and the launcher
		// still failed, the failure is every rank's.
		if allComplete(streams) {
			out[k].ExitCode, out[k].Signal = code, signal
		}
	}
	if first := firstStopped(out, stopTimes(out, exits, g.RecordsPaths)); first >= 0 && stopped == nil {
		out[first].StoppedGroup = true
	}
	if code != 0 && noRecords(streams) {
		for _, r := range out {
			r.ExitCode, r.Signal, r.Launcher = code, signal, launcherName(g.Command)
		}
	}
	for k, err := range readErrs {
		if err != nil {
			return out, fmt.Errorf("reading rank %d's records: %w", k, err)
		}
	}
	return out, nil
}

// stopTimes are when the ranks stopped: their exit times where they order
// every failed rank (exitWatch), else their streams' last writes. A rank
// that had ended when its watch began has only a bound, the time of the
// look: it orders the ranks where it comes before every other failed
// rank's exit.
func stopTimes(out []*Result, exits []*exitWatch, paths []string) []time.Time {
	at := make([]time.Time, len(out))
	bound := make([]bool, len(out))
	known := true
	for k, r := range out {
		at[k], bound[k] = exits[k].exitedAt()
		known = known && (!r.Failed() || !at[k].IsZero())
	}
	for k, r := range out {
		if !known || !bound[k] || !r.Failed() {
			continue
		}
		for j, o := range out {
			if j != k && o.Failed() && (bound[j] || !at[k].Before(at[j])) {
				known = false // it may have ended before or after rank j
			}
		}
	}
	if known {
		return at
	}
	for k, path := range paths {
		at[k] = time.Time{}
		if st, err := os.Stat(path); err == nil {
			at[k] = st.ModTime()
		}
	}
	return at
}

// firstStopped is the failed rank to blame: the one that stopped first,
// which the others' broken collectives or the launcher's stop followed,
// whatever its number. Exit times order the ranks as they died. Without
// them a stream's mtime stands in, with the kernel's coarse clock (a few
// ms): a rank killed after a step stops in the same tick as a peer whose
// all-reduce then failed, so in a tie a stream that ends with the worker's
// error record was alive to report after the last step, and one that ends
// silently stopped first. -1 when no rank failed or no time is known.
func firstStopped(out []*Result, stoppedAt []time.Time) int {
	first := -1
	for k, r := range out {
		if !r.Failed() || stoppedAt[k].IsZero() {
			continue
		}
		switch {
		case first < 0, stoppedAt[k].Before(stoppedAt[first]):
			first = k
		case stoppedAt[k].Equal(stoppedAt[first]) && out[first].Stream.Error != nil && r.Stream.Error == nil:
			first = k
		}
	}
	return first
}

// launcherWaitDelay bounds the wait for a launcher's output pipes after it
// has exited.
const launcherWaitDelay = 2 * time.Second

// launcherName is the launcher's command without the flags gcjitter added.
func launcherName(argv []string) string {
	end := len(argv)
	for i, a := range argv {
		if strings.HasPrefix(a, "--nnodes=") {
			end = i
			break
		}
	}
	return strings.Join(argv[:end], " ")
}

func noRecords(streams []*bench.Stream) bool {
	for _, s := range streams {
		if s.Meta != nil || len(s.Steps) > 0 || s.Error != nil {
			return false
		}
	}
	return true
}

func allComplete(streams []*bench.Stream) bool {
	for _, s := range streams {
		if !s.Complete() {
			return false
		}
	}
	return true
}

// followReader reads a file that another process is still writing, like
// tail -f: at the end of the file it waits for more until the writer's
// launcher has exited, then reads what is left and ends. The file may not
// exist yet when following starts (the rank has not started).
type followReader struct {
	path   string
	exited <-chan struct{}
	f      *os.File
	last   bool // the launcher has exited: the next end of file is the end
}

func (r *followReader) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			f, err := os.Open(r.path)
			switch {
			case err == nil:
				r.f = f
				continue
			case !errors.Is(err, os.ErrNotExist):
				return 0, err
			case r.last:
				return 0, io.EOF // the rank never started
			}
		} else {
			n, err := r.f.Read(p)
			if n > 0 || (err != nil && err != io.EOF) {
				return n, err
			}
			if r.last {
				return 0, io.EOF
			}
		}
		select {
		case <-r.exited:
			r.last = true // one more look: lines written just before the exit
		case <-time.After(pollInterval):
		}
	}
}

func (r *followReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// TorchrunCommand is the launcher's argv for n ranks on this host with a
// static rendezvous on the given loopback port. The underscore spellings
// are the ones every torchrun accepts (1.9 to 2.x).
func TorchrunCommand(base []string, python string, ranks, port int) []string {
	if len(base) == 0 {
		base = []string{"{python}", "-m", "torch.distributed.run"}
	}
	argv := make([]string, 0, len(base)+4)
	for _, a := range base {
		argv = append(argv, strings.ReplaceAll(a, "{python}", python))
	}
	return append(argv, "--nnodes=1", fmt.Sprintf("--nproc_per_node=%d", ranks),
		"--master_addr=127.0.0.1", fmt.Sprintf("--master_port=%d", port))
}
