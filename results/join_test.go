package results

import (
	"slices"
	"testing"

	"github.com/gcjitter/gcjitter/stats"
)

// TestJoin: benchmarks renamed, left out, and pooled when two sides give
// one name (two trace runs of one job under one policy).
func TestJoin(t *testing.T) {
	side := func(path string, p50s ...float64) *Data {
		d := NewData(path)
		for _, v := range p50s {
			b := BenchName("job", "traced")
			d.AddValue(b, "p50-ns/step", v)
			d.AddIters(b, 100)
			d.Runs[b] = append(d.Runs[b], stats.RunSummary{Steps: 100, P50: v})
			d.AddValue(BenchName("other", "default"), "p50-ns/step", v)
		}
		return d
	}
	a, b := side("a", 1e6, 2e6), side("b", 3e6)
	j := Join([]*Data{a, b}, func(i int, bench string) string {
		if CaseOf(bench) != "job" {
			return ""
		}
		return BenchName("job", "default")
	})
	want := BenchName("job", "default")
	if !slices.Equal(j.Benches, []string{want}) {
		t.Fatalf("benches %v, want [%s]", j.Benches, want)
	}
	if got := j.Values[want]["p50-sec/step"]; !slices.Equal(got, []float64{1e-3, 2e-3, 3e-3}) {
		t.Errorf("values %v, want the three runs pooled", got)
	}
	if n := len(j.Runs[want]); n != 3 || j.MinIters[want] != 100 {
		t.Errorf("%d runs, %d steps, want 3 runs of 100", n, j.MinIters[want])
	}
	if j.Path != "a, b" {
		t.Errorf("path %q", j.Path)
	}
	if one := Join([]*Data{a}, func(_ int, bench string) string { return bench }); one.Path != "a" {
		t.Errorf("one side's path %q, want its own (its manifest's gates apply)", one.Path)
	}
}
