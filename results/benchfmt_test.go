package results

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/gcjitter/gcjitter/stats"
)

// gcjitter ab's runs carry their side as a benchfmt key, so benchstat's
// projection -col /side splits A from B under one variant name (before,
// the variants were "a.default" and "b.default": nothing to split on).
func TestABSideIsABenchfmtKey(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{}
	for _, side := range []string{"a", "b"} {
		m.Runs = append(m.Runs, &Run{Case: "smoke", Variant: side + ".default", Side: side, Of: "default",
			Status: StatusOK, Summary: &stats.RunSummary{Steps: 10, P50: 1e6}})
	}
	m.Runs = append(m.Runs, &Run{Case: "smoke", Variant: "freeze", Status: StatusOK, Summary: &stats.RunSummary{Steps: 10, P50: 1e6}})
	if err := WriteBench(dir, m); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, BenchFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var filter benchproc.ProjectionParser
	col, err := filter.Parse("/side", nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := filter.Parse("/variant", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sides, variants []string
	r := benchfmt.NewReader(f, BenchFile)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		sides = append(sides, col.Project(res).StringValues())
		variants = append(variants, row.Project(res).StringValues())
	}
	if want := []string{"a", "b", ""}; !slices.Equal(sides, want) {
		t.Errorf("/side of the results: %q, want %q", sides, want)
	}
	if want := []string{"default", "default", "freeze"}; !slices.Equal(variants, want) {
		t.Errorf("/variant of the results: %q, want %q", variants, want)
	}
}
