package runner

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// npuTrace is a trace_view.json as torch_npu's profiler writes it with
// gc_detect_threshold (docs: shared/notes/trace-formats.md, from
// Ascend/pytorch's _trace_event_manager.py): a top-level array; metadata
// events; ProfilerStep#N spans with cat cpu_op; GC events named "GC" with
// cat "GC", tid the OS pid, ts a string of µs and dur a float; the CANN
// timeline appended after. Steps of 10 ms from t0; a 4.5 ms collection in
// step 3 and a 1.25 ms one in step 7.
func npuTrace() string {
	const t0 = 1699529622103750.123
	var ev []string
	ev = append(ev, `{"ph":"M","name":"process_name","pid":1234567,"tid":0,"args":{"name":"Python GC"}}`,
		`{"ph":"M","name":"thread_name","pid":1234567,"tid":4242,"args":{"name":"Python GC"}}`)
	for i := range 10 {
		ev = append(ev, fmt.Sprintf(`{"ph":"X","name":"ProfilerStep#%d","cat":"cpu_op","pid":1234567,"tid":4242,"ts":"%.3f","dur":10000.0,"args":{}}`, i+5, t0+float64(i)*10000))
	}
	ev = append(ev,
		fmt.Sprintf(`{"ph":"X","name":"GC","cat":"GC","pid":-1,"tid":4242,"ts":"%.3f","dur":4500.0,"args":{}}`, t0+3*10000+2000),
		fmt.Sprintf(`{"ph":"X","name":"GC","cat":"GC","pid":-1,"tid":4242,"ts":"%.3f","dur":1250.0,"args":{}}`, t0+7*10000+500),
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
		if tr.Format != "ProfilerStep spans" || len(tr.Steps) != 10 || len(tr.GC) != 2 {
			t.Fatalf("%s: %s, %d steps, %d collections; want ProfilerStep spans, 10, 2", path, tr.Format, len(tr.Steps), len(tr.GC))
		}
		s, err := bench.ReadStream(bytes.NewReader(tr.Stream(0)), path)
		if err != nil || len(s.Problems) > 0 || !s.Complete() {
			t.Fatalf("%s: the stream does not read back: %v %v", path, err, s.Problems)
		}
		pauses := map[int]int64{}
		for _, st := range s.Steps {
			if st.DurationNS != 10_000_000 {
				t.Errorf("step %d: %d ns, want 10 ms", st.Index, st.DurationNS)
			}
			for _, e := range st.GC {
				if !e.GenInferred || e.Gen != 2 || !e.InStep {
					t.Errorf("step %d: collection %+v not marked as without generation", st.Index, e)
				}
				pauses[st.Index] += e.PauseNS
			}
		}
		if pauses[3] != 4_500_000 || pauses[7] != 1_250_000 || len(pauses) != 2 {
			t.Errorf("%s: collections by step %v, want 4.5 ms in step 3 and 1.25 ms in step 7", path, pauses)
		}
	}
}

// A results directory from the trace: the run, its collections counted.
func TestImportTraceMakesARun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace_view.json")
	if err := os.WriteFile(path, []byte(npuTrace()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res")
	c, _, err := ImportTrace(out, "npu", path, 2, stats.SpikeRule{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.ID != "npu/imported/run-01" || c.Summary.Steps != 8 || c.Summary.Collections[2] != 2 {
		t.Errorf("run %s: %d steps, collections %v; want npu/imported/run-01, 8, two gen-2", c.Run.ID, c.Summary.Steps, c.Summary.Collections)
	}
}

func TestReadTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"empty.json":     ``,
		"object.json":    `{"traceEvents": 3}`,
		"nosteps.json":   `[{"ph":"X","name":"aten::mm","ts":1,"dur":2}]`,
		"badtime.json":   `[{"ph":"X","name":"ProfilerStep#1","ts":"soon","dur":2}]`,
		"truncated.json": `[{"ph":"X","name":"ProfilerStep#1","ts":1,"dur":2},`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		_, err := ReadTrace(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
}
