// Package bench is the measuring end of gcjitter: the Python step worker
// (the gcjitter_worker package, embedded in the binary and shipped as one
// zipapp) and the Go types of the record stream it
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
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
)

// WorkerSource is the program every run executes: the worker's package
// (gcjitter_worker/, embedded) as one zipapp that `python FILE` runs.
// Its bytes depend on the sources only (see buildWorker), so its hash
// names the worker.
var WorkerSource = mustBuildWorker()

//go:embed gcjitter_worker/*.py
var workerFS embed.FS

// workerPackage is the package's directory in workerFS and in the archive.
const workerPackage = "gcjitter_worker"

func mustBuildWorker() []byte {
	b, err := buildWorker(workerFS)
	if err != nil {
		panic("bench: building the embedded worker: " + err.Error()) // the sources are compiled in
	}
	return b
}

// zipTime is every archive entry's modification time: fixed, so that two
// builds of the same sources are the same bytes (the earliest a zip's DOS
// time can say).
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// buildWorker makes the zipapp from fsys's gcjitter_worker/*.py: the
// package's __main__.py also at the archive's root (what `python
// FILE.pyz` runs), then the package's files in name order, stored
// uncompressed (no compressor's version can change the bytes) with
// zipTime. Python's zipimport reads it from 3.8 on; tracebacks name
// FILE.pyz/gcjitter_worker/MODULE.py and its line.
func buildWorker(fsys fs.FS) ([]byte, error) {
	names, err := fs.Glob(fsys, workerPackage+"/*.py")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	main, err := fs.ReadFile(fsys, workerPackage+"/__main__.py")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: zipTime})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := add("__main__.py", main); err != nil {
		return nil, err
	}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := add(name, data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WorkerName is the file name the worker is written under: content-addressed,
// so results can name the exact worker that produced them and two versions of
// gcjitter sharing a directory never overwrite each other's worker.
func WorkerName() string {
	return workerName(WorkerSource)
}

func workerName(src []byte) string {
	sum := sha256.Sum256(src)
	return "gcjitter-worker-" + hex.EncodeToString(sum[:6]) + ".pyz"
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
// gcjitter_trace_stream.py and gcjitter_trace_check.py, and the worker's
// package as gcjitter_worker/ (whose recorder and stream the tracer uses).
func WriteTracer(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, workerPackage), 0o755); err != nil {
		return fmt.Errorf("writing the tracer: %w", err)
	}
	files := map[string][]byte{"sitecustomize.py": traceSiteSource, "gcjitter_trace.py": tracerSource,
		"gcjitter_trace_stream.py": tracerStreamSource, "gcjitter_trace_check.py": tracerCheckSource}
	names, err := fs.Glob(workerFS, workerPackage+"/*.py")
	if err != nil {
		return fmt.Errorf("writing the tracer: %w", err)
	}
	for _, name := range names {
		if files[name], err = fs.ReadFile(workerFS, name); err != nil {
			return fmt.Errorf("writing the tracer: %w", err)
		}
	}
	for name, src := range files {
		if err := atomicfile.Write(filepath.Join(dir, filepath.FromSlash(name)), src, 0o644); err != nil {
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
