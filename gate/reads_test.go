package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gcjitter/gcjitter/results"
)

// TestGateReadsEachStreamOnce: a gate's judgements (adaptive rounds judge
// again) and its reports read each record stream at most once: counted
// on a copy of the fixture without summaries (cold), and again with them
// (warm: only the charts' steps are read).
func TestGateReadsEachStreamOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	sums, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "*", "*"+results.SummaryExt))
	for _, s := range sums {
		os.Remove(s)
	}
	m, err := results.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	streams := 0
	for _, r := range m.Runs {
		if r.Status == results.StatusOK {
			streams += max(r.Ranks, 1)
		}
	}
	base := baseline(t, "test-cpu", nil)
	for _, state := range []string{"cold", "warm"} {
		p := plan(t, base, fixtureCase(t))
		before := results.StreamReads()
		var o *Outcome
		for range 2 {
			if o, err = p.Judge(m, dir, Policy{Timing: "report"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := o.Report().WriteReports(dir); err != nil {
			t.Fatal(err)
		}
		if n := results.StreamReads() - before; n != int64(streams) {
			t.Errorf("%s: a gate (two judgements and the reports) read %d streams, want each of the %d once", state, n, streams)
		}
	}
}
