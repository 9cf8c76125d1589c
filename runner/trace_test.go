package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
)

// interruptible is a job that marks steps, says when it has 20, and
// handles Ctrl-C its own way (argv[2]): "finish" goes on working for a
// second (longer than the test's grace) and exits 0, the way a training
// script goes on to its evaluation; "ignore" ignores further SIGINTs and
// runs until it is terminated.
const interruptible = `import signal, sys, time
n = 0
try:
    while True:
        gcjitter_step()
        n += 1
        if n == 20:
            open(sys.argv[1], "w").close()
        time.sleep(0.002)
except KeyboardInterrupt:
    if sys.argv[2] == "ignore":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            gcjitter_step()
            time.sleep(0.002)
    end = time.time() + 1.0
    while time.time() < end:
        gcjitter_step()
        time.sleep(0.002)
    print("finished after the interrupt")
`

// traceInterrupted traces the interruptible job as gcjitter's main would
// (its context cancelled by SIGINT), sends this process SIGINT once the
// job has steps, and the second one after a pause when twice is set.
func traceInterrupted(t *testing.T, mode string, twice bool) (*Traced, string) {
	t.Helper()
	py, err := FindPython(context.Background(), "", false)
	if err != nil {
		t.Skip(err)
	}
	defer func(g time.Duration) { traceGrace = g }(traceGrace)
	traceGrace = 200 * time.Millisecond
	dir := t.TempDir()
	script, started := filepath.Join(dir, "job.py"), filepath.Join(dir, "started")
	os.WriteFile(script, []byte(interruptible), 0o644)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The job's stderr and gcjitter's lines share one writer, as they share
	// the terminal.
	var stdout, stderr lockedBuffer
	type result struct {
		tr  *Traced
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := Trace(ctx, TraceOptions{Out: filepath.Join(dir, "out"), Case: "job", Command: []string{py, script, started, mode},
			Stdout: &stdout, Stderr: &stderr})
		done <- result{tr, err}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for _, err := os.Stat(started); err != nil; _, err = os.Stat(started) {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	if twice {
		time.Sleep(500 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Trace: %v\n%s", r.err, stderr.String())
		}
		return r.tr, stdout.String() + stderr.String()
	case <-time.After(60 * time.Second):
		t.Fatalf("the traced job did not end: %s", stderr.String())
	}
	return nil, ""
}

// A job that handles Ctrl-C and goes on is waited for as long as it runs
// (here 5 graces): no SIGTERM after the grace, its exit 0 and every step.
func TestTraceWaitsForAJobThatHandlesInterrupt(t *testing.T) {
	tr, out := traceInterrupted(t, "finish", false)
	if tr.ExitCode != 0 || !strings.Contains(out, "finished after the interrupt") {
		t.Fatalf("exit %d, want 0 and the job's last line:\n%s", tr.ExitCode, out)
	}
	if len(tr.Runs) != 1 || tr.Runs[0].Run.Steps < 60 {
		t.Fatalf("want one run with the steps after the interrupt too, got %d runs %+v", len(tr.Runs), tr.Runs)
	}
}

// A second interrupt still stops a job that ignores the first: SIGTERM,
// said on stderr, and the steps so far kept.
func TestTraceSecondInterruptTerminates(t *testing.T) {
	tr, out := traceInterrupted(t, "ignore", true)
	if tr.ExitCode != 128+int(syscall.SIGTERM) || !strings.Contains(out, "interrupted again: SIGTERM to the job") {
		t.Fatalf("exit %d, want %d after the second interrupt:\n%s", tr.ExitCode, 128+int(syscall.SIGTERM), out)
	}
	if len(tr.Runs) != 1 {
		t.Fatalf("want the steps so far as a run, got %d runs", len(tr.Runs))
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The tracer reads the environment Trace sets under the same names.
func TestTracerEnvAgrees(t *testing.T) {
	dir := t.TempDir()
	if err := bench.WriteTracer(dir); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "gcjitter_trace.py"))
	if err != nil {
		t.Fatal(err)
	}
	for py, goName := range map[string]string{"DIR_ENV": TraceDirEnv, "STEPS_ENV": TraceStepsEnv, "WARMUP_ENV": TraceWarmupEnv, "STEP_FN_ENV": TraceStepFnEnv, "POLICY_ENV": TracePolicyEnv} {
		if want := fmt.Sprintf("%s = %q\n", py, goName); !strings.Contains(string(src), want) {
			t.Errorf("tracer.py lacks %q", want)
		}
	}
}

// Default case names and job identities, from the command alone (the
// txtar runs the refusals): the interpreter or launcher is not the job.
func TestTraceCaseNameDefaults(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		command []string
		want    string
	}{
		{[]string{"python3", "train.py", "--epochs", "1"}, "train"},
		{[]string{"torchrun", "--nproc_per_node", "2", "examples/dcgan/main.py"}, "dcgan-main"},
		{[]string{"python3", "-m", "pkg.train", "-x"}, "train"},
		{[]string{"python3", "-m", "__main__"}, "__main__"},
		{[]string{"python3", "-c", "print(1)"}, cases.TraceVariant},
	} {
		got, err := TraceCaseName(out, "", c.command)
		if err != nil || got != c.want {
			t.Errorf("TraceCaseName(%q) = %q, %v; want %q", c.command, got, err, c.want)
		}
	}
	if a, b := JobIdentity([]string{"python3", "train.py", "-x"}), JobIdentity([]string{"/usr/bin/python3", "./train.py", "-x"}); a != b {
		t.Errorf("one script, two interpreters: %q and %q", a, b)
	}
	if a, b := JobIdentity([]string{"python3", "a/main.py"}), JobIdentity([]string{"python3", "b/main.py"}); a == b {
		t.Errorf("two scripts, one identity %q", a)
	}
}
