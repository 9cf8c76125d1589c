package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// abSession is an A/B session's results and manifest: 5 runs a side of
// 1000 steps of 10 ms with 5 full collections of 40 ms (gen0 1160 young
// ones of 50 us; B's young collections gen0B), and a census run a side
// whose full collections walk walkA and walkB objects. slowB > 1 makes
// every time of B's runs (steps, pauses) that many times longer.
func abSession(gen0B int, walkA, walkB int64, slowB ...float64) (*results.Data, *results.Manifest) {
	d := results.NewData("ab")
	m := &results.Manifest{}
	for side, gen0 := range []int{1160, gen0B} {
		variant := abSides[side] + "default"
		walk := []int64{walkA, walkB}[side]
		for k := range 5 {
			jitter := 1 + 0.01*float64(k-2)
			if side == 1 && len(slowB) > 0 {
				jitter *= slowB[0]
			}
			r := stats.RunSummary{Steps: 1000, Collections: [3]int{gen0, 100, 5}, PauseNS: [3]float64{50e3 * float64(gen0) * jitter, 40e6 * jitter, 200e6 * jitter},
				MaxPauseNS: [3]float64{60e3 * jitter, 500e3 * jitter, 42e6 * jitter}, FullWalk: float64(walk)}
			r.Mean = 10e6*jitter + (r.PauseNS[0]+r.PauseNS[1]+r.PauseNS[2])/1000
			r.GCShare = (r.PauseNS[0] + r.PauseNS[1] + r.PauseNS[2]) / (r.Mean * 1000)
			r.P50, r.P90, r.P99, r.Max = 10e6*jitter, 10.5e6*jitter, 50e6*jitter, 52e6*jitter
			r.Typical, r.Yardstick = 10e6*jitter, 10e6*jitter
			d.AddRun(results.BenchName("c", variant), r)
			m.Runs = append(m.Runs, &results.Run{ID: fmt.Sprintf("c/%s/run-%02d", variant, k+1), Case: "c", Variant: variant, Status: results.StatusOK})
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
		cmp := JudgeAB(d, m, c.specs, nil, ABPolicy{}).Comparison
		r := abRow(t, cmp, c.metric)
		if cmp.Regressed() != c.regressed || !strings.Contains(r.Reason, c.word) {
			t.Errorf("%s: regressed %v, want %v; %s: %s: %s", c.name, cmp.Regressed(), c.regressed, c.metric, r.Verdict, r.Reason)
		}
	}
}

// TestJudgeABUpgradeWithoutFullCollections: an upgrade whose B makes no
// full collection has no heap census to weigh against A's; the census row
// is not judged (it once failed the A/B as "the same environment walked
// another heap"), and the counts, priced by their cost, decide: fewer
// full collections, no regression.
func TestJudgeABUpgradeWithoutFullCollections(t *testing.T) {
	upgrade := [2]Spec{{Python: "/old/python"}, {Python: "/new/python"}}
	d, m := abSession(1160, 400_000, 400_000)
	runs := d.Runs[results.BenchName("c", abSides[1]+"default")]
	for i := range runs {
		runs[i].Collections[2], runs[i].PauseNS[2], runs[i].MaxPauseNS[2] = 0, 0, 0
	}
	b := m.Census[1].Summary
	b.Collections[2], b.Walked[2] = 0, 0
	cmp := JudgeAB(d, m, upgrade, nil, ABPolicy{}).Comparison
	r := abRow(t, cmp, CensusMetric)
	if r.Verdict != stats.Descriptive || !strings.Contains(r.Reason, "B made no gen2 collection") {
		t.Errorf("census row: %s: %s; want not judged", r.Verdict, r.Reason)
	}
	if cmp.Regressed() {
		for _, r := range cmp.Rows {
			if r.Verdict == stats.Regressed {
				t.Errorf("regressed: %s %s: %s", r.Bench, r.Metric, r.Reason)
			}
		}
	}
}

// TestJudgeABBusyHostLeavesTimingUndecided: B planted 2x slower in every
// time fails an A/B of runs made on a quiet host; the same runs made beside
// other load give no timing verdict ("undecided: host busy" with the load),
// the A/B passes with a warning (fails under -unknown fail, judges them
// under -allow-busy), and a changed schedule in one environment still
// fails it.
func TestJudgeABBusyHostLeavesTimingUndecided(t *testing.T) {
	aa := [2]Spec{{Python: "/usr/bin/python3"}, {Python: "/usr/bin/python3"}}
	judge := func(gen0B int, other float64, pol ABPolicy) *ABOutcome {
		d, m := abSession(gen0B, 400_000, 400_000, 2)
		m.Host.CPUs = 2
		for _, r := range m.Runs {
			r.OtherCPUs = &other
		}
		return JudgeAB(d, m, aa, nil, pol)
	}
	timingRows := func(o *ABOutcome) (regressed, undecided []string) {
		for _, r := range o.Comparison.Rows {
			m, ok := stats.MetricByName(r.Metric)
			if !ok || m.Exact || m.Memory || !r.Tested() {
				continue
			}
			switch {
			case r.Verdict == stats.Regressed:
				regressed = append(regressed, r.Metric)
			case r.Verdict == stats.Unknown && strings.HasPrefix(r.Reason, "undecided: host busy: other processes kept up to 1.90 of the host's 2 CPUs busy"):
				undecided = append(undecided, r.Metric)
			}
		}
		return regressed, undecided
	}
	if o := judge(1160, 0.01, ABPolicy{}); !o.Failed {
		reg, _ := timingRows(o)
		t.Fatalf("quiet host: B 2x slower passed (regressed %v); the plant must fail", reg)
	}
	busy := judge(1160, 1.9, ABPolicy{})
	reg, und := timingRows(busy)
	if busy.Failed || len(reg) > 0 || len(und) == 0 || busy.Unknowns < len(und) {
		t.Errorf("busy host: failed %v, regressed %v, undecided %v, unknowns %d; want a pass with the timings undecided", busy.Failed, reg, und, busy.Unknowns)
	}
	if w := strings.Join(busy.Warnings(ABPolicy{}), "\n"); !strings.Contains(w, "timing undecided: host busy: other processes kept up to 1.90") || !strings.Contains(w, "metrics are unknown (counted as pass") {
		t.Errorf("busy host: warnings do not say why the timings are unknown:\n%s", w)
	}
	if o := judge(1160, 1.9, ABPolicy{UnknownFails: true}); !o.Failed {
		t.Errorf("busy host, -unknown fail: passed")
	}
	if o := judge(1160, 1.9, ABPolicy{AllowBusy: true}); !o.Failed || o.HostBusy != "" {
		t.Errorf("busy host, -allow-busy: failed %v, host busy %q; want the timings judged", o.Failed, o.HostBusy)
	}
	if o := judge(1161, 1.9, ABPolicy{}); !o.Failed || abRow(t, o.Comparison, "gen0-collections").Verdict != stats.Regressed {
		t.Errorf("busy host, one more young collection in one environment: failed %v; want the schedule to fail it", o.Failed)
	}
}

// TestJudgeABBusyHostLeavesACensusPriceUndecided: an upgrade's heavier
// heap priced from pauses timed beside other load, within
// results.BusyPriceFactor of the floor, is undecided there; quiet, the
// same census fails the A/B.
func TestJudgeABBusyHostLeavesACensusPriceUndecided(t *testing.T) {
	upgrade := [2]Spec{{Python: "/old/python"}, {Python: "/new/python"}}
	judge := func(other float64) *ABOutcome {
		// 200,000 objects more: +0.65% of the step (TestJudgeABCostAndMechanism).
		d, m := abSession(1160, 400_000, 600_000)
		m.Host.CPUs = 2
		for _, r := range m.Runs {
			r.OtherCPUs = &other
		}
		return JudgeAB(d, m, upgrade, nil, ABPolicy{})
	}
	if r := abRow(t, judge(0.01).Comparison, CensusMetric); r.Verdict != stats.Regressed {
		t.Fatalf("quiet host: %s: %s; want the heavier heap to regress", r.Verdict, r.Reason)
	}
	busy := judge(1.9)
	if r := abRow(t, busy.Comparison, CensusMetric); busy.Failed || r.Verdict != stats.Unknown || !strings.HasPrefix(r.Reason, "undecided: host busy") {
		t.Errorf("busy host: failed %v; census %s: %s; want it undecided", busy.Failed, r.Verdict, r.Reason)
	}
}

// TestUndisturbedRerunsWithinBudget: a disturbed session is made again at
// most BusyReruns times, into DIR-rerunN, and the last one made is judged;
// a quiet session is not rerun; a rerun that fails leaves the one before.
func TestUndisturbedRerunsWithinBudget(t *testing.T) {
	session := func(other float64) *results.Manifest {
		m := &results.Manifest{Host: results.Host{CPUs: 2}}
		for k := range 3 {
			m.Runs = append(m.Runs, &results.Run{ID: fmt.Sprint(k), Case: "c", Status: results.StatusOK, OtherCPUs: &other})
		}
		return m
	}
	for _, c := range []struct {
		name         string
		first, again float64
		fails        bool
		reruns       int
		judged       string
	}{
		{"quiet", 0.01, 0.01, false, 0, "out"},
		{"busy, then quiet", 1.5, 0.01, false, 1, "out-rerun1"},
		{"busy throughout", 1.5, 1.5, false, BusyReruns, fmt.Sprintf("out-rerun%d", BusyReruns)},
		{"busy, the rerun fails", 1.5, 0.01, true, 1, "out"},
	} {
		var dirs, said []string
		m, dir := Undisturbed(session(c.first), "out", func(next string) (*results.Manifest, string, error) {
			dirs = append(dirs, next)
			if c.fails {
				return nil, "", fmt.Errorf("interrupted")
			}
			return session(c.again), next, nil
		}, func(s string) { said = append(said, s) })
		if len(dirs) != c.reruns || dir != c.judged || m == nil {
			t.Errorf("%s: reran into %v, judged %s; want %d reruns, %s judged", c.name, dirs, dir, c.reruns, c.judged)
		}
		if c.reruns > 0 && (len(said) == 0 || !strings.Contains(said[0], "other processes kept up to 1.50 of the host's 2 CPUs busy")) {
			t.Errorf("%s: said %q; want what disturbed the host", c.name, said)
		}
	}
}
