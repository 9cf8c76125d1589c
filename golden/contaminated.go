package golden

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Contamination is a variant of a baseline whose runs disagree with each
// other beyond the host's noise (stats.OutlyingRuns on their p50 or their
// mean): the host was disturbed while some of them ran. Its timings are
// then no baseline: the spread they show is the disturbance, and a gate
// against them either cannot fail or fails for the baseline's fault.
type Contamination struct {
	Case, Variant string
	Runs          int // the variant's runs
	// Outliers by metric (stats.OutlierMetrics), Index into the runs.
	Outliers map[string][]stats.Outlier
	// IDs name the runs where the results are at hand (golden update);
	// nil for a baseline read from its file.
	IDs []string
}

// Pool is the one pool of noise every contamination decision reads (golden
// update, the gate, the shipped-baselines test): the baselines of the host
// class in dir, with fresh ones (not yet written) in place of the files
// they replace. One variant's runs swing with their own luck, and the
// class's runs are one host kind's noise; were each reader to pool what it
// happens to hold (a session, a case, the class), the same baseline could
// be clean when written and contaminated at the gate.
func Pool(dir, class string, fresh ...*Golden) []*Golden {
	pool := slices.Clone(fresh)
	for _, g := range ReadClass(dir, class) {
		if !slices.ContainsFunc(fresh, func(f *Golden) bool { return f.Case == g.Case }) {
			pool = append(pool, g)
		}
	}
	return pool
}

// Contaminated are the variants of the pool's baselines whose runs
// disagree beyond the noise pooled over all of them (per metric), for the
// named cases (all when none is named).
func Contaminated(pool []*Golden, caseNames ...string) []Contamination {
	out := contaminated(pool)
	if len(caseNames) == 0 {
		return out
	}
	return slices.DeleteFunc(out, func(c Contamination) bool { return !slices.Contains(caseNames, c.Case) })
}

func contaminated(gs []*Golden) []Contamination {
	type at struct {
		g *Golden
		v int
	}
	var where []at
	for _, g := range gs {
		for vi := range g.Variants {
			where = append(where, at{g, vi})
		}
	}
	found := make([]map[string][]stats.Outlier, len(where))
	for _, metric := range stats.OutlierMetrics {
		groups := make([][]float64, len(where))
		for i, w := range where {
			for _, r := range w.g.Variants[w.v].Runs {
				groups[i] = append(groups[i], outlierValue(metric, r, w.g.Size.Steps)) // absent (older baselines): 0, not judged
			}
		}
		for i, o := range stats.OutlyingRuns(groups) {
			// Short runs are held to a wider floor (stats.OutlierFloor).
			w := where[i]
			o = slices.DeleteFunc(o, func(x stats.Outlier) bool {
				r := w.g.Variants[w.v].Runs[x.Index]
				ratio := x.Ratio()
				if ratio < 1 {
					ratio = 1 / ratio
				}
				return ratio < stats.OutlierFloor(cmp.Or(r["mean"], r["p50"])*float64(w.g.Size.Steps))
			})
			if len(o) > 0 {
				if found[i] == nil {
					found[i] = map[string][]stats.Outlier{}
				}
				found[i][metric] = o
			}
		}
	}
	var out []Contamination
	for i, o := range found {
		if o != nil {
			g, v := where[i].g, where[i].g.Variants[where[i].v]
			out = append(out, Contamination{Case: g.Case, Variant: v.Name, Runs: len(v.Runs), Outliers: o})
		}
	}
	return out
}

// String names the outlying runs and how far each stands from the others:
// "case/variant: runs 3, 4 of 5 have p50 1.96x, 1.98x the median (31.2 ms)".
func (c Contamination) String() string {
	var parts []string
	for _, metric := range stats.OutlierMetrics {
		os := c.Outliers[metric]
		if len(os) == 0 {
			continue
		}
		names := make([]string, len(os))
		ratios := make([]string, len(os))
		for i, o := range os {
			names[i] = fmt.Sprint(o.Index + 1)
			if c.IDs != nil {
				names[i] = c.IDs[o.Index]
			}
			ratios[i] = fmt.Sprintf("%.2fx", o.Ratio())
		}
		runs, have := "runs", "have"
		if len(names) == 1 {
			runs, have = "run", "has"
		}
		what := metric
		if metric == "mean" {
			what = "mean (less its longest step)"
		}
		parts = append(parts, fmt.Sprintf("%s %s of %d %s %s %s the median (%.3g ms)", runs, strings.Join(names, ", "), c.Runs,
			have, what, strings.Join(ratios, ", "), os[0].Median/1e6))
	}
	return fmt.Sprintf("%s/%s: %s", c.Case, c.Variant, strings.Join(parts, "; "))
}

