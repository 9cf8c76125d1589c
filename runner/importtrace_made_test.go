package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
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

// TestInferGenerationsOnTheMadeTrace: the torch 2.15 loop's tracer saw 4
// young collections (68-481 µs) and 2 full ones (110 and 149 ms) in the
// same run the profiler recorded without generations; the import's rule
// (a 40x gap between pauses: 229x here) labels each as the tracer did.
func TestInferGenerationsOnTheMadeTrace(t *testing.T) {
	dir := filepath.Join("testdata", "made", "torch2.15-python-gc")
	f, err := os.Open(filepath.Join(dir, "tracer.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := bench.ReadStream(f, "tracer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var truth []int
	for _, st := range s.Steps {
		for _, e := range st.GC {
			truth = append(truth, e.Gen)
		}
	}
	tr, err := ReadTrace(filepath.Join(dir, "trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, step := range tr.Procs[0].GC {
		for _, e := range step {
			got = append(got, e.Gen)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(truth) || tr.Full != 2 || tr.Young != 4 {
		t.Errorf("generations %v (full %d, young %d), the tracer's %v", got, tr.Full, tr.Young, truth)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "2 collections whose pauses stand 40x or more above the others' are counted as full (gen 2), the other 4 as young") {
		t.Errorf("notes %q", tr.Notes)
	}
}

// InferGenerations on pauses of known generation, shaped like the shipped
// baselines' (gen-1 pauses up to 20x gen-0's, full ones 74-635x): a young
// collection is never called full, whatever the spread; full ones 800x and
// more above a gen-0 pause (ascend's default: 635x its largest) are found;
// with no full collection none is claimed.
func TestInferGenerationsKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 4))
	ev := func(ns float64) bench.GCEvent { return bench.GCEvent{PauseNS: int64(ns), GenInferred: true} }
	found, far := 0, 0
	for trial := range 4000 {
		gen0 := 50e3 * math.Exp(0.5*rng.NormFloat64()) // a gen-0 pause's typical size
		var steps [][]bench.GCEvent
		var truth []int
		// No full collection; full ones far above; full ones near; no
		// full one and gen-1 pauses in a tight cluster 15-20x above
		// gen-0's (smoke's default: 19.8x), the gap a looser rule takes.
		regime := trial % 4
		fullLo, fullHi := []float64{0, 800, 60, 0}[regime], []float64{0, 3000, 400, 0}[regime]
		gen1Lo, gen0SD := 2.0, 0.4
		if regime == 3 {
			gen1Lo, gen0SD = 15, 0.1
		}
		for i := range 300 {
			var step []bench.GCEvent
			if i%2 == 0 {
				step, truth = append(step, ev(gen0*math.Exp(gen0SD*rng.NormFloat64()))), append(truth, 0)
			}
			if i%20 == 7 {
				step, truth = append(step, ev(gen0*(gen1Lo+(20-gen1Lo)*rng.Float64()))), append(truth, 1)
			}
			if fullHi > 0 && i%60 == 13 {
				step, truth = append(step, ev(gen0*(fullLo+(fullHi-fullLo)*rng.Float64()))), append(truth, 2)
			}
			steps = append(steps, step)
		}
		InferGenerations(steps)
		k, allFound := 0, true
		for _, step := range steps {
			for _, e := range step {
				if e.Gen == 2 && truth[k] != 2 {
					t.Fatalf("trial %d: a gen-%d collection of %d ns called full", trial, truth[k], e.PauseNS)
				}
				allFound = allFound && (e.Gen == 2) == (truth[k] == 2)
				k++
			}
		}
		if regime == 1 {
			far++
			if allFound {
				found++
			}
		}
	}
	if found < far*99/100 {
		t.Errorf("full collections 800x above gen-0 found exactly in %d of %d trials", found, far)
	}
}
