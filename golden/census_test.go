package golden

import (
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
	sched := stats.RunSummary{Collections: [3]int{11, 1, 1}, Collected: [3]int64{1700, 6100, 0}}
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
		{"one object more, exactly", [3]int64{7000, 8000, 100001}, "1.13.0", true, "regressed: +0.0% objects per gen2 collection"},
		// An upgrade's lighter heap is its effect: reported, not failed.
		{"lighter heap after an upgrade", [3]int64{7000, 8000, 80000}, "2.5.0", false, "improved: -20.0% objects per gen2 collection"},
		// Heavier after an upgrade still fails: what the layer is for.
		{"heavier heap after an upgrade", [3]int64{7000, 8000, 120000}, "2.5.0", true, "regressed: +20.0%"},
		// Lighter in the same environment: changed, exactly like a schedule.
		{"lighter heap, same environment", [3]int64{7000, 8000, 90000}, "1.13.0", true, "improved: -10.0%"},
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
