package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// BenchDrift is how much each metric of one benchmark moved between
// sessions (results directories) of one host: stats.SessionDrift of the
// sessions' per-run values.
type BenchDrift struct {
	Bench   string
	Metrics []MetricDrift // in catalogue order
}

// MetricDrift is one metric's session spread beside the catalogue's
// assumed drift (stats.Metric.Drift).
type MetricDrift struct {
	Metric    stats.Metric
	Spread    stats.SessionSpread
	Catalogue float64
}

// SessionDrifts measures the session drift of every metric a gate allows
// one (stats.Metric.Drift above 0) of the benchmarks that at least two of
// the sessions ran.
func SessionDrifts(sessions []*Data) []BenchDrift {
	var benches []string
	count := map[string]int{}
	for _, d := range sessions {
		for _, b := range d.Benches {
			if count[b]++; count[b] == 2 {
				benches = append(benches, b)
			}
		}
	}
	var out []BenchDrift
	for _, b := range benches {
		bd := BenchDrift{Bench: b}
		for _, m := range stats.Metrics {
			if m.Drift == 0 {
				continue // exact counts, rules against the run's own noise, memory: no drift applies
			}
			var per [][]float64
			for _, d := range sessions {
				if xs := d.MetricValues(b, m); len(xs) > 0 {
					per = append(per, xs)
				}
			}
			if len(per) < 2 {
				continue
			}
			bd.Metrics = append(bd.Metrics, MetricDrift{Metric: m, Spread: stats.SessionDrift(per), Catalogue: m.Drift})
		}
		out = append(out, bd)
	}
	return out
}

// MetricValues are the finite per-run values of m for bench, from its
// summaries (a results directory) or its values (a benchfmt file).
func (d *Data) MetricValues(bench string, m stats.Metric) []float64 {
	var out []float64
	if runs := d.Runs[bench]; len(runs) > 0 {
		for _, r := range runs {
			if v, ok := m.Measured(r); ok && !math.IsInf(v, 0) {
				out = append(out, v)
			}
		}
		return out
	}
	for unit, xs := range d.Values[bench] {
		if mt, ok := stats.MetricByUnit(unit); ok && mt.Name == m.Name {
			return slices.Clone(xs)
		}
	}
	return nil
}

// WriteDriftText writes the measured drifts as a table per benchmark,
// with the drift a gate against one session's baseline would need (√2 of
// a session's SD, at its 90% upper bound) beside the catalogue's, and the
// case setting that carries it.
func WriteDriftText(w io.Writer, drifts []BenchDrift) {
	for _, bd := range drifts {
		if len(bd.Metrics) == 0 {
			continue
		}
		s := bd.Metrics[0].Spread
		fmt.Fprintf(w, "%s: %d sessions, %d runs\n", bd.Bench, s.Sessions, s.Runs)
		fmt.Fprintf(w, "  %-14s %-11s %-13s %-22s %s\n", "metric", "run spread", "session SD", "drift [90% upper]", "catalogue")
		var setting []string
		for _, md := range bd.Metrics {
			sp := md.Spread
			upper := "-"
			if !math.IsInf(sp.Upper, 1) {
				upper = pct(sp.DriftUpper())
				setting = append(setting, fmt.Sprintf("%s: %s", md.Metric.Name, roundPct(sp.DriftUpper())))
			}
			fmt.Fprintf(w, "  %-14s %-11s %-13s %-22s %s\n", md.Metric.Name, pct(sp.Within), pct(sp.SD),
				fmt.Sprintf("%s [%s]", pct(sp.Drift()), upper), pct(md.Catalogue))
		}
		if len(setting) > 0 {
			fmt.Fprintf(w, "  as the case's gate (the upper bounds): gate: {drift: {%s}}\n", strings.Join(setting, ", "))
		}
	}
	fmt.Fprintln(w, "drift: the SD of the difference between two sessions' levels beyond their runs' spread (√2 x one session's SD);")
	fmt.Fprintln(w, "a gate against one session's baseline adds it to the runs' noise. Sessions close in time drift less than a week's nights.")
}

// pct is a spread as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// roundPct is a fraction as a whole percent, rounded up: a setting.
func roundPct(f float64) string { return fmt.Sprintf("%.0f%%", math.Ceil(100*f)) }
