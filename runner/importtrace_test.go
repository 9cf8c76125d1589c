package runner

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// corpusDir holds real profiler traces from public repositories (see its
// README.md); expected.json is count_steps.py's independent count of them.
const corpusDir = "testdata/traces"

type corpusEntry struct {
	File      string `json:"file"`
	Format    string `json:"format"`
	Rank      *int   `json:"rank"`
	WorldSize *int   `json:"world_size"`
	Processes []struct {
		PID     string    `json:"pid"`
		StepsUS []float64 `json:"steps_us"`
	} `json:"processes"`
	GC int `json:"gc"`
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []corpusEntry
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 10 {
		t.Fatalf("the corpus has %d traces, want at least 10", len(want))
	}
	return want
}

// Every corpus trace reads with the steps, step times (within 1%), ranks
// and collections that count_steps.py counted, and imports alone as a run
// of all its steps: imports mark no warm-up.
func TestImportCorpus(t *testing.T) {
	for _, want := range readCorpus(t) {
		t.Run(want.File, func(t *testing.T) {
			path := filepath.Join(corpusDir, want.File)
			tr, err := ReadTrace(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(tr.Format, want.Format) {
				t.Errorf("steps from %s, want %s", tr.Format, want.Format)
			}
			if len(tr.Procs) != len(want.Processes) {
				t.Fatalf("%d processes, want %d", len(tr.Procs), len(want.Processes))
			}
			for i, p := range tr.Procs {
				wp := want.Processes[i]
				if p.PID != wp.PID || len(p.Steps) != len(wp.StepsUS) {
					t.Fatalf("process %s: %d steps, want process %s, %d steps", p.PID, len(p.Steps), wp.PID, len(wp.StepsUS))
				}
				for k, s := range p.Steps {
					got, exp := float64(s.end-s.start)/1e3, wp.StepsUS[k]
					if math.Abs(got-exp) > 0.01*exp {
						t.Errorf("process %s step %d: %.3f µs, want %.3f µs within 1%%", p.PID, k, got, exp)
					}
				}
			}
			wantRank, wantWorld := -1, 0
			if want.Rank != nil {
				wantRank = *want.Rank
			}
			if want.WorldSize != nil {
				wantWorld = *want.WorldSize
			}
			if tr.Rank != wantRank || tr.WorldSize != wantWorld {
				t.Errorf("rank %d of %d, want %d of %d", tr.Rank, tr.WorldSize, wantRank, wantWorld)
			}
			if tr.Collections != want.GC {
				t.Errorf("%d collections, want %d", tr.Collections, want.GC)
			}
			npu := strings.Contains(strings.Join(tr.Notes, "\n"), "torch_npu")
			if isNPU := filepath.Base(path) == "trace_view.json"; npu != isNPU {
				t.Errorf("notes %q: mention torch_npu %v, want %v (only on torch_npu traces)", tr.Notes, npu, isNPU)
			}

			out := filepath.Join(t.TempDir(), "res")
			runs, err := ImportTraces(out, "c", []string{path}, ImportWarmup, stats.SpikeRule{}, "test")
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs, want 1", len(runs))
			}
			if runs[0].Summary.Steps != len(want.Processes[0].StepsUS) || runs[0].Run.Ranks != len(want.Processes) {
				t.Errorf("a run of %d steps and %d ranks; want %d steps and %d ranks",
					runs[0].Summary.Steps, runs[0].Run.Ranks, len(want.Processes[0].StepsUS), len(want.Processes))
			}
		})
	}
}

