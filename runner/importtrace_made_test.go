package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// TestImportRealPythonGC: a torch 2.15 profiler trace with real Python GC
// events (testdata/made/torch2.15-python-gc, made by loop.py under
// gcjitter trace at once) imports with the tracer's steps and, step by
// step, the tracer's collections, each pause within 50 µs + 0.1%; the trace has
// no generation, and the import says so rather than guessing.
func TestImportRealPythonGC(t *testing.T) {
	dir := filepath.Join("testdata", "made", "torch2.15-python-gc")
	f, err := os.Open(filepath.Join(dir, "tracer.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var traced [][]bench.GCEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type string          `json:"type"`
			GC   json.RawMessage `json:"gc"` // the header's is the collector's settings
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Type != "step" {
			continue
		}
		var gcs []bench.GCEvent
		if err := json.Unmarshal(rec.GC, &gcs); err != nil {
			t.Fatal(err)
		}
		traced = append(traced, gcs)
	}
	tr, err := ReadTrace(filepath.Join(dir, "trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Procs) != 1 {
		t.Fatalf("%d processes, want 1", len(tr.Procs))
	}
	p := tr.Procs[0]
	if len(p.Steps) != len(traced) {
		t.Fatalf("%d steps imported, the tracer recorded %d", len(p.Steps), len(traced))
	}
	total := 0
	for i := range traced {
		if len(p.GC[i]) != len(traced[i]) {
			t.Errorf("step %d: %d collections imported, the tracer saw %d", i, len(p.GC[i]), len(traced[i]))
			continue
		}
		for k, g := range p.GC[i] {
			total++
			// Each side times the collection from its own gc.callbacks entry,
			// one after the other: tens of µs apart at most.
			if d := g.PauseNS - traced[i][k].PauseNS; max(d, -d) > 50_000+traced[i][k].PauseNS/1000 {
				t.Errorf("step %d collection %d: pause %d ns imported, %d ns traced", i, k, g.PauseNS, traced[i][k].PauseNS)
			}
			if !g.GenInferred {
				t.Errorf("step %d collection %d: a generation the trace does not hold was not marked inferred", i, k)
			}
		}
	}
	if total < 5 {
		t.Errorf("%d collections compared, want the fixture's 6", total)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "no generation") {
		t.Errorf("notes %q do not say the trace records no generation", tr.Notes)
	}
}
