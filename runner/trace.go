package runner

import (
	"bufio"
	"bytes"
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
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/stats"
)

// The environment of a traced job, read by bench/tracer.py (its *_ENV
// names; TestTracerEnvAgrees keeps both in step).
const (
	TraceDirEnv    = "GCJITTER_TRACE_DIR"
	TraceStepsEnv  = "GCJITTER_TRACE_STEPS"
	TraceWarmupEnv = "GCJITTER_TRACE_WARMUP"
	TraceStepFnEnv = "GCJITTER_TRACE_STEP_FN"
	TracePolicyEnv = "GCJITTER_TRACE_POLICY"
)

// TraceOptions say what to trace and where the run goes.
type TraceOptions struct {
	Out     string   // results directory (created if needed; runs accumulate)
	Case    string   // case name of the run
	Command []string // the job: program and arguments, run unchanged
	// Steps to record after Warmup (0: all); StepFn, module:qualname, marks
	// step ends instead of the optimizer.
	Steps, Warmup int
	StepFn        string
	// Policy is a GC policy in the worker's grammar (bench.ParsePolicy),
	// applied by the tracer; "": the job's own settings.
	Policy string
	Spike  stats.SpikeRule
	Tool   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// traceGrace is how long a cancelled job may take to stop by itself before
// it is sent SIGTERM, and then SIGKILL (a variable for tests).
var traceGrace = 10 * time.Second

// Traced is what a trace left: the job's exit code and the runs added.
type Traced struct {
	ExitCode int
	Runs     []*Collected
	// Incomplete are streams of processes that did not finish recording
	// (the job died): kept in Streams, not added as runs.
	Incomplete      []string
	IncompleteSteps int    // the steps those streams hold
	Streams         string // where the job's processes wrote their streams
	// Status is what each process that stepped an optimizer or met the
	// step function said at its exit (status-PID.json), by pid.
	Status []TraceStatus
	// Processes is, for a job whose streams are not the ranks of one world
	// (torch.multiprocessing's processes), how many became the run's
	// processes; 0 otherwise.
	Processes int
	// WarmupOnly is, when no complete stream held a measured step, the
	// most (warm-up) steps one held; no run is added.
	WarmupOnly int
	// collectFailed: the streams could not be added (the error says why).
	collectFailed bool
}

// Account is gcjitter's word on a trace beside its runs' lines: what
// ended a step, a step function that was not found or never ran, why
// there is no run, and a job that failed.
func (t *Traced) Account(stepFn string) []string {
	var lines []string
	add := func(format string, args ...any) {
		if l := fmt.Sprintf(format, args...); !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	var where []string
	calls, seen, failed := 0, false, false
	for _, st := range t.Status {
		inTurn := slices.DeleteFunc(slices.Clone(st.Optimizers), func(o string) bool { return slices.Contains(st.Late, o) })
		if len(inTurn) > 1 && st.EndAt != "" && stepFn == "" && !st.Explicit {
			add("%d optimizers step in turn (%s): one step per cycle, ending at %s's step; -step-fn to choose otherwise",
				len(inTurn), strings.Join(inTurn, ", "), st.EndAt)
		}
		if len(st.Late) > 0 && stepFn == "" && !st.Explicit {
			add("%s first stepped after the steps had begun: a later phase, not a step's end (steps end at %s's step)", strings.Join(st.Late, ", "), st.EndAt)
		}
		if st.GCChanged != "" {
			set := "the settings the job started with"
			if st.Policy != "" {
				set = "what -policy " + st.Policy + " set"
			}
			add("the job itself changed the collector's settings (%s) in process %d, after %s: the run measures the job's settings, not only %s", st.GCChanged, st.PID, set, variantOf(st.Policy))
		}
		if st.TracerError != "" {
			add("the tracer did not start in process %d (%s): it recorded nothing", st.PID, st.TracerError)
			failed = true
		}
		if st.StepFnError != "" {
			add("-step-fn %s: %s (process %d): it marked no step there", stepFn, st.StepFnError, st.PID)
			failed = true
		}
		if st.StepFnWhere != "" {
			where = append(where, st.StepFnWhere)
			calls += st.StepFnCalls
		}
		seen = seen || st.Marker != ""
	}
	if len(t.Runs) == 0 && !t.collectFailed && len(t.Incomplete) == 0 {
		mod, qual, _ := strings.Cut(stepFn, ":")
		switch {
		case failed:
		case t.WarmupOnly > 0:
			add("the job's streams hold %d step(s), all warm-up: no measured step, no run added; trace a longer run, or lower -warmup", t.WarmupOnly)
		case stepFn != "" && len(where) > 0 && calls == 0:
			add("-step-fn %s (%s) never ran: the job never called it; name the function that runs once per training step", stepFn, where[0])
		case stepFn != "" && len(where) > 0:
			add("-step-fn %s ran %d time(s) in a process: a step is the time between two of its returns, so none was recorded", stepFn, calls)
		case stepFn != "" && mod == "__main__":
			add("-step-fn %s: the job's script never defined %s", stepFn, qual)
		case stepFn != "":
			add("-step-fn %s: the job never imported %s", stepFn, mod)
		case seen:
			add("only one step end was seen: a step is the time between two, so none was recorded")
		default:
			add("no optimizer step was seen; name the step function with -step-fn module:qualname or call gcjitter_step() at the end of each step")
		}
	}
	if t.ExitCode != 0 {
		held := "none"
		for _, c := range t.Runs {
			held = fmt.Sprintf("%d measured steps (%s)", c.Summary.Steps, c.Run.ID)
		}
		if len(t.Incomplete) > 0 {
			held += fmt.Sprintf(" complete; %d steps in streams that did not finish, kept in %s", t.IncompleteSteps, t.Streams)
		}
		by := ""
		if t.ExitCode > 128 && t.ExitCode < 128+65 {
			by = " (" + signalName(syscall.Signal(t.ExitCode-128)) + ")"
		}
		add("the job exited with status %d%s; its streams hold %s", t.ExitCode, by, held)
	}
	return lines
}

// TraceStatus is a traced process's account of its steps
// (bench/tracer_stream.py writes it).
type TraceStatus struct {
	PID         int      `json:"pid"`
	Stream      bool     `json:"stream"`
	Steps       int      `json:"steps"`
	Marker      string   `json:"marker"`
	Optimizers  []string `json:"optimizers"`
	EndAt       string   `json:"end_at"`
	Late        []string `json:"late_optimizers"`
	StepFn      string   `json:"step_fn"`
	StepFnWhere string   `json:"step_fn_where"`
	StepFnCalls int      `json:"step_fn_calls"`
	StepFnError string   `json:"step_fn_error"`
	Explicit    bool     `json:"explicit"`
	// TracerError: the tracer failed to start (trace_site.py says why).
	TracerError string `json:"tracer_error"`
	// Policy is the -policy the process ran under ("" for none);
	// GCChanged what the job changed of the collector's settings after
	// the start (gc.disable(), gc.set_threshold...), "" when nothing.
	Policy    string `json:"policy"`
	GCChanged string `json:"gc_changed"`
}

// variantOf is the variant of a run traced under policy ("": none).
func variantOf(policy string) string {
	if policy == "" {
		return cases.TraceVariant
	}
	return policy
}

// StepFnError is a -step-fn that names what is not there, found before
// the job starts.
type StepFnError struct{ Spec, Missing string }

func (e *StepFnError) Error() string {
	return fmt.Sprintf("-step-fn %s: %s; the job was not started", e.Spec, e.Missing)
}

// PolicyError is a -policy the worker's grammar refuses, found before the
// job starts.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string {
	return fmt.Sprintf("-policy: %v; the job was not started", e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// Trace runs the job with the tracer injected (a sitecustomize first on
// PYTHONPATH that runs the job's own), its standard streams passed
// through, and adds what its processes recorded to the results directory
// as one run: one stream per rank under torchrun, or per process of a job
// whose processes step on their own (torch.multiprocessing). Signals: see
// waitJob. A -step-fn is checked against the source before the job starts
// (*StepFnError), a -policy against the worker's grammar (*PolicyError).
func Trace(ctx context.Context, opt TraceOptions) (*Traced, error) {
	if len(opt.Command) == 0 {
		return nil, errors.New("no command to trace")
	}
	if opt.Policy != "" {
		if _, err := bench.ParsePolicy(opt.Policy); err != nil {
			return nil, &PolicyError{Err: err}
		}
	}
	if opt.StepFn != "" {
		if err := checkStepFn(ctx, opt); err != nil {
			return nil, err
		}
	}
	base := filepath.Join(opt.Out, "trace")
	tracerDir := filepath.Join(base, "tracer")
	if err := bench.WriteTracer(tracerDir); err != nil {
		return nil, err
	}
	tracerDir, _ = filepath.Abs(tracerDir)
	env := tracerEnv(tracerDir)
	streams := filepath.Join(base, "streams-"+time.Now().UTC().Format("20060102-150405.000000000"))
	if err := os.MkdirAll(streams, 0o755); err != nil {
		return nil, err
	}
	streams, _ = filepath.Abs(streams)
	env = append(env, TraceDirEnv+"="+streams,
		TraceStepsEnv+"="+strconv.Itoa(opt.Steps), TraceWarmupEnv+"="+strconv.Itoa(opt.Warmup))
	if opt.StepFn != "" {
		env = append(env, TraceStepFnEnv+"="+opt.StepFn)
	}
	if opt.Policy != "" {
		env = append(env, TracePolicyEnv+"="+opt.Policy)
	}
	cmd := exec.Command(opt.Command[0], opt.Command[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, opt.Stdin, opt.Stdout, opt.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", opt.Command[0], err)
	}
	waitErr := waitJob(ctx, cmd, sigs, isTerminal(opt.Stdin), opt.Stderr)
	out := &Traced{Streams: streams, ExitCode: exitCode(cmd, waitErr)}
	out.Status = readStatuses(streams)
	err := collectTraced(opt, out)
	out.collectFailed = err != nil
	return out, err
}

// waitJob waits for the job as long as it runs. SIGINT is the job's to
// handle (a script that catches KeyboardInterrupt and goes on to its
// evaluation is waited for): Ctrl-C at a terminal reached it already (same
// process group), any other SIGINT is passed on; a second one sends
// SIGTERM, a third SIGKILL. SIGTERM (a CI runner's timeout) is passed on,
// and SIGKILL follows after traceGrace. A context cancelled by anything
// but SIGINT gives the job traceGrace, then SIGTERM, then SIGKILL.
func waitJob(ctx context.Context, cmd *exec.Cmd, sigs <-chan os.Signal, fromTerminal bool, stderr io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctxDone := ctx.Done()
	var escalate <-chan time.Time
	terminated, interrupts := false, 0
	for {
		select {
		case err := <-done:
			return err
		case sig := <-sigs:
			if sig == syscall.SIGINT {
				// The context's cancellation is this SIGINT's too.
				interrupts++
				escalate = nil
				switch interrupts {
				case 1:
					if !fromTerminal {
						cmd.Process.Signal(sig)
					}
				case 2:
					fmt.Fprintln(stderr, "gcjitter trace: interrupted again: SIGTERM to the job (once more: SIGKILL)")
					cmd.Process.Signal(syscall.SIGTERM)
				default:
					cmd.Process.Kill()
				}
				continue
			}
			cmd.Process.Signal(syscall.SIGTERM)
			terminated, escalate = true, time.After(traceGrace)
		case <-ctxDone:
			ctxDone = nil
			if interrupts == 0 && escalate == nil {
				escalate = time.After(traceGrace)
			}
		case <-escalate:
			if terminated {
				cmd.Process.Kill()
				escalate = nil
				continue
			}
			if interrupts == 0 {
				cmd.Process.Signal(syscall.SIGTERM)
				terminated, escalate = true, time.After(traceGrace)
			}
		}
	}
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

// tracerEnv is gcjitter's environment with the tracer's directory first
// on PYTHONPATH and no GCJITTER_TRACE_ setting of its own.
func tracerEnv(tracerDir string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PYTHONPATH=") || strings.HasPrefix(kv, "GCJITTER_TRACE_")
	})
	pythonPath := tracerDir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	return append(env, "PYTHONPATH="+pythonPath)
}

// checkStepFn asks the job's interpreter whether the -step-fn's module
// and function are there, from their source, before the job starts (and
// before anything is written to the results directory).
func checkStepFn(ctx context.Context, opt TraceOptions) error {
	tmp, err := os.MkdirTemp("", "gcjitter-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := bench.WriteTracer(tmp); err != nil {
		return err
	}
	env := tracerEnv(tmp)
	py, script := jobPython(opt.Command)
	if py == "" {
		// Another interpreter could find other modules: the patch at
		// import reports what is missing instead.
		return nil
	}
	if script != "" {
		script = absPath(script)
	}
	c := exec.CommandContext(ctx, py, "-c", "import gcjitter_trace_check; gcjitter_trace_check._check_main()", opt.StepFn, script)
	c.Env = env
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err = c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 1 && out.Len() > 0:
		return &StepFnError{Spec: opt.StepFn, Missing: strings.TrimSpace(out.String())}
	}
	// The check itself failed: the job runs, and the patch at import says
	// what it finds.
	fmt.Fprintf(opt.Stderr, "gcjitter trace: -step-fn %s could not be checked before the start (%v): %s\n", opt.StepFn, err, lastLine(errOut.String()))
	return nil
}

// jobPython is the job's interpreter, when the command starts one
// (python, python3.11, a path to one) or a Python program whose #! line
// names one (torchrun), and its script (jobScript's .py).
func jobPython(command []string) (python, script string) {
	isPython := func(p string) bool {
		base := filepath.Base(p)
		return strings.HasPrefix(base, "python") && strings.Trim(base[len("python"):], "0123456789.") == ""
	}
	if isPython(command[0]) {
		python = command[0]
	} else if path, err := exec.LookPath(command[0]); err == nil {
		if f, err := os.Open(path); err == nil {
			line, _ := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
			f.Close()
			fields := strings.Fields(strings.TrimPrefix(line, "#!"))
			if strings.HasPrefix(line, "#!") && len(fields) > 0 {
				if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
					fields = fields[1:]
				}
				if isPython(fields[0]) {
					python = fields[0]
				}
			}
		}
	}
	if i, module := jobScript(command); i >= 0 && !module {
		script = command[i]
	}
	return python, script
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