// Two ranks of one job, one trace each, are one run of two ranks in rank
// order, whatever order the files are given in; a trace of no rank given
// with them is a run of its own.
func TestImportRanksOfOneJob(t *testing.T) {
	r0 := filepath.Join(corpusDir, "hta-trace_filter/sampled_rank-0.json.gz")
	r1 := filepath.Join(corpusDir, "hta-trace_filter/sampled_rank-1.json.gz")
	other := filepath.Join(corpusDir, "msprof-analyze-timeline_advice/trace_view.json")
	out := filepath.Join(t.TempDir(), "res")
	runs, err := ImportTraces(out, "job", []string{r1, other, r0}, 0, stats.SpikeRule{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Run.Ranks != 2 || runs[0].Ranks.Ranks != 2 || runs[1].Run.Ranks != 1 || runs[1].Traces[0].Path != other {
		t.Fatalf("%d runs, the first of %d ranks; want a run of 2 ranks, then one of %s", len(runs), runs[0].Run.Ranks, other)
	}
	for k, want := range []string{"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"} {
		s := readStream(t, filepath.Join(out, runs[0].Run.RankRecords(k)))
		note := fmt.Sprintf("rank %d of this run: %s, process %s, the job's rank %d of 128 (distributedInfo)", k, want, []string{"4037", "4045"}[k], k)
		if s.Meta.Rank != k || s.Meta.WorldSize != 2 || !strings.Contains(strings.Join(s.Meta.Notes, "\n"), note) {
			t.Errorf("rank %d: meta rank %d of %d, notes %q; want a note %q", k, s.Meta.Rank, s.Meta.WorldSize, s.Meta.Notes, note)
		}
	}
}

// A trace merged from two processes' traces (as merging tools do: the
// events of both in one traceEvents) is one run whose ranks are the
// processes, each with its own steps.
func TestImportMergedTrace(t *testing.T) {
	var events []json.RawMessage
	for _, f := range []string{"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"} {
		zr, err := os.ReadFile(filepath.Join(corpusDir, "hta-trace_filter", f))
		if err != nil {
			t.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(zr))
		if err != nil {
			t.Fatal(err)
		}
		var tr struct{ TraceEvents []json.RawMessage }
		if err := json.NewDecoder(r).Decode(&tr); err != nil {
			t.Fatal(err)
		}
		events = append(events, tr.TraceEvents...)
	}
	// A collection as Kineto records one (torch 2.9+), 1 ms into the
	// first step of the second process: it belongs to that process alone.
	first := math.Inf(1)
	for _, raw := range events {
		var ev struct {
			Name string
			PID  json.RawMessage
			TS   float64
		}
		if json.Unmarshal(raw, &ev) == nil && profilerStep.MatchString(ev.Name) && string(ev.PID) == "4045" {
			first = min(first, ev.TS)
		}
	}
	events = append(events, json.RawMessage(fmt.Sprintf(`{"ph":"X","cat":"python_function","name":"Python GC","pid":4045,"tid":4045,"ts":%f,"dur":2000}`, first+1000)))
	data, _ := json.Marshal(map[string]any{"schemaVersion": 1, "traceEvents": events})
	path := filepath.Join(t.TempDir(), "merged.json")
	os.WriteFile(path, data, 0o644)
	out := filepath.Join(t.TempDir(), "res")
	runs, err := ImportTraces(out, "merged", []string{path}, 0, stats.SpikeRule{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Run.Ranks != 2 {
		t.Fatalf("%d runs, the first of %d ranks; want one run of 2 ranks", len(runs), runs[0].Run.Ranks)
	}
	want := map[string][]float64{}
	for _, e := range readCorpus(t) {
		if strings.HasPrefix(e.File, "hta-trace_filter/") {
			want[e.Processes[0].PID] = e.Processes[0].StepsUS
		}
	}
	for k, pid := range []string{"4037", "4045"} {
		s := readStream(t, filepath.Join(out, runs[0].Run.RankRecords(k)))
		if len(s.Steps) != len(want[pid]) {
			t.Fatalf("rank %d: %d steps, want process %s's %d", k, len(s.Steps), pid, len(want[pid]))
		}
		if gc := s.Steps[0].GC; (k == 1) != (len(gc) == 1 && gc[0].PauseNS == 2_000_000 && gc[0].InStep) || len(s.Steps[1].GC) > 0 {
			t.Errorf("rank %d: collections %+v, want one of 2 ms in step 0 of rank 1 only", k, s.Steps[0].GC)
		}
		for i, st := range s.Steps {
			if exp := want[pid][i] * 1e3; math.Abs(float64(st.DurationNS)-exp) > 0.01*exp {
				t.Errorf("rank %d step %d: %d ns, want process %s's %.0f ns", k, i, st.DurationNS, pid, exp)
			}
		}
	}
}

func readStream(t *testing.T, path string) *bench.Stream {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := bench.ReadStream(f, path)
	if err != nil || len(s.Problems) > 0 || !s.Complete() {
		t.Fatalf("%s: %v %v", path, err, s.Problems)
	}
	return s
}

// npuTrace is a trace_view.json as torch_npu's profiler writes it with
// gc_detect_threshold (docs: shared/notes/trace-formats.md, from
// Ascend/pytorch's _trace_event_manager.py): a top-level array; metadata
// events; ProfilerStep#N spans with cat cpu_op; GC events named "GC" with
// cat "GC", tid the OS pid, ts a string of µs and dur a float; the CANN
// timeline appended after. Steps of 10 ms every 12 ms from t0; a 4.5 ms
// collection in step 3, a 1.25 ms one in step 7, a 1.5 ms one in the gap
// before step 5, one before the first step and one after the last.
func npuTrace() string {
	const t0 = 1699529622103750.123
	var ev []string
	ev = append(ev, `{"ph":"M","name":"process_name","pid":1234567,"tid":0,"args":{"name":"Python GC"}}`,
		`{"ph":"M","name":"thread_name","pid":1234567,"tid":4242,"args":{"name":"Python GC"}}`)
	for i := range 10 {
		ev = append(ev, fmt.Sprintf(`{"ph":"X","name":"ProfilerStep#%d","cat":"cpu_op","pid":1234567,"tid":4242,"ts":"%.3f","dur":10000.0,"args":{}}`, i+5, t0+float64(i)*12000))
	}
	gc := func(at, dur float64) string {
		return fmt.Sprintf(`{"ph":"X","name":"GC","cat":"GC","pid":-1,"tid":4242,"ts":"%.3f","dur":%.1f,"args":{}}`, t0+at, dur)
	}
	ev = append(ev, gc(3*12000+2000, 4500), gc(7*12000+500, 1250), gc(4*12000+10500, 1500), gc(-3000, 800), gc(10*12000, 900),
		fmt.Sprintf(`{"ph":"X","name":"aclnnMatmul","cat":"HostToDevice","pid":"NPU 0","tid":"Stream 2","ts":"%.3f","dur":12.5,"args":{}}`, t0+100))
	return "[\n" + strings.Join(ev, ",\n") + "\n]\n"
}

func TestReadTorchNPUTrace(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "trace_view.json")
	if err := os.WriteFile(plain, []byte(npuTrace()), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"schemaVersion":1,"displayTimeUnit":"ms","traceEvents":` + npuTrace() + `,"traceName":"x"}`))
	w.Close()
	zipped := filepath.Join(dir, "kineto.pt.trace.json.gz")
	if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, zipped} {
		tr, err := ReadTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Format != "ProfilerStep spans" || tr.Steps() != 10 || tr.Collections != 5 || tr.Outside != 2 || tr.Between() != 1 {
			t.Fatalf("%s: %s, %d steps, %d collections (%d outside, %d between); want ProfilerStep spans, 10, 5 (2, 1)", path,
				tr.Format, tr.Steps(), tr.Collections, tr.Outside, tr.Between())
		}
		if notes := strings.Join(tr.Notes, "\n"); !strings.Contains(notes, "gc_detect_threshold") || !strings.Contains(notes, "2 collections") {
			t.Errorf("%s: notes %q, want the torch_npu threshold and the 2 collections left out", path, notes)
		}
		s, err := bench.ReadStream(bytes.NewReader(tr.Stream(tr.Procs[0], 0, 1, 0, nil)), path)
		if err != nil || len(s.Problems) > 0 || !s.Complete() {
			t.Fatalf("%s: the stream does not read back: %v %v", path, err, s.Problems)
		}
		type key struct {
			step int
			in   bool
		}
		pauses := map[key]int64{}
		for _, st := range s.Steps {
			if st.DurationNS != 10_000_000 {
				t.Errorf("step %d: %d ns, want 10 ms", st.Index, st.DurationNS)
			}
			for _, e := range st.GC {
				// 1.25-4.5 ms: no pause 20x above another's, so none is
				// called full (InferGenerations).
				if !e.GenInferred || e.Gen != 0 {
					t.Errorf("step %d: collection %+v not marked as without generation and young", st.Index, e)
				}
				pauses[key{st.Index, e.InStep}] += e.PauseNS
			}
		}
		want := map[key]int64{{3, true}: 4_500_000, {7, true}: 1_250_000, {5, false}: 1_500_000}
		if fmt.Sprint(pauses) != fmt.Sprint(want) {
			t.Errorf("%s: collections by step %v, want %v (in step 3 and 7, between steps 4 and 5)", path, pauses, want)
		}
	}
}

// A torch_npu trace is known by its content, not its name: renamed, the
// corpus's trace_view.json and a CPU-only one (no device timeline, no GC
// events: only its string timestamps say torch_npu) are still torch_npu's,
// and Kineto traces named trace_view.json (one with Python GC events) are
// not.
func TestTorchNPUKnownByContent(t *testing.T) {
	dir := t.TempDir()
	var cpuOnly []string
	for _, line := range strings.Split(npuTrace(), "\n") {
		line = strings.TrimSuffix(line, ",")
		if strings.HasPrefix(line, "{") && !strings.Contains(line, `"GC"`) && !strings.Contains(line, "aclnn") {
			cpuOnly = append(cpuOnly, line)
		}
	}
	write := func(sub, name string, b []byte) string {
		path := filepath.Join(dir, sub, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	copyOf := func(from, sub, name string) string {
		b, err := os.ReadFile(filepath.Join(corpusDir, from))
		if err != nil {
			t.Fatal(err)
		}
		return write(sub, name, b)
	}
	made, err := os.ReadFile("testdata/made/torch2.15-python-gc/trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want string
	}{
		{copyOf("msprof-analyze-timeline_advice/trace_view.json", "a", "rank0.json"), sourceNPU},
		{write("b", "worker0.pt.trace.json", []byte("["+strings.Join(cpuOnly, ",\n")+"]")), sourceNPU},
		{copyOf("kineto-tb_plugin-test/gpu_metrics_input.json", "c", "trace_view.json"), sourceKineto},
		{write("d", "trace_view.json", made), sourceKineto},
	} {
		tr, err := ReadTrace(c.path)
		if err != nil {
			t.Fatal(err)
		}
		npuNotes := strings.Contains(strings.Join(tr.Notes, "\n"), "torch_npu")
		if tr.Source != c.want || npuNotes != (c.want == sourceNPU) {
			t.Errorf("%s: read as %s's (notes %q), want %s's", c.path, tr.Source, tr.Notes, c.want)
		}
	}
}

// A results directory from the trace: the run, its collections counted,
// those between steps too.
func TestImportTraceMakesARun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace_view.json")
	if err := os.WriteFile(path, []byte(npuTrace()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res")
	runs, err := ImportTraces(out, "npu", []string{path}, 2, stats.SpikeRule{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	c := runs[0]
	// Pauses of 1.25-4.5 ms, no 20x gap: generation unknown, none full.
	if c.Run.ID != "npu/imported/run-01" || c.Summary.Steps != 8 || c.Summary.Collections != [3]int{3, 0, 0} {
		t.Errorf("run %s: %d steps, collections %v; want npu/imported/run-01, 8, three young (one between steps; no 20x gap calls one full)", c.Run.ID, c.Summary.Steps, c.Summary.Collections)
	}
}

// A trace with no more steps than -warmup is an error naming it, and
// nothing is written.
func TestImportTooFewSteps(t *testing.T) {
	path := filepath.Join(corpusDir, "hta-cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
	out := filepath.Join(t.TempDir(), "res")
	_, err := ImportTraces(out, "c", []string{path}, 1, stats.SpikeRule{}, "test")
	if err == nil || !strings.HasPrefix(err.Error(), path+": 1 steps in process 1074, not more than -warmup 1: nothing left to measure") {
		t.Errorf("error %v, want one naming %s and its 1 step", err, path)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want it absent", out, err)
	}
}

// truncatedGzip is a real trace cut in half, as a partial copy leaves it.
func truncatedGzip(t *testing.T, dir string) string {
	data, err := os.ReadFile(filepath.Join(corpusDir, "hta-nccl_parser_config/nccl_data.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cut.json.gz")
	os.WriteFile(path, data[:len(data)/2], 0o644)
	return path
}

// treeOf is every file under dir with its contents.
func treeOf(t *testing.T, dir string) map[string]string {
	tree := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			tree[p] = string(data)
		}
		return nil
	})
	return tree
}

// All or nothing: a truncated gzip, alone or after a good trace, leaves no
// results directory where there was none, and an existing one unchanged.
func TestImportAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(corpusDir, "hta-amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
	cut := truncatedGzip(t, dir)
	out := filepath.Join(dir, "res")
	for _, paths := range [][]string{{cut}, {good, cut}} {
		_, err := ImportTraces(out, "c", paths, 0, stats.SpikeRule{}, "test")
		if err == nil || err.Error() != cut+": truncated gzip: the file ends inside its compressed data (was it copied or written only in part?)" {
			t.Errorf("%v: error %v, want the truncated gzip named", paths, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: %s: %v, want it absent", paths, out, err)
		}
	}
	if _, err := ImportTraces(out, "c", []string{good}, 0, stats.SpikeRule{}, "test"); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, out)
	if _, err := ImportTraces(out, "c", []string{good, cut}, 0, stats.SpikeRule{}, "test"); err == nil {
		t.Fatal("no error")
	}
	if after := treeOf(t, out); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the results directory changed: %d files before, %d after", len(before), len(after))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".res.import-*")); len(left) > 0 {
		t.Errorf("scratch left behind: %v", left)
	}
	// The same import without the bad trace adds to it.
	runs, err := ImportTraces(out, "c", []string{good}, 0, stats.SpikeRule{}, "test")
	if err != nil || runs[0].Run.ID != "c/imported/run-02" {
		t.Errorf("run %v, error %v; want c/imported/run-02", runs, err)
	}
}

// Each bad input gets a message that names the file and says what it is,
// never a Go type or a scratch file.
func TestReadTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	i := 0
	for name, want := range map[string]string{
		"":                   "not a Chrome/Kineto trace (the file is empty)",
		`{"a": 1}`:           "not a Chrome/Kineto trace (a JSON object without traceEvents)",
		`{"traceEvents": 3}`: "not a Chrome/Kineto trace (traceEvents is not an array)",
		`3`:                  "not a Chrome/Kineto trace (a JSON number, want an array of events or an object with traceEvents)",
		`[1, 2]`:             "not a Chrome/Kineto trace (event 1 is a JSON number, not an object)",
		`[{"name": 5}]`:      `event 1: "name" is a JSON number`,
		`[{"ph":"X","name":"aten::mm","ts":1,"dur":2}]`:            "no steps: the trace has no host-side ProfilerStep#N spans",
		`[{"ph":"X","name":"ProfilerStep#1","ts":"soon","dur":2}]`: "event 1 (ProfilerStep#1): bad time \"soon\"",
		`[{"ph":"X","name":"ProfilerStep#1","ts":1,"dur":2},`:      "truncated JSON: the file ends inside the trace",
		`[{"ph":"X","name":"ProfilerStep#1","ts":1,"dur":2}} ]`:    "not valid JSON at byte 50",
		// Only the device-side copies: no steps, not a negative duration.
		`[{"ph":"X","cat":"gpu_user_annotation","name":"Optimizer.step#SGD.step","ts":10,"dur":90},{"ph":"X","cat":"gpu_user_annotation","name":"Optimizer.step#SGD.step","ts":50,"dur":5}]`: "no steps",
	} {
		i++
		path := filepath.Join(dir, fmt.Sprintf("t%d.json", i))
		os.WriteFile(path, []byte(name), 0o644)
		_, err := ReadTrace(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": "+want) || strings.Contains(err.Error(), "runner.") {
			t.Errorf("%s: error %v, want %q", name, err, path+": "+want)
		}
	}
	cut := truncatedGzip(t, dir)
	if _, err := ReadTrace(cut); err == nil || !strings.HasPrefix(err.Error(), cut+": truncated gzip") {
		t.Errorf("error %v, want a truncated gzip named", err)
	}
	if _, err := ReadTrace(filepath.Join(dir, "absent.json")); err == nil || err.Error() != filepath.Join(dir, "absent.json")+": no such file" {
		t.Errorf("error %v, want the missing file named", err)
	}
}

// stageDir puts its work in place only when it all succeeds: a failure
// halfway leaves an absent directory absent and an existing one as it was.
func TestStageDirAllOrNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "res")
	fail := func(stage, _ string) error {
		os.WriteFile(filepath.Join(stage, "half"), []byte("written before the failure"), 0o644)
		return fmt.Errorf("failed halfway")
	}
	if err := stageDir(dir, fail); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want it absent", dir, err)
	}
	os.MkdirAll(filepath.Join(dir, "runs"), 0o755)
	os.WriteFile(filepath.Join(dir, "runs", "kept"), []byte("measured"), 0o644)
	before := treeOf(t, dir)
	if err := stageDir(dir, fail); err == nil {
		t.Fatal("no error")
	}
	if after := treeOf(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the directory changed: %v, was %v", after, before)
	}
	if err := stageDir(dir, func(stage, _ string) error { return os.WriteFile(filepath.Join(stage, "new"), nil, 0o644) }); err != nil {
		t.Fatal(err)
	}
	if after := treeOf(t, dir); len(after) != 2 || after[filepath.Join(dir, "runs", "kept")] != "measured" {
		t.Errorf("after a success: %v, want the kept file and the new one", after)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".res.import-*")); len(left) > 0 {
		t.Errorf("scratch left behind: %v", left)
	}
}
