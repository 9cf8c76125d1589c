package golden

import (
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// manifestWithCensus is a one-variant manifest whose timed runs have the
// sample's schedule and whose census run walked walked[g] objects per
// generation.
func manifestWithCensus(walked [3]int64, torch string) *results.Manifest {
	meta := &results.RunMeta{Python: "3.11.2", Build: "b", Torch: torch, Device: "cpu"}
	// 40 steps of 10 ms, one full collection of 50 ms (timed on the new
	// heap): 12.5% of the time in it, so the objects it walks beyond the
	// baseline's cost the step 12.5% x (their share of the new heap).
	sched := stats.RunSummary{Steps: 40, Mean: 10e6, P50: 10e6, Collections: [3]int{11, 1, 1}, Collected: [3]int64{1700, 6100, 0}, PauseNS: [3]float64{0, 0, 50e6}}
	census := sched
	census.Walked = walked
	return &results.Manifest{
		Cases:  []results.Case{{Name: "tiny", Steps: 40, Warmup: 2, Runs: 1}},
		Runs:   []*results.Run{{Case: "tiny", Variant: "default", Status: results.StatusOK, Summary: &sched, Meta: meta}},
		Census: []*results.Run{{Case: "tiny", Variant: "default", Status: results.StatusOK, Summary: &census, Meta: meta}},
	}
}

func TestCensusIsExactAndDirected(t *testing.T) {
	g, err := Parse([]byte(sample), "g.json")
	if err != nil {
		t.Fatal(err)
	}
	g.Variants[0].Schedule = &Schedule{Collections: [3]int{11, 1, 1}, Collected: [3]int64{1700, 6100, 0}}
	g.Variants[0].Census = &Census{Collections: [3]int{11, 1, 1}, Walked: [3]int64{7000, 8000, 100000}}
	for _, c := range []struct {
		name   string
		walked [3]int64
		torch  string
		fail   bool
		text   string
	}{
		{"same heap", [3]int64{7000, 8000, 100000}, "1.13.0", false, "heap census: unchanged in all 1 variants"},
		// +10% long-lived objects: each full collection walks 10% more.
		{"heavier heap", [3]int64{7000, 8000, 110000}, "1.13.0", true, "tiny/default: regressed: +10.0% objects per gen2 collection"},
		// In the same environment the census is exact: one object fails,
		// and says how many, not "+0.0%".
		{"one object more, exactly", [3]int64{7000, 8000, 100001}, "1.13.0", true, "regressed: +0.001% objects per gen2 collection (+1 objects)"},
		// An upgrade's lighter heap is its effect: reported, not failed;
		// 20,000 fewer of 80,000: 12.5% x 1/4 = 3.12% of the step saved.
		{"lighter heap after an upgrade", [3]int64{7000, 8000, 80000}, "2.5.0", false, "improved: -20.0% objects per gen2 collection (-20000 objects), adding -3.12% of the step"},
		// Heavier after an upgrade fails through the pause it adds: 20,000
		// more of 120,000, 12.5% x 1/6 = 2.08% of the step, beyond the
		// cost floor of 0.5%.
		{"heavier heap after an upgrade", [3]int64{7000, 8000, 120000}, "2.5.0", true, "regressed: +20.0% objects per gen2 collection (+20000 objects), adding +2.08% of the step"},
		// Heavier after an upgrade, but by what costs under the floor:
		// 2,000 more of 102,000, +0.245% of the step: the cause, not a
		// verdict. And
		// the +0.001% of one object never fails an upgrade.
		{"slightly heavier after an upgrade", [3]int64{7000, 8000, 102000}, "2.5.0", false, "explains: +2.0% objects per gen2 collection (+2000 objects), adding +0.245% of the step"},
		{"one object more after an upgrade", [3]int64{7000, 8000, 100001}, "2.5.0", false, "explains: +0.001% objects"},
		// Lighter in the same environment: changed, exactly like a schedule.
		{"lighter heap, same environment", [3]int64{7000, 8000, 90000}, "1.13.0", true, "changed in the same environment: -10.0%"},
	} {
		res, err := Check(g, "g.json", manifestWithCensus(c.walked, c.torch))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.CensusFailed() != c.fail {
			t.Errorf("%s: CensusFailed() = %v, want %v", c.name, res.CensusFailed(), c.fail)
		}
		if !strings.Contains(res.Text(), c.text) {
			t.Errorf("%s: text lacks %q:\n%s", c.name, c.text, res.Text())
		}
	}
}

// TestCheckEnvironmentIgnoresRunOrder: a variant whose policy sets its own
// thresholds records them (Env.GCThresholds), and the runs run shuffled.
// Whichever variant ran first, the gate reads the case's environment as
// its baseline did, so an unchanged environment is unchanged and one more
// young collection fails as a schedule change in the same environment.
func TestCheckEnvironmentIgnoresRunOrder(t *testing.T) {
	m := fiveRuns(t, nil)
	for i, r := range m.Runs {
		meta := *r.Meta
		meta.GCThresholds = "700,10,10"
		if r.Variant == "manual" {
			meta.GCThresholds = "700,10,1000"
		}
		m.Runs[i].Meta = &meta
	}
	g, err := FromResults(m, fixtureDir, "fixture", "test-cpu")
	if err != nil {
		t.Fatal(err)
	}
	g.Variants[0].Schedule.Collections[0]++
	// The manual variant's runs first, as a shuffle may order them.
	slices.SortStableFunc(m.Runs, func(a, b *results.Run) int { return strings.Compare(b.Variant, a.Variant) })
	res, err := Check(g, "fixture.json", m)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.EnvChanges) > 0 || !res.ScheduleFailed() {
		t.Errorf("environment changes %v, schedule failed %v; want none, and the planted +1 a failure", res.EnvChanges, res.ScheduleFailed())
	}
}

