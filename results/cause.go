package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// collectionsGen is the generation of a collection-count metric
// ("gen1-collections": 1).
func collectionsGen(metric string) (int, bool) {
	rest, ok := strings.CutPrefix(metric, "gen")
	if !ok || !strings.HasSuffix(rest, "-collections") {
		return 0, false
	}
	g, err := strconv.Atoi(strings.TrimSuffix(rest, "-collections"))
	return g, err == nil && g >= 0 && g < 3
}

// absolute are the GC metrics measured against the run's own step, with
// their counterpart in absolute time: what the collector costs whatever
// the step does.
var absolute = map[string]struct {
	what  string
	value func(stats.RunSummary) float64
}{
	"gc-cost":  {"the full collections' pause per object walked", stats.PausePerObject},
	"gc-share": {"the time in collections per step", func(r stats.RunSummary) float64 { return r.GCShare * stats.MeanStep([]stats.RunSummary{r}) }},
}

// fasterSteps keeps a faster step from reading as a GC regression: gc-cost
// and gc-share are measured in the run's own step, so steps made faster
// (an upgrade of torch) raise both while the collector costs what it did.
// Where both sides have run summaries (ab, compare; a baseline keeps none)
// and the step the row is measured in got shorter by enough to explain at
// least half its rise, a regressed row stands only if its absolute
// counterpart (the pause per object walked, the time in collections per
// step) regressed too, tested alike (the row's level and floor): a
// collector 20% slower moves both and stays regressed; a faster step moves
// only the ratio and is reported as explained by the steps (the absolute
// the same or better), or undecided (the absolute undecided).
func fasterSteps(c *Comparison) {
	for _, r := range c.Rows {
		abs, ok := absolute[r.Metric]
		if !ok || r.Verdict != stats.Regressed {
			continue
		}
		oldRuns, newRuns := c.Old.Runs[r.Bench], c.New.Runs[r.Bench]
		o, n := medianOf(oldRuns, abs.value), medianOf(newRuns, abs.value)
		if math.IsNaN(o) || math.IsNaN(n) || o <= 0 {
			continue
		}
		// The step's change: the absolute change less the row's. Only a
		// rise the shorter steps explain for the most part is theirs: a
		// collector 20% slower on steps a few percent shorter by chance
		// (gc-cost +24.5%, pause per object +20%, on a loaded host) stays
		// regressed.
		stepChange := (n/o)/(1+r.Change) - 1
		if fromSteps := 1/(1+stepChange) - 1; stepChange >= 0 || fromSteps < r.Change/2 {
			continue
		}
		var xs, ys []float64
		for _, s := range oldRuns {
			xs = append(xs, abs.value(s))
		}
		for _, s := range newRuns {
			ys = append(ys, abs.value(s))
		}
		level := r.Level
		if math.IsNaN(level) || level <= 0 {
			level = c.Alpha
		}
		a := stats.Compare([]stats.Pair{{Bench: r.Bench, Metric: abs.what, Unit: "ns", Better: -1, Old: xs, New: ys}},
			stats.Options{Alpha: level, Floor: func(stats.Pair) float64 { return r.Floor }})[0]
		switch a.Verdict {
		case stats.Regressed:
			r.Reason += fmt.Sprintf("; %s regressed too (%s [%s, %s]): not the steps alone", abs.what, stats.Pct(a.Change), stats.Pct(a.ChangeLo), stats.Pct(a.ChangeHi))
			continue
		case stats.Unknown:
			// The collector's own cost could not be told from the floor:
			// undecided, not put down to the steps.
			r.Verdict = stats.Unknown
			r.Reason = fmt.Sprintf("undecided: %s [%s, %s] in steps %s shorter, which explain part of it, while %s reads %s [%s, %s], undecided against the floor ±%s: more runs would tell the collector from the steps",
				stats.Pct(r.Change), stats.Pct(r.ChangeLo), stats.Pct(r.ChangeHi), strings.TrimPrefix(stats.Pct(-stepChange), "+"), abs.what,
				stats.Pct(a.Change), stats.Pct(a.ChangeLo), stats.Pct(a.ChangeHi), strings.TrimPrefix(stats.Pct(r.Floor), "+"))
			r.RunsNeeded = max(r.RunsNeeded, a.RunsNeeded)
			continue
		}
		r.Verdict = stats.Descriptive
		r.Reason = fmt.Sprintf("explained by faster steps, not a GC regression: %s [%s, %s] in steps %s shorter, while %s reads %s (%s [%s, %s])",
			stats.Pct(r.Change), stats.Pct(r.ChangeLo), stats.Pct(r.ChangeHi), strings.TrimPrefix(stats.Pct(-stepChange), "+"), abs.what, a.Verdict,
			stats.Pct(a.Change), stats.Pct(a.ChangeLo), stats.Pct(a.ChangeHi))
	}
}

// medianOf is the median of f over runs, leaving out NaNs; NaN without
// any.
func medianOf(runs []stats.RunSummary, f func(stats.RunSummary) float64) float64 {
	var xs []float64
	for _, r := range runs {
		if v := f(r); !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	stats.SortFloat64s(xs)
	return stats.Quantile(xs, 0.5)
}
