// Package bench is the measuring end of gcjitter: the Python step worker
// (worker.py, embedded in the binary) and the Go types of the record stream it
// writes.
//
// A worker is one training process. It builds a model (mlp, gpt, resnet, or
// none for hosts without torch), a long-lived heap, and each step makes seeded
// cyclic garbage in plain Python objects, applies one GC policy and waits for
// the device. Every step and every collection inside it is written as one JSON
// line on a channel of its own (an inherited file descriptor or a file), never
// on the workload's stdout or stderr:
//
//	{"type":"meta","schema":1,...}     interpreter, torch, device, GC state, policy, seed
//	{"type":"step","i":0,"ns":...}     one per step, flushed as it ends
//	{"type":"end",...}                 per-generation GC totals from gc.get_stats()
//	{"type":"error","kind":...}        instead of end, when the worker fails
//
// [Reader] parses such a stream, checks the schema version and the order of
// records, and reports bad lines as [*SyntaxError] values naming file and
// line, going on with the next line, as x/perf's benchfmt does. [Config] is
// the Go view of the worker's flags.
//
// The worker observes collections through gc.callbacks writing into
// preallocated arrays, so recording allocates no tracked object and does not
// move the collection schedule it observes: a seeded run collects exactly as
// often with the recorder on as off, which the tests check.
package bench

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
)

// WorkerSource is worker.py, the program every run executes.
//
//go:embed worker.py
var WorkerSource []byte

// WorkerName is the file name the worker is written under: content-addressed,
// so results can name the exact worker that produced them and two versions of
// gcjitter sharing a directory never overwrite each other's worker.
func WorkerName() string {
	sum := sha256.Sum256(WorkerSource)
	return "gcjitter-worker-" + hex.EncodeToString(sum[:6]) + ".py"
}

// WriteWorker writes the embedded worker into dir (atomically, once) and
// returns its path.
func WriteWorker(dir string) (string, error) {
	path := filepath.Join(dir, WorkerName())
	if b, err := os.ReadFile(path); err == nil && string(b) == string(WorkerSource) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("writing the worker: %w", err)
	}
	if err := atomicfile.Write(path, WorkerSource, 0o644); err != nil {
		return "", fmt.Errorf("writing the worker: %w", err)
	}
	return path, nil
}

// The tracer of gcjitter trace: its modules (the hooks, a process's
// stream, the check of -step-fn before the job starts) and the
// sitecustomize that starts it in every Python process of a traced job.
var (
	//go:embed tracer.py
	tracerSource []byte
	//go:embed tracer_stream.py
	tracerStreamSource []byte
	//go:embed tracer_check.py
	tracerCheckSource []byte
	//go:embed trace_site.py
	traceSiteSource []byte
)

// WriteTracer writes into dir what a traced job's PYTHONPATH needs first:
// sitecustomize.py, the tracer's modules as gcjitter_trace.py,
// gcjitter_trace_stream.py and gcjitter_trace_check.py, and the worker as
// gcjitter_worker.py (whose recorder and stream the tracer uses).
func WriteTracer(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the tracer: %w", err)
	}
	for name, src := range map[string][]byte{"sitecustomize.py": traceSiteSource, "gcjitter_trace.py": tracerSource,
		"gcjitter_trace_stream.py": tracerStreamSource, "gcjitter_trace_check.py": tracerCheckSource, "gcjitter_worker.py": WorkerSource} {
		if err := atomicfile.Write(filepath.Join(dir, name), src, 0o644); err != nil {
			return fmt.Errorf("writing the tracer: %w", err)
		}
	}
	return nil
}

// CacheDir is where the embedded worker is written for the interpreter to
// run: the user's cache, or the temporary directory where there is none.
func CacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "gcjitter")
	}
	return filepath.Join(os.TempDir(), "gcjitter")
}