// TestScheduleCountsOnlyVariantsCompared: a gate run with -filter compares
// fewer variants than the baseline holds, and says so rather than "all";
// a variant left out reads as such, one that ran no completed run as that.
func TestScheduleCountsOnlyVariantsCompared(t *testing.T) {
	g, err := Parse([]byte(sample), "g.json")
	if err != nil {
		t.Fatal(err)
	}
	g.Variants[0].Schedule = &Schedule{Collections: [3]int{11, 1, 1}, Collected: [3]int64{1700, 6100, 0}}
	g.Variants[0].Census = &Census{Collections: [3]int{11, 1, 1}, Walked: [3]int64{7000, 8000, 100000}}
	other := g.Variants[0]
	other.Name = "disabled"
	g.Variants = append(g.Variants, other)
	for _, c := range []struct {
		name    string
		planned []results.Variant
		want    []string
	}{
		{"filtered", []results.Variant{{Name: "default"}}, []string{
			"GC schedule: unchanged in the 1 of 2 variants compared",
			"heap census: unchanged in the 1 of 2 variants compared",
			"tiny/disabled: not run (-filter left it out)"}},
		{"crashed", []results.Variant{{Name: "default"}, {Name: "disabled"}}, []string{
			"GC schedule: unchanged in the 1 of 2 variants compared",
			"tiny/disabled: no completed run to compare with the baseline"}},
		// A manifest that lists no planned variants cannot tell a left-out
		// variant from a lost one: it says the runs are missing.
		{"unlisted", nil, []string{"tiny/disabled: no completed run to compare with the baseline"}},
	} {
		m := manifestWithCensus([3]int64{7000, 8000, 100000}, "1.13.0")
		m.Cases[0].Variants = c.planned
		res, err := Check(g, "g.json", m)
		if err != nil {
			t.Fatal(err)
		}
		text := res.Text()
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s: text lacks %q:\n%s", c.name, want, text)
			}
		}
		if strings.Contains(text, "unchanged in all") {
			t.Errorf("%s: one variant of two compared reads as all:\n%s", c.name, text)
		}
	}
}
