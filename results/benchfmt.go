package results

import (
	"bytes"
	"fmt"
	"path/filepath"

	"golang.org/x/perf/benchfmt"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
)

// Units of the per-run values in results.bench. Time units carry "ns" so
// benchstat scales them to seconds; collections are exact counts of a
// deterministic schedule.
var units = []struct {
	name, assume string
}{
	{"p50-ns/step", ""}, {"p90-ns/step", ""}, {"p99-ns/step", ""}, {"max-ns/step", ""},
	{"spike-steps/run", ""}, {"gc-share", ""},
	{"gen0-pause-ns/run", ""}, {"gen1-pause-ns/run", ""}, {"gen2-pause-ns/run", ""},
	{"gen0-collections/run", "exact"}, {"gen1-collections/run", "exact"}, {"gen2-collections/run", "exact"},
}

// BenchName is the benchfmt name of a case's variant, without the
// "Benchmark" prefix the file adds.
func BenchName(caseName, variant string) string {
	return fmt.Sprintf("GCJitter/case=%s/variant=%s", caseName, variant)
}

// WriteBench writes dir/results.bench: one result line per completed run,
// with Unit lines saying lower is better, so benchstat and gcjitter compare
// read it.
func WriteBench(dir string, m *Manifest) error {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	for _, u := range units {
		if err := w.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.name, Key: "better"}, OrigUnit: u.name, Value: "lower"}); err != nil {
			return err
		}
		if u.assume != "" {
			if err := w.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.name, Key: "assume"}, OrigUnit: u.name, Value: u.assume}); err != nil {
				return err
			}
		}
	}
	for _, r := range m.Runs {
		if r.Status != StatusOK || r.Summary == nil {
			continue
		}
		s := r.Summary
		res := &benchfmt.Result{Name: benchfmt.Name(BenchName(r.Case, r.Variant)), Iters: s.Steps}
		file := func(k, v string) {
			if v != "" {
				res.Config = append(res.Config, benchfmt.Config{Key: k, Value: []byte(v), File: true})
			}
		}
		file("gcjitter", m.Tool)
		file("cpu", m.Host.CPUModel)
		file("host", m.Host.Hostname)
		if rm := r.Meta; rm != nil {
			file("python", rm.Python)
			file("torch", rm.Torch)
			file("torch-npu", rm.TorchNPU)
			file("cuda", rm.CUDA)
			file("device", rm.Device)
		}
		vals := []float64{s.P50, s.P90, s.P99, s.Max, float64(s.Spikes), s.GCShare,
			s.PauseNS[0], s.PauseNS[1], s.PauseNS[2],
			float64(s.Collections[0]), float64(s.Collections[1]), float64(s.Collections[2])}
		for i, u := range units {
			res.Values = append(res.Values, benchfmt.Value{Value: vals[i], Unit: u.name})
		}
		if err := w.Write(res); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, BenchFile), buf.Bytes(), 0o644)
}
