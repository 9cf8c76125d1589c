package gate

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// abSession is an A/B session's results and manifest: 5 runs a side of
// 1000 steps of 10 ms with 5 full collections of 40 ms (gen0 1160 young
// ones of 50 us; B's young collections gen0B), and a census run a side
// whose full collections walk walkA and walkB objects.
func abSession(gen0B int, walkA, walkB int64) (*results.Data, *results.Manifest) {
	d := results.NewData("ab")
	m := &results.Manifest{}
	for side, gen0 := range []int{1160, gen0B} {
		variant := abSides[side] + "default"
		walk := []int64{walkA, walkB}[side]
		for k := range 5 {
			jitter := 1 + 0.01*float64(k-2)
			r := stats.RunSummary{Steps: 1000, Collections: [3]int{gen0, 100, 5}, PauseNS: [3]float64{50e3 * float64(gen0) * jitter, 40e6, 200e6 * jitter},
				MaxPauseNS: [3]float64{60e3, 500e3, 42e6 * jitter}, FullWalk: float64(walk)}
			r.Mean = 10e6*jitter + (r.PauseNS[0]+r.PauseNS[1]+r.PauseNS[2])/1000
			r.GCShare = (r.PauseNS[0] + r.PauseNS[1] + r.PauseNS[2]) / (r.Mean * 1000)
			r.P50, r.P90, r.P99, r.Max = 10e6*jitter, 10.5e6*jitter, 50e6*jitter, 52e6*jitter
			r.Typical, r.Yardstick = 10e6*jitter, 10e6*jitter
			d.AddRun(results.BenchName("c", variant), r)
		}
		census := stats.RunSummary{Steps: 1000, Collections: [3]int{gen0, 100, 5}, Walked: [3]int64{int64(gen0) * 700, 100 * 20000, 5 * walk}}
		m.Census = append(m.Census, &results.Run{Case: "c", Variant: variant, Status: results.StatusOK, Summary: &census})
	}
	return d, m
}

func abRow(t *testing.T, c *results.Comparison, metric string) *stats.Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no %s row", metric)
	return nil
}

// In ab, two specs are an environment change: one more young collection
// and one more object walked explain, a heavier heap whose walk costs the
// step over the floor regresses; the same spec twice (A/A) fails on any of
// them.
func TestJudgeABCostAndMechanism(t *testing.T) {
	upgrade := [2]Spec{{Python: "/old/python"}, {Python: "/new/python"}}
	aa := [2]Spec{{Python: "/usr/bin/python3"}, {Python: "/usr/bin/python3"}}
	for _, c := range []struct {
		name         string
		specs        [2]Spec
		gen0B        int
		walkB        int64
		regressed    bool
		metric, word string
	}{
		{"unchanged upgrade", upgrade, 1160, 400_000, false, CensusMetric, "exact: unchanged"},
		{"one more young collection, upgrade", upgrade, 1161, 400_000, false, "gen0-collections", "explains: 1160 -> 1161"},
		{"one more object walked, upgrade", upgrade, 1160, 400_001, false, CensusMetric, "explains: 400000 -> 400001 (+0.00025%)"},
		// 200,000 objects more, a third of the 600,000 walked: a third of
		// the runs' 200 ms of full collections, 66.7 ms over 1000 steps of
		// 10.2 ms, 0.65% of the step: beyond the floor.
		{"heap 50% heavier, upgrade", upgrade, 1160, 600_000, true, CensusMetric, "beyond the cost floor +0.50% of the step"},
		{"one more young collection, A/A", aa, 1161, 400_000, true, "gen0-collections", "exact: 1160 -> 1161"},
		{"one more object walked, A/A", aa, 1160, 400_001, true, CensusMetric, "the same environment walked another heap"},
	} {
		d, m := abSession(c.gen0B, 400_000, c.walkB)
		cmp := JudgeAB(d, m, c.specs, nil)
		r := abRow(t, cmp, c.metric)
		if cmp.Regressed() != c.regressed || !strings.Contains(r.Reason, c.word) {
			t.Errorf("%s: regressed %v, want %v; %s: %s: %s", c.name, cmp.Regressed(), c.regressed, c.metric, r.Verdict, r.Reason)
		}
	}
}
