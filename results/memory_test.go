package results

import (
	"strings"
	"testing"
)

// A baseline made before memory was measured has no rss units: comparing
// against it judges the rest, leaves memory out, and says so once.
func TestMemoryAbsentOnOneSideIsNotJudged(t *testing.T) {
	old, new := NewData("golden/old.json"), NewData("new")
	for _, b := range []string{"GCJitter/case=c/variant=default", "GCJitter/case=c/variant=disabled"} {
		for i := range 5 {
			old.AddIters(b, 500)
			new.AddIters(b, 500)
			old.AddValue(b, "p50-ns/step", 20e6+float64(i)*1e4)
			new.AddValue(b, "p50-ns/step", 20e6+float64(i)*1e4)
			new.AddValue(b, "rss-peak-bytes", 4e8)
			new.AddValue(b, "rss-growth-bytes/kstep", 3e9)
		}
	}
	c := Compare(old, new, CompareOptions{})
	for _, r := range c.Rows {
		if strings.HasPrefix(r.Metric, "rss") {
			t.Errorf("%s %s judged (%s) against a side without it", r.Bench, r.Metric, r.Verdict)
		}
	}
	if len(c.Rows) != 2 {
		t.Errorf("%d rows, want p50 of both benchmarks", len(c.Rows))
	}
	var notes []string
	for _, n := range c.Notes {
		if strings.Contains(n, "rss") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "units rss-peak-bytes, rss-growth-bytes/kstep are only in new (2 benchmark(s)): not compared") {
		t.Errorf("notes on memory: %q, want one naming both units and the side", notes)
	}
}
