package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// DetectMaxRuns is the most runs a side golden update -detect sizes a
// baseline for: a metric that needs more to see the effect (a count of
// rare events, a maximum) is stated as not seeing it, rather than making
// every night's gate run for an hour.
const DetectMaxRuns = 30

// DetectPilotRuns are the fewest runs a variant golden update -detect
// measures the spreads from before sizing the baseline.
const DetectPilotRuns = 5

// Sized is what a baseline of one case is sized to see: the runs a side
// at which a gate against it detects the effect with stats.DetectPower in
// every primary metric that can within DetectMaxRuns, and what each
// metric detects at that size.
type Sized struct {
	Case   string
	Effect float64
	Runs   int
	Items  []SizedItem
	// The plan's family and alpha, for AtSize.
	family int
	alpha  float64
}

// SizedItem is one variant's metric: the runs it needs (0: more than
// DetectMaxRuns) and the change it detects at the chosen size.
type SizedItem struct {
	stats.PlanItem
	MinRuns    int
	Detectable float64
}

// SizeFor sizes each case's baseline to detect effect (0.2: +20%) from
// the per-run values in d (a pilot's runs, or a baseline's), with each
// metric's measured run-to-run spread, the session drift a gate against
// it allows (the case's gate.drift, else the catalogue's), and the whole
// gate as one family, as PlanPower plans a gate. Runs is at least 2.
func SizeFor(cs []*cases.Case, d *results.Data, effect float64) []Sized {
	family := 0
	itemsOf := map[string][]stats.PlanItem{}
	for _, c := range cs {
		for _, v := range c.Variants {
			bench := results.BenchName(c.Name, v.Name)
			steps := d.MinIters[bench]
			for _, metric := range primaryOf(c) {
				mt, ok := stats.MetricByName(metric)
				if !ok || mt.Exact || !mt.Judged(steps, true) || mt.FloorAbs > 0 {
					continue // exact, too short a run, or a slope near zero: no relative effect to size for
				}
				xs := d.MetricValues(bench, mt)
				if len(xs) < 2 || slices.ContainsFunc(xs, func(x float64) bool { return !(x > 0) }) {
					continue // a metric at 0 (no collections to share or pause) has no relative change to see
				}
				itemsOf[c.Name] = append(itemsOf[c.Name], stats.PlanItem{Bench: bench, Metric: metric,
					Spread: stats.BaselineSpread(metric, xs, steps), Floor: float64(c.Gate.Floor(metric)),
					Drift: c.Gate.SessionDrift(metric)})
			}
		}
		family += len(itemsOf[c.Name])
	}
	var out []Sized
	for _, c := range cs {
		s := Sized{Case: c.Name, Effect: effect, Runs: 2, family: family, alpha: c.Gate.Alpha}
		for _, it := range itemsOf[c.Name] {
			n := stats.Plan([]stats.PlanItem{it}, s.options(0)).MinRuns
			if n > DetectMaxRuns {
				n = 0
			}
			s.Items = append(s.Items, SizedItem{PlanItem: it, MinRuns: n})
			s.Runs = max(s.Runs, n)
		}
		out = append(out, s.AtSize(s.Runs))
	}
	return out
}

func (s Sized) options(runs int) stats.PlanOptions {
	return stats.PlanOptions{Effect: s.Effect, Family: s.family, Alpha: s.alpha, NewRuns: runs}
}

// AtSize is s at runs a side: what each metric detects there.
func (s Sized) AtSize(runs int) Sized {
	s.Runs = runs
	s.Items = slices.Clone(s.Items)
	for i := range s.Items {
		s.Items[i].Detectable = stats.Plan([]stats.PlanItem{s.Items[i].PlanItem}, s.options(runs)).Detectable
	}
	return s
}

// Sees lists the metrics that see the effect at the size, and Misses the
// others with what they do see.
func (s Sized) Sees() (sees, misses []string) {
	for _, it := range s.Items {
		name := it.Metric
		if v := results.VariantOf(it.Bench); v != "" {
			name = v + " " + it.Metric
		}
		if it.Detectable <= s.Effect*(1+1e-9) {
			sees = append(sees, name)
		} else {
			misses = append(misses, fmt.Sprintf("%s %s", name, detectText(it.Detectable)))
		}
	}
	return sees, misses
}

// String states what the size can see, for golden update and golden show.
func (s Sized) String() string {
	sees, misses := s.Sees()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d runs a side detect %s with %.0f%% power (a gate against the baseline, session drift allowed) in %s",
		s.Case, s.Runs, stats.Pct(s.Effect), 100*stats.DetectPower, orNone(sees))
	if len(misses) > 0 {
		fmt.Fprintf(&b, "; not %s within %d runs, which at this size detect: %s", stats.Pct(s.Effect), DetectMaxRuns, strings.Join(misses, ", "))
	}
	return b.String()
}

func detectText(f float64) string {
	if math.IsInf(f, 1) {
		return "no change"
	}
	return stats.Pct(f)
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none of its primary metrics"
	}
	return strings.Join(slices.Clip(xs), ", ")
}
