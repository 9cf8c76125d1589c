package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// The environment of a traced job, read by bench/tracer.py (its *_ENV
// names; TestTracerEnvAgrees keeps both in step).
const (
	TraceDirEnv    = "GCJITTER_TRACE_DIR"
	TraceStepsEnv  = "GCJITTER_TRACE_STEPS"
	TraceWarmupEnv = "GCJITTER_TRACE_WARMUP"
	TraceStepFnEnv = "GCJITTER_TRACE_STEP_FN"
)

// TraceVariant is the variant name of a traced run: the job ran with the
// GC settings it chose itself.
const TraceVariant = "traced"

// TraceOptions say what to trace and where the run goes.
type TraceOptions struct {
	Out     string   // results directory (created if needed; runs accumulate)
	Case    string   // case name of the run
	Command []string // the job: program and arguments, run unchanged
	// Steps to record after Warmup (0: all); StepFn, module:qualname, marks
	// step ends instead of the optimizer.
	Steps, Warmup int
	StepFn        string
	Spike         stats.SpikeRule
	Tool          string
	Stdin         io.Reader
	Stdout        io.Writer
	Stderr        io.Writer
}

// traceGrace is how long a cancelled job may take to stop by itself before
// it is sent SIGTERM, and then SIGKILL.
const traceGrace = 10 * time.Second

// Traced is what a trace left: the job's exit code and the runs added.
type Traced struct {
	ExitCode int
	Runs     []*Collected
	// Incomplete are streams of processes that did not finish recording
	// (the job died): kept in Streams, not added as runs.
	Incomplete []string
	Streams    string // where the job's processes wrote their streams
}

// Trace runs the job with the tracer injected (a sitecustomize first on
// PYTHONPATH that runs the job's own), its standard streams passed
// through, and adds what its processes recorded to the results directory:
// one run, with one stream per rank under torchrun. SIGTERM is passed on
// to the job; Ctrl-C reaches it directly (same process group), and the
// steps recorded until then are kept.
func Trace(ctx context.Context, opt TraceOptions) (*Traced, error) {
	if len(opt.Command) == 0 {
		return nil, errors.New("no command to trace")
	}
	base := filepath.Join(opt.Out, "trace")
	tracerDir := filepath.Join(base, "tracer")
	if err := bench.WriteTracer(tracerDir); err != nil {
		return nil, err
	}
	streams := filepath.Join(base, "streams-"+time.Now().UTC().Format("20060102-150405.000000000"))
	if err := os.MkdirAll(streams, 0o755); err != nil {
		return nil, err
	}
	streams, _ = filepath.Abs(streams)
	tracerDir, _ = filepath.Abs(tracerDir)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PYTHONPATH=") || strings.HasPrefix(kv, "GCJITTER_TRACE_")
	})
	pythonPath := tracerDir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	env = append(env, "PYTHONPATH="+pythonPath, TraceDirEnv+"="+streams,
		TraceStepsEnv+"="+strconv.Itoa(opt.Steps), TraceWarmupEnv+"="+strconv.Itoa(opt.Warmup))
	if opt.StepFn != "" {
		env = append(env, TraceStepFnEnv+"="+opt.StepFn)
	}
	cmd := exec.Command(opt.Command[0], opt.Command[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, opt.Stdin, opt.Stdout, opt.Stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", opt.Command[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	fromTerminal := isTerminal(opt.Stdin)
	var waitErr error
	ctxDone := ctx.Done()
	var escalate <-chan time.Time
	var killed bool
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case sig := <-sigs:
			// Ctrl-C at a terminal reached the job already (same process
			// group); any other SIGINT, and SIGTERM (a CI runner's
			// timeout), is passed on.
			if sig == syscall.SIGTERM || !fromTerminal {
				cmd.Process.Signal(sig)
			}
		case <-ctxDone:
			// Cancelled (gcjitter's own signal handling, or a caller): the
			// job has a grace period to finish its records, then SIGTERM,
			// then SIGKILL.
			ctxDone = nil
			escalate = time.After(traceGrace)
		case <-escalate:
			if killed {
				cmd.Process.Kill()
				escalate = nil
				continue
			}
			cmd.Process.Signal(syscall.SIGTERM)
			killed = true
			escalate = time.After(traceGrace)
		}
	}
	out := &Traced{Streams: streams, ExitCode: exitCode(cmd, waitErr)}
	runs, incomplete, err := collectTraced(opt, streams)
	out.Runs, out.Incomplete = runs, incomplete
	return out, err
}

// isTerminal: r is a terminal, whose Ctrl-C signals the whole foreground
// process group.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	// A character device may be /dev/null: ask for terminal attributes.
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return 1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// collectTraced adds the complete streams as runs: the rank-N streams of
// a torchrun job as one multi-rank run, each other process's stream as a
// run of its own.
func collectTraced(opt TraceOptions, dir string) ([]*Collected, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var ranks, singles, incomplete []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		path := filepath.Join(dir, name)
		if !completeStream(path) {
			incomplete = append(incomplete, path)
			continue
		}
		if strings.HasPrefix(name, "rank-") {
			ranks = append(ranks, path)
		} else {
			singles = append(singles, path)
		}
	}
	var runs []*Collected
	groups := [][]string{}
	if len(ranks) > 0 {
		groups = append(groups, ranks)
	}
	for _, s := range singles {
		groups = append(groups, []string{s})
	}
	for _, g := range groups {
		c, err := Collect(opt.Out, opt.Case, TraceVariant, g, opt.Spike, opt.Tool, append([]string{"gcjitter", "trace", "--"}, opt.Command...))
		if err != nil {
			return runs, incomplete, err
		}
		runs = append(runs, c)
	}
	return runs, incomplete, nil
}

// completeStream: the stream has a meta and an end record.
func completeStream(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s, err := bench.ReadStream(f, path)
	return err == nil && s.Meta != nil && s.Complete() && len(s.Problems) == 0
}