// ContaminatedError refuses to write baselines from runs that disagree:
// the host was disturbed while they ran (exit 3: rerun on a quiet host).
type ContaminatedError struct {
	Dir      string // the results directory, kept
	Variants []Contamination
	// Busy are runs made beside other load (BusyLimit of the host's CPUs).
	Busy []BusyRun
	CPUs int
	// SpeedMoved is the host's calibration over a session whose speed
	// moved beyond results.SpeedMovedLimit while the runs were made; nil
	// when it held.
	SpeedMoved *results.Calibration
	// MovedCases are the cases of that session: all are made again.
	MovedCases []string
}

func (e *ContaminatedError) Error() string {
	var lines []string
	if len(e.Variants) > 0 {
		lines = append(lines, fmt.Sprintf("the host was disturbed during these runs: their timings disagree beyond its noise (%s at %.1fx or 1/%.1fx of its variant's median or beyond, %.1fx for runs under %.0f s, modified z-score above %.1f); no baseline was written:",
			strings.Join(stats.OutlierMetrics, " or "), stats.OutlierRatio, stats.OutlierRatio, stats.OutlierRatioShort, stats.OutlierShortRunNS/1e9, stats.OutlierZ))
	}
	faster := false
	for _, c := range e.Variants {
		lines = append(lines, "  "+c.String())
		for _, os := range c.Outliers {
			for _, o := range os {
				faster = faster || o.Ratio() < 1
			}
		}
	}
	if faster {
		lines = append(lines, "a run far faster than its variant's median means most of the variant's runs were slowed")
	}
	if len(e.Busy) > 0 {
		lines = append(lines, fmt.Sprintf("the host was busy while these runs ran: other processes kept more than %.2f of its %d CPUs busy on average (a load spanning the session slows every run alike, so the runs agree and a gate against them lets a regression pass); no baseline was written:",
			results.BusyLimit(e.CPUs), e.CPUs))
		for _, b := range e.Busy {
			lines = append(lines, "  "+b.String())
		}
		lines = append(lines, "stop what loads the host, or write the baseline anyway with -allow-busy (its provenance records the load)")
	}
	if c := e.SpeedMoved; c != nil {
		lines = append(lines, fmt.Sprintf("the host's speed moved while these runs ran: its calibration varied by %.0f%% over the session (over %.0f%%: another load, a throttled or re-clocked CPU), so their timings are not one host's; no baseline was written; stop what moves it, or write the baseline anyway with -allow-busy (its provenance records the calibration)",
			100*c.Spread(), 100*results.SpeedMovedLimit))
	}
	lines = append(lines, fmt.Sprintf("the runs are kept in %s; rerun on a quiet host (gcjitter system shows what loads this one)", e.Dir))
	return strings.Join(lines, "\n")
}

// runIDs are the IDs of a variant's runs in the manifest, in the order
// FromResults reads them.
func runIDs(m *results.Manifest, caseName, variant string) []string {
	var ids []string
	for _, r := range m.Runs {
		if r.Case == caseName && r.Variant == variant {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// outlierValue is a run's figure for the outlier test. The mean is taken
// without the run's longest step: one scheduling stall moves the mean of a
// short run as much as a disturbance does (a clean CI run's 30-step
// baseline of 60 us steps was refused for one 1.8 ms hiccup, its mean at
// 1.91x), but a disturbance of the host (a CPU burner) slows many steps,
// and the mean of the others still shows it.
func outlierValue(metric string, run map[string]float64, steps int) float64 {
	v := run[metric]
	if metric != "mean" || steps < 2 || v == 0 {
		return v
	}
	longest, ok := run["max"]
	if !ok {
		return v
	}
	return (v*float64(steps) - longest) / float64(steps-1)
}
