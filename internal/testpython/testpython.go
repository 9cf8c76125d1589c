// Package testpython gives tests the interpreter with torch and a way to
// run the real worker, so every package tests against real PyTorch.
package testpython

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/runner"
)

var (
	once    sync.Once
	torchPy string
	findErr error
)

// Torch returns an interpreter that imports torch. Without one the test
// fails in CI (which must have torch) and is skipped elsewhere.
func Torch(t testing.TB) string {
	t.Helper()
	once.Do(func() { torchPy, findErr = runner.FindPython(context.Background(), "", true) })
	if findErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs an interpreter with torch: %v", findErr)
		}
		t.Skipf("no interpreter with torch (run scripts/setup.sh): %v", findErr)
	}
	return torchPy
}

// RunWorker runs the embedded worker under python with cfg and the given
// PYTHONHASHSEED, and returns the result. Records go to t.TempDir().
func RunWorker(t testing.TB, python string, cfg bench.Config, hashSeed string) *runner.Result {
	t.Helper()
	dir := t.TempDir()
	script, err := bench.WriteWorker(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := &runner.Worker{
		Python:      python,
		Script:      script,
		Args:        cfg.Args(),
		Env:         append(os.Environ(), "PYTHONHASHSEED="+hashSeed, "OMP_NUM_THREADS=1"),
		RecordsPath: filepath.Join(dir, "records.jsonl"),
	}
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatalf("running worker: %v", err)
	}
	return res
}

// MustComplete fails the test unless the run completed.
func MustComplete(t testing.TB, res *runner.Result) *bench.Stream {
	t.Helper()
	if res.Failed() {
		t.Fatalf("worker failed: %s\nstderr:\n%s", res.Reason(), res.StderrTail)
	}
	return res.Stream
}
