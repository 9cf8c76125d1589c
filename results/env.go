package results

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
)

// Env is the environment key: what the GC schedule depends on (the
// interpreter, the frameworks, the device, the worker program). It is the
// one description of an environment: baselines store it, runs record its
// parts (RunMeta), and compare, gate and golden judge "environment
// changed" by Changes alone.
type Env struct {
	Python       string `json:"python"`
	Build        string `json:"python_build"`
	FreeThreaded bool   `json:"free_threaded,omitempty"`
	Torch        string `json:"torch,omitempty"`
	TorchNPU     string `json:"torch_npu,omitempty"`
	CUDA         string `json:"cuda,omitempty"`
	CANN         string `json:"cann,omitempty"`
	Device       string `json:"device"`
	DevName      string `json:"device_name,omitempty"`
	// Worker is the worker program's content-addressed name: its
	// allocations are part of the schedule, so a new worker is a new
	// environment, not a regression.
	Worker string `json:"worker,omitempty"`
	// GCThresholds are the collector's thresholds once the policy was
	// applied ("700,10,10"): CPython 3.13 raised gen-0's to 2000, which
	// moves every schedule. Changes names a change only where both sides
	// recorded them (baselines made before they were kept did not).
	GCThresholds string `json:"gc_thresholds,omitempty"`
	// Start is how the runs' processes started, "warm" or "cold"
	// (bench.Meta.Start). Not part of the key: docs/worker.md's proof
	// shows both make the same schedule and census, with p50 and spread
	// within noise, so Changes leaves it out and compare only notes it.
	Start string `json:"start,omitempty"`
}

func thresholdsOf(t []int) string {
	parts := make([]string, len(t))
	for i, x := range t {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// EnvOf is the environment a worker's meta record describes, with the
// worker program that ran (its path or name).
func EnvOf(m *bench.Meta, worker string) Env {
	return Env{Python: m.Python.Version, Build: m.Python.Build, FreeThreaded: m.Python.FreeThreaded,
		Torch: m.Torch, TorchNPU: m.TorchNPU, CUDA: m.CUDA, CANN: m.CANN,
		Device: m.Device.Kind, DevName: m.Device.Name, Worker: workerName(worker), GCThresholds: thresholdsOf(m.GC.Thresholds), Start: m.Start}
}

// RunMetaOf is what the manifest keeps of a run's meta record.
func RunMetaOf(m *bench.Meta) *RunMeta {
	return &RunMeta{Python: m.Python.Version, Build: m.Python.Build, FreeThreaded: m.Python.FreeThreaded,
		Torch: m.Torch, TorchNPU: m.TorchNPU, CUDA: m.CUDA, CANN: m.CANN, Device: m.Device.Kind,
		DevName: m.Device.Name, Threads: m.Threads, Notes: m.Notes, GCThresholds: thresholdsOf(m.GC.Thresholds), Start: m.Start}
}

// Env is the environment a run recorded, with the worker program of its
// results directory.
func (r *RunMeta) Env(worker string) Env {
	return Env{Python: r.Python, Build: r.Build, FreeThreaded: r.FreeThreaded, Torch: r.Torch, TorchNPU: r.TorchNPU,
		CUDA: r.CUDA, CANN: r.CANN, Device: r.Device, DevName: r.DevName, Worker: workerName(worker), GCThresholds: r.GCThresholds, Start: r.Start}
}

func workerName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

// Key is the environment key in one line.
func (e Env) Key() string {
	py := "python " + e.Python + " (" + e.Build + ")"
	if e.FreeThreaded {
		py += " free-threaded"
	}
	parts := []string{py}
	for _, kv := range [][2]string{{"torch", e.Torch}, {"torch_npu", e.TorchNPU}, {"cuda", e.CUDA}, {"cann", e.CANN}, {"worker", e.Worker}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(append(parts, "device "+e.Device), ", ")
}

// Changes lists what differs between two environment keys, e.g.
// "torch 1.13.1 -> 2.4.0".
func (e Env) Changes(new Env) []string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"python", e.Python, new.Python}, {"python build", e.Build, new.Build},
		{"free-threaded", fmt.Sprint(e.FreeThreaded), fmt.Sprint(new.FreeThreaded)}, {"torch", e.Torch, new.Torch},
		{"torch_npu", e.TorchNPU, new.TorchNPU}, {"cuda", e.CUDA, new.CUDA}, {"cann", e.CANN, new.CANN},
		{"device", e.Device, new.Device}, {"worker", e.Worker, new.Worker},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s -> %s", f.name, orNone(f.a), orNone(f.b)))
		}
	}
	if e.GCThresholds != "" && new.GCThresholds != "" && e.GCThresholds != new.GCThresholds {
		out = append(out, fmt.Sprintf("gc thresholds %s -> %s", e.GCThresholds, new.GCThresholds))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
