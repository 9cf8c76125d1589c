package runner_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/runner"
)

func longRun(t *testing.T) (*runner.Worker, string) {
	py := testpython.Torch(t)
	dir := t.TempDir()
	script, err := bench.WriteWorker(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := bench.DefaultConfig()
	cfg.Model, cfg.Device, cfg.Hidden, cfg.Steps, cfg.Warmup = "mlp", "cpu", 32, 100_000, 0
	path := filepath.Join(dir, "records.jsonl")
	return &runner.Worker{Python: py, Script: script, Args: cfg.Args(), RecordsPath: path, Grace: time.Second}, path
}

// reread parses the records file from disk, as compare and report will.
func reread(t *testing.T, path string) *bench.Stream {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := bench.ReadStream(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKilledWorkerKeepsEveryReceivedStep(t *testing.T) {
	w, path := longRun(t)
	defer checkGoroutines(t)()
	var pid, seen int
	w.OnRecord = func(r bench.Record) {
		switch r := r.(type) {
		case *bench.Meta:
			pid = r.PID
		case *bench.Step:
			seen++
			if seen == 20 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed() || res.Signal != "SIGKILL" {
		t.Fatalf("want a failed run killed by SIGKILL, got signal %q exit %d", res.Signal, res.ExitCode)
	}
	if !strings.Contains(res.Reason(), "killed by SIGKILL") {
		t.Errorf("reason %q does not say the worker was killed", res.Reason())
	}
	disk := reread(t, path)
	if len(disk.Steps) < 20 || len(disk.Steps) != len(res.Stream.Steps) {
		t.Errorf("kept %d steps on disk, %d in memory; want the same, at least 20", len(disk.Steps), len(res.Stream.Steps))
	}
	if len(disk.Problems) > 0 {
		t.Errorf("a killed worker left bad lines: %v", disk.Problems)
	}
}

func TestCancelStopsTheProcessGroup(t *testing.T) {
	w, path := longRun(t)
	defer checkGoroutines(t)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid int
	w.OnRecord = func(r bench.Record) {
		switch r := r.(type) {
		case *bench.Meta:
			pid = r.PID
		case *bench.Step:
			if r.Index == 5 {
				cancel()
			}
		}
	}
	start := time.Now()
	res, err := w.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("cancel took %v", time.Since(start))
	}
	if !res.Failed() {
		t.Fatal("a cancelled run reads as complete")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("worker %d still exists after Run returned: %v", pid, err)
	}
	if got := len(reread(t, path).Steps); got < 6 {
		t.Errorf("%d steps kept, want at least 6", got)
	}
}

func TestFindPythonExplainsWhatItTried(t *testing.T) {
	_, err := runner.FindPython(context.Background(), "/nonexistent/python3", true)
	var npe *runner.NoPythonError
	if !errors.As(err, &npe) {
		t.Fatalf("want *NoPythonError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"/nonexistent/python3: not found", "imports torch", "scripts/setup.sh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	py := testpython.Torch(t)
	t.Setenv(runner.PythonEnv, py)
	got, err := runner.FindPython(context.Background(), "", true)
	if err != nil || got != py {
		t.Errorf("with $%s=%s: got %q, %v", runner.PythonEnv, py, got, err)
	}
}

func TestSilenceTimeoutStopsAHungWorker(t *testing.T) {
	py := testpython.Torch(t)
	dir := t.TempDir()
	// A "worker" that writes its meta record and then hangs.
	script := filepath.Join(dir, "hang.py")
	os.WriteFile(script, []byte(`import os, sys, time
os.write(3, b'{"type":"meta","schema":1}\n')
time.sleep(600)
`), 0o644)
	w := &runner.Worker{Python: py, Script: script, RecordsPath: filepath.Join(dir, "r.jsonl"),
		Startup: time.Minute, Silence: 2 * time.Second, Grace: time.Second}
	defer checkGoroutines(t)()
	start := time.Now()
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var te *runner.TimeoutError
	if !errors.As(res.Stopped, &te) || te.Which != "silence" {
		t.Fatalf("stopped by %v, want the silence timeout", res.Stopped)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v to stop a worker with a 2s silence timeout", d)
	}
	if !strings.Contains(res.Reason(), "silence timeout") || res.Stream.Meta == nil {
		t.Errorf("reason %q, meta kept: %v", res.Reason(), res.Stream.Meta != nil)
	}
}

func TestStartupTimeout(t *testing.T) {
	py := testpython.Torch(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.py")
	os.WriteFile(script, []byte("import time\ntime.sleep(600)\n"), 0o644)
	w := &runner.Worker{Python: py, Script: script, RecordsPath: filepath.Join(dir, "r.jsonl"),
		Startup: time.Second, Silence: time.Minute, Grace: time.Second}
	defer checkGoroutines(t)()
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var te *runner.TimeoutError
	if !errors.As(res.Stopped, &te) || te.Which != "startup" {
		t.Fatalf("stopped by %v, want the start-up timeout", res.Stopped)
	}
}

// TestDiskFull: records go to a 256 KiB tmpfs that fills up. The run stops
// with an error naming the file and ENOSPC, the worker is stopped, and the
// records that fit are intact and readable.
func TestDiskFull(t *testing.T) {
	w, _ := longRun(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	w.RecordsPath = filepath.Join(mnt, "records.jsonl")
	defer checkGoroutines(t)()
	start := time.Now()
	res, err := w.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), w.RecordsPath) {
		t.Fatalf("want an ENOSPC error naming %s, got %v", w.RecordsPath, err)
	}
	if res == nil || res.Stopped == nil || len(res.Stream.Steps) == 0 {
		t.Fatalf("want a stopped run with the steps read so far, got %+v", res)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the worker ran on for %v after the disk filled", d)
	}
	disk := reread(t, w.RecordsPath)
	if len(disk.Steps) == 0 {
		t.Error("no step survived on disk")
	}
	// Only the last line may be cut short by the full disk.
	if len(disk.Problems) > 1 {
		t.Errorf("%d bad lines on disk: %v", len(disk.Problems), disk.Problems)
	}
}
