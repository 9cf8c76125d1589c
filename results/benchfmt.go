package results

import (
	"bytes"
	"fmt"
	"path/filepath"

	"golang.org/x/perf/benchfmt"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/stats"
)

// BenchName is the benchfmt name of a case's variant, without the
// "Benchmark" prefix the file adds.
func BenchName(caseName, variant string) string {
	return fmt.Sprintf("GCJitter/case=%s/variant=%s", caseName, variant)
}

// WriteBench writes dir/results.bench: one result line per completed run
// with every metric of stats.Metrics (iterations: the run's measured
// steps), and Unit lines saying which way is better and which are exact counts,
// so benchstat and gcjitter compare read it.
func WriteBench(dir string, m *Manifest) error {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	for _, m := range stats.Metrics {
		if err := w.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: m.Unit, Key: "better"}, OrigUnit: m.Unit, Value: m.BetterWord()}); err != nil {
			return err
		}
		if m.Exact {
			if err := w.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: m.Unit, Key: "assume"}, OrigUnit: m.Unit, Value: "exact"}); err != nil {
				return err
			}
		}
	}
	for _, r := range m.Runs {
		if r.Status != StatusOK || r.Summary == nil {
			continue
		}
		s := r.Summary
		name := BenchName(r.Case, r.Variant)
		if r.Side != "" {
			name = BenchName(r.Case, r.Of) + "/side=" + r.Side
		}
		res := &benchfmt.Result{Name: benchfmt.Name(name), Iters: s.Steps}
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
		for _, m := range stats.Metrics {
			if v, ok := m.Measured(*s); ok {
				res.Values = append(res.Values, benchfmt.Value{Value: v, Unit: m.Unit})
			}
		}
		if err := w.Write(res); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, BenchFile), buf.Bytes(), 0o644)
}
