package results

import (
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// TestOneEnvironment: a worker's meta record, the manifest's copy of it and
// a baseline's key are one type, so compare and gate see the same changes.
func TestOneEnvironment(t *testing.T) {
	m := &bench.Meta{Torch: "1.13.0", Device: bench.DeviceInfo{Kind: "cpu", Name: "cpu"}}
	m.Python.Version, m.Python.Build = "3.11.2", "main"
	fromRecord := EnvOf(m, "out/worker/gcjitter-worker-abc.py")
	fromManifest := RunMetaOf(m).Env("worker/gcjitter-worker-abc.py")
	if fromRecord != fromManifest {
		t.Fatalf("record %+v, manifest %+v: the same run, two environments", fromRecord, fromManifest)
	}
	up := fromRecord
	up.Torch, up.FreeThreaded = "2.4.0", true
	ch := fromRecord.Changes(up)
	if !slices.Contains(ch, "torch 1.13.0 -> 2.4.0") || !slices.Contains(ch, "free-threaded false -> true") || len(ch) != 2 {
		t.Errorf("changes %q", ch)
	}
	if k := up.Key(); !strings.Contains(k, "free-threaded") || !strings.Contains(k, "worker gcjitter-worker-abc.py") {
		t.Errorf("key %q lacks the build or the worker", k)
	}
}

// TestEnvNamesTheThresholds: CPython 3.13's gen-0 threshold of 2000 is an
// environment change, named; a side that did not record its thresholds (a
// baseline made before they were kept) changes nothing.
func TestEnvNamesTheThresholds(t *testing.T) {
	old := Env{Python: "3.11.7", Device: "cpu", GCThresholds: "700,10,10"}
	new := Env{Python: "3.13.0", Device: "cpu", GCThresholds: "2000,10,10"}
	got := strings.Join(old.Changes(new), "; ")
	if got != "python 3.11.7 -> 3.13.0; gc thresholds 700,10,10 -> 2000,10,10" {
		t.Errorf("changes %q", got)
	}
	unknown := Env{Python: "3.11.7", Device: "cpu"}
	if ch := unknown.Changes(Env{Python: "3.11.7", Device: "cpu", GCThresholds: "700,10,10"}); len(ch) != 0 {
		t.Errorf("an unrecorded side changed the environment: %q", ch)
	}
	if got := EnvOf(&bench.Meta{GC: bench.GCState{Thresholds: []int{2000, 10, 10}}}, "").GCThresholds; got != "2000,10,10" {
		t.Errorf("EnvOf thresholds %q", got)
	}
}

// TestStartIsNotAnEnvironmentChange: runs started warm against a baseline
// started cold are compared, with a note naming both starts; the start is
// no change of the environment key.
func TestStartIsNotAnEnvironmentChange(t *testing.T) {
	side := func(path, start string) *Data {
		d := NewData(path)
		b := BenchName("smoke", "default")
		for _, v := range []float64{1e6, 1.1e6, 0.9e6} {
			d.AddValue(b, "p50-ns/step", v)
			d.AddValue(b, rssPeakUnit, v*100)
			d.AddIters(b, 100)
		}
		d.Env[b] = Env{Python: "3.11.7", Device: "cpu", Start: start}
		return d
	}
	c := Compare(side("base", "cold"), side("new", "warm"), CompareOptions{})
	notes := strings.Join(c.Notes, "\n")
	if !strings.Contains(notes, "runs started cold in base and warm in new") || strings.Contains(notes, "environment changed") {
		t.Errorf("notes:\n%s", notes)
	}
	if m, ok := stats.MetricByUnit(rssPeakUnit); !ok || m.Name != "rss-peak" {
		t.Fatalf("%s is not stats' rss-peak unit", rssPeakUnit)
	}
	for _, r := range c.Rows {
		if strings.Contains(r.Metric+r.Unit, "rss-peak") {
			t.Errorf("rss-peak compared across starts: %+v", r)
		}
	}
	if c := Compare(side("base", "cold"), side("new", "cold"), CompareOptions{}); strings.Contains(strings.Join(c.Notes, "\n"), "started") {
		t.Errorf("same starts noted: %q", c.Notes)
	}
	if m := RunMetaOf(&bench.Meta{Start: "warm"}); m.Env("").Start != "warm" || EnvOf(&bench.Meta{Start: "warm"}, "").Start != "warm" {
		t.Error("the start is not kept from the meta record")
	}
}
