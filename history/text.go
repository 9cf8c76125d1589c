package history

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/gcjitter/gcjitter/stats"
)

// formatMetric prints a metric's value in its unit, as benchstat would.
func formatMetric(metric string, v float64) string {
	m, ok := stats.MetricByName(metric)
	if !ok {
		return fmt.Sprintf("%.4g", v)
	}
	v, unit := benchunit.Tidy(v, m.Unit)
	return stats.FormatValue(v, unit)
}

// nightSummary is a night's runs as benchstat summarises a sample: the
// median with its 95% confidence interval as a percentage ("41.2ms ± 3%";
// "∞" when the night has too few runs for one), from the stored summary.
func nightSummary(metric string, n Night) string {
	s := benchmath.Summary{Center: n.Summary.Median, Lo: n.Summary.Lo, Hi: n.Summary.Hi, Confidence: 0.95}
	return formatMetric(metric, s.Center) + " ± " + s.PctRangeString()
}

const nightFormat = "2006-01-02 15:04"

// WriteSeries prints each series as a table of nights: when, label, runs,
// the night's median ± its interval, and what changed in the environment
// since the night before; with the runs read (QueryRuns, show -runs),
// each run's value too.
func WriteSeries(w io.Writer, series []*Series) {
	for i, se := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%d nights)\n", se.Key, len(se.Nights))
		withRuns := slices.ContainsFunc(se.Nights, func(n Night) bool { return n.Values != nil })
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if withRuns {
			fmt.Fprintln(tw, "  night\tlabel\thost\truns\tmedian\tenvironment\tvalues")
		} else {
			fmt.Fprintln(tw, "  night\tlabel\thost\truns\tmedian\tenvironment")
		}
		for j, n := range se.Nights {
			env := ""
			if j > 0 {
				env = strings.Join(se.Nights[j-1].Env.Changes(n.Env), "; ")
			}
			if n.Partial != "" {
				env = strings.TrimPrefix(strings.Join([]string{env, "(partial)"}, " "), " ")
			}
			line := fmt.Sprintf("  %s\t%s\t%s\t%d\t%s\t%s", n.Started.Local().Format(nightFormat), orDash(n.Label), n.Host, n.Summary.Runs, nightSummary(se.Key.Metric, n), env)
			if withRuns {
				vs := make([]string, len(n.Values))
				for i, v := range n.Values {
					vs[i] = formatMetric(se.Key.Metric, v)
				}
				line += "\t" + strings.Join(vs, " ")
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteFindings prints change points, newest first within each series'
// order: the night the level moved, by how much (with its interval), how
// sure, and what changed in the environment then.
func WriteFindings(w io.Writer, fs []Finding) {
	if len(fs) == 0 {
		fmt.Fprintln(w, "no change points")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "series\tfirst night after\tlabel\tbefore\tafter\tchange [95% interval]\tp\tverdict\tenvironment")
	for _, f := range fs {
		env := strings.Join(f.EnvChanges, "; ")
		if env == "" {
			env = "unchanged"
		}
		if len(f.Near) > 0 {
			env += " (near: " + strings.Join(f.Near, "; ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s [%s, %s]\t%.3f\t%s\t%s\n", f.Key, f.First.Started.Local().Format(nightFormat), orDash(f.First.Label),
			formatMetric(f.Key.Metric, f.Before), formatMetric(f.Key.Metric, f.After), stats.Pct(f.Size), stats.Pct(f.Lo), stats.Pct(f.Hi), f.P, f.Verdict(), env)
	}
	tw.Flush()
}

// Verdict is the finding in one word.
func (f Finding) Verdict() string {
	switch {
	case f.Regression:
		return "regression"
	case f.Improvement:
		return "improvement"
	}
	return "shift"
}

// Since parses -since: a date (2026-11-01), a time (RFC 3339), a Go
// duration back from now (72h) or a number of days (7d).
func Since(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err == nil && n >= 0 && fmt.Sprint(n) == days {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("-since %q: give a date (2026-11-01), a time (RFC 3339), a duration (72h) or days (7d)", s)
}
