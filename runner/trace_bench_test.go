package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/runner"
)

// BenchmarkTracer measures what gcjitter trace adds to a traced job, the
// way BenchmarkHarness measures the worker: a script that marks 200,000
// empty steps (gcjitter_step() in a bare loop, collector off), traced.
// (go test -run '^$' -bench Tracer -benchtime 1x ./runner; BENCHMARKS.md.)
//
//	empty-step-ns   what the tracer records for a step that does nothing:
//	                an upper bound of its cost inside a step (the call, two
//	                clock reads)
//	loop-extra-ns   all its per-step work (the record formatted and
//	                written, outside the step) beyond a bare loop
//	bare-loop-ns    one iteration of the bare loop
//
// A collection costs what the worker's recorder adds to one (the same
// class): BenchmarkHarness's gc-event-extra-ns.
func BenchmarkTracer(b *testing.B) {
	py := testpython.Torch(b)
	dir := b.TempDir()
	script := filepath.Join(dir, "empty.py")
	os.WriteFile(script, []byte(`import gc, json, sys, time
gc.disable()
n = 200000
pc = time.perf_counter_ns
t0 = pc()
for _ in range(n):
    pass
bare = (pc() - t0) / n
t0 = pc()
for _ in range(n):
    gcjitter_step()
wall = (pc() - t0) / n
sys.stdout.write(json.dumps({"bare_loop_ns": bare, "wall_per_step_ns": wall}))
`), 0o644)
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "res")
		var stdout bytes.Buffer
		tr, err := runner.Trace(context.Background(), runner.TraceOptions{Out: out, Case: "empty", Command: []string{py, script},
			Stdout: &stdout, Stderr: os.Stderr, Tool: "bench"})
		if err != nil || tr.ExitCode != 0 || len(tr.Runs) != 1 {
			b.Fatalf("trace: %v, exit %d", err, tr.ExitCode)
		}
		var bare struct {
			BareLoopNS    float64 `json:"bare_loop_ns"`
			WallPerStepNS float64 `json:"wall_per_step_ns"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &bare); err != nil {
			b.Fatalf("%v: %s", err, stdout.Bytes())
		}
		f, err := os.Open(filepath.Join(out, tr.Runs[0].Run.Records))
		if err != nil {
			b.Fatal(err)
		}
		s, err := bench.ReadStream(f, f.Name())
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		var sum float64
		steps := s.Measured()
		for _, st := range steps {
			sum += float64(st.DurationNS)
		}
		b.ReportMetric(sum/float64(len(steps)), "empty-step-ns")
		b.ReportMetric(bare.WallPerStepNS-bare.BareLoopNS, "loop-extra-ns")
		b.ReportMetric(bare.BareLoopNS, "bare-loop-ns")
	}
}
