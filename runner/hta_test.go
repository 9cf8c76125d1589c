package runner

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// htaPythonEnv names a Python with HolisticTraceAnalysis (scripts/stack.sh
// hta; make matrix-stack sets it): the peer that reads the same traces.
const htaPythonEnv = "GCJITTER_HTA_PYTHON"

// htaDiffers are the traces where HTA's steps differ from gcjitter's, each
// with why (docs/trace.md has the table). The test fails when one of these
// stops differing as said, so the table stays true.
var htaDiffers = map[string]string{
	"hta-with_gpu_user_annotation/step_based_trace_2543932.json.gz":       "no-steps: no ProfilerStep: HTA steps by ProfilerStep only, gcjitter by Optimizer.step spans",
	"kineto-resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz": "no-steps: no ProfilerStep: HTA steps by ProfilerStep only, gcjitter by Optimizer.step spans",
	"made/torch2.15-python-gc/trace.json.gz":                              "no-steps: the loop marks no ProfilerStep (gcjitter steps by Optimizer.step)",
	"kineto-plugin-resnet50_num_workers_0/worker0.pt.trace.json.gz":       "error: a bare JSON array (a torch 1.8-era export): HTA reads only an object with traceEvents",
	"msprof-analyze-timeline_advice/trace_view.json":                      "error: a bare JSON array (torch_npu's trace_view.json): HTA reads only an object with traceEvents",
	"tracelens-mi300/resnet_act_checkpoint.json.gz":                       "error: HTA 0.5 fails to parse it (an int16 column overflows under pandas 3: 'Invalid value ... for dtype int16')",
}

type htaRow struct {
	File       string  `json:"file"`
	RawAll     htaRead `json:"all"`     // include_last_profiler_step
	RawDefault htaRead `json:"default"` // HTA's default: the last step left out
}

type htaRead struct {
	Steps   int       `json:"steps"`
	StepsUS []float64 `json:"steps_us"`
	Error   string    `json:"error"`
}

// TestHTAAgrees: HolisticTraceAnalysis and gcjitter import agree on the
// steps of every trace in the corpus and of the traces made here: the
// same count, and each step's duration within 2 µs (HTA rounds times down
// to whole µs), where HTA keeps the last step (include_last_profiler_step;
// its default leaves it out, and that is checked to be the only
// difference); the traces in htaDiffers differ as said.
func TestHTAAgrees(t *testing.T) {
	py := os.Getenv(htaPythonEnv)
	if py == "" {
		t.Skipf("$%s names no Python with HolisticTraceAnalysis (scripts/stack.sh hta; make matrix-stack)", htaPythonEnv)
	}
	files := map[string]string{} // name in the table -> path
	for _, e := range readCorpus(t) {
		files[e.File] = filepath.Join(corpusDir, e.File)
	}
	made, _ := filepath.Glob("testdata/made/*/trace.json.gz")
	for _, p := range made {
		files[strings.TrimPrefix(p, "testdata/")] = p
	}
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	out, err := exec.Command(py, append([]string{"../scripts/hta_steps.py"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("hta_steps.py: %v", err)
	}
	var rows []htaRow
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("hta_steps.py's output: %v", err)
	}
	if len(rows) != len(files) {
		t.Fatalf("HTA read %d traces, want %d", len(rows), len(files))
	}
	for _, r := range rows {
		name := r.File
		for n, p := range files {
			if p == r.File {
				name = n
			}
		}
		t.Run(name, func(t *testing.T) {
			tr, err := ReadTrace(r.File)
			if err != nil {
				t.Fatal(err)
			}
			ours := tr.Procs[0].Steps
			why, differs := htaDiffers[name]
			switch {
			case differs && strings.HasPrefix(why, "error: "):
				if r.RawAll.Error == "" {
					t.Errorf("HTA now reads it (%d steps): drop it from htaDiffers and docs/trace.md (%s)", r.RawAll.Steps, why)
				}
				return
			case differs && strings.HasPrefix(why, "no-steps: "):
				if r.RawAll.Error != "" || r.RawAll.Steps != 0 {
					t.Errorf("HTA now finds %d steps (error %q): drop it from htaDiffers and docs/trace.md (%s)", r.RawAll.Steps, r.RawAll.Error, why)
				}
				return
			case r.RawAll.Error != "":
				t.Fatalf("HTA cannot read it: %s", r.RawAll.Error)
			}
			if r.RawAll.Steps != len(ours) || len(r.RawAll.StepsUS) != len(ours) {
				t.Fatalf("HTA: %d steps (%d spans), gcjitter: %d", r.RawAll.Steps, len(r.RawAll.StepsUS), len(ours))
			}
			for k, s := range ours {
				if got := float64(s.end-s.start) / 1e3; math.Abs(got-r.RawAll.StepsUS[k]) > 2 {
					t.Errorf("step %d: gcjitter %.3f µs, HTA %.3f µs: beyond HTA's rounding", k, got, r.RawAll.StepsUS[k])
				}
			}
			// HTA's default leaves out the last step, and nothing else.
			if want := max(len(ours)-1, 1); len(ours) > 1 && r.RawDefault.Steps != want {
				t.Errorf("HTA's default read %d steps, want the %d before the last", r.RawDefault.Steps, want)
			}
		})
	}
}
