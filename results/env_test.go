package results

import (
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
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
