package results

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/stats"
)

// FuzzBenchfmtCompare: any two benchfmt inputs either fail to load with an
// InputError or compare without panicking, every row with a verdict.
func FuzzBenchfmtCompare(f *testing.F) {
	f.Add("BenchmarkA 10 5 p50-ns/step\nBenchmarkA 10 6 p50-ns/step\n", "BenchmarkA 10 7 p50-ns/step\n")
	f.Add("Unit x better=higher\nBenchmarkA 1 NaN x\n", "BenchmarkA 1 -3 x 4 gen2-collections/kstep\n")
	f.Add("BenchmarkA-2 1 0 gc-share\n", "BenchmarkA-2 1 0 gc-share\nBenchmarkA-2 1 1e308 gc-share\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		old, err1 := readBenchfmt(strings.NewReader(a), "old")
		new, err2 := readBenchfmt(strings.NewReader(b), "new")
		for _, err := range []error{err1, err2} {
			if err != nil {
				if _, ok := err.(*InputError); !ok {
					t.Fatalf("error of type %T: %v", err, err)
				}
			}
		}
		if err1 != nil || err2 != nil {
			return
		}
		c := Compare(old, new, CompareOptions{})
		for _, r := range c.Rows {
			if r.Verdict == "" {
				t.Fatalf("row %s %s without a verdict", r.Bench, r.Metric)
			}
		}
	})
}

// Results directories made before path-safe names (a variant manual:10 in
// runs/CASE/manual:10/) still load: the manifest names every file, so the
// reader never derives a path from a variant's name.
func TestLoadKeepsReadingOldPaths(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "gate", "testdata", "results")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "runs", "fixture", "manual:10")
	if err := os.Rename(filepath.Join(dir, "runs", "fixture", "manual"), old); err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(`runs/fixture/manual/`), []byte(`runs/fixture/manual:10/`))
	if err := os.WriteFile(mf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir, stats.SpikeRule{})
	if err != nil {
		t.Fatalf("loading a results directory with old paths: %v", err)
	}
	steps, err := LoadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Runs[BenchName("fixture", "manual")]) != 2 || steps[BenchName("fixture", "manual")] == nil {
		t.Errorf("the variant in the old path lost its runs or steps: %v", maps.Keys(d.Runs))
	}
}
