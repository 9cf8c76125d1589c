// Package report renders comparisons for people and for machines. This
// file holds the terminal table; the other formats share its numbers.
package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Text writes a comparison as benchstat-like tables, one per benchmark:
// each metric's old and new median with its 95% interval, the change with
// its interval, the Holm-adjusted p-value, the runs, and the verdict; then
// the verdicts that need attention, with their reasons.
func Text(w io.Writer, c *results.Comparison) { TextColor(w, c, false) }

// TextColor is Text with verdicts coloured (red regressed, green improved,
// yellow unknown) when color is true: for a terminal, and never when
// NO_COLOR is set (the caller decides; see ColorFor).
func TextColor(w io.Writer, c *results.Comparison, color bool) {
	fmt.Fprintf(w, "old: %s\nnew: %s\n", c.Old.Path, c.New.Path)
	tests, families := c.Tests()
	fmt.Fprintf(w, "runs are the unit: medians of per-run values with intervals; change with its interval and the test that decided it; p Holm-adjusted over %d tests of the primary metrics in %d %s (family-wise alpha %g); descriptive: reported, not tested\n",
		tests, families, map[bool]string{true: "family", false: "families"}[families == 1], c.Alpha)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	var bench string
	var tw *tabwriter.Writer
	for _, r := range c.Rows {
		if r.Bench != bench {
			if tw != nil {
				tw.Flush()
			}
			bench = r.Bench
			fmt.Fprintf(w, "\n%s\n", bench)
			spikeLine(w, c, bench)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  metric\told\tnew\tchange [interval]\tp\tn\tverdict")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d+%d\t%s\n", r.Metric,
			fmtEst(r.OldEst, r.Unit, r.Exact), fmtEst(r.NewEst, r.Unit, r.Exact), fmtChange(r), fmtP(r), len(r.Old), len(r.New), paint(fmtVerdict(c, r), r.Verdict, color))
	}
	if tw != nil {
		tw.Flush()
	}
	explainText(w, c)
	counts := map[stats.Verdict]int{}
	for _, r := range c.Rows {
		counts[r.Verdict]++
	}
	if c.Reference != "" {
		fmt.Fprintf(w, "\nagainst %s: %d worse, %d better, %d same, %d unknown (undecided), %d descriptive\n",
			c.Reference, counts[stats.Regressed], counts[stats.Improved], counts[stats.Same], counts[stats.Unknown], counts[stats.Descriptive])
	} else {
		fmt.Fprintf(w, "\nverdicts: %d regressed, %d improved, %d same, %d unknown (undecided: not a pass), %d descriptive\n",
			counts[stats.Regressed], counts[stats.Improved], counts[stats.Same], counts[stats.Unknown], counts[stats.Descriptive])
	}
	// What a pass is worth: the smallest change of the typical step and the
	// tail this size could see.
	if s := c.SensitivityText(); s != "" {
		fmt.Fprintln(w, s)
	}
	for _, v := range []stats.Verdict{stats.Regressed, stats.Improved, stats.Unknown} {
		for _, r := range c.Rows {
			if r.Verdict == v {
				fmt.Fprintf(w, "%s: %s %s: %s\n", paint(c.Word(v), v, color), r.Bench, r.Metric, r.Reason)
			}
		}
	}
	for _, vv := range c.VariantVerdicts() {
		if len(vv.FewerLonger) > 0 {
			fmt.Fprintf(w, "%s: %s: %s\n", paint("unknown", stats.Unknown, color), vv.Bench, vv.Reason)
		}
	}
	for _, r := range c.Rows {
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "warning: %s %s: %s\n", r.Bench, r.Metric, warn)
		}
	}
}

// spikeLine describes each side's spikes for a gcjitter results directory:
// rate, attribution to collections, period.
func spikeLine(w io.Writer, c *results.Comparison, bench string) {
	if s := spikeText(c, bench); s != "" {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// spikeText is a benchmark's spike line ("" for sides without run
// summaries, e.g. benchfmt files): text and Markdown print the same words.
func spikeText(c *results.Comparison, bench string) string {
	var parts []string
	for i, sp := range benchSpikes(c, bench) {
		if sp != nil {
			parts = append(parts, sp.text([2]string{"old", "new"}[i]))
		}
	}
	return strings.Join(parts, "; ")
}

// sideSpikes is one side's spikes in a benchmark, pooled over its runs;
// JSON carries the same figures the spike line prints.
type sideSpikes struct {
	Runs, Steps, Spikes, WithGC int
	// Period is the median spike period of the runs that have one, when
	// most runs do; 0 otherwise.
	Period float64
}

// benchSpikes is each side's spikes (nil where a side has no run
// summaries for bench).
func benchSpikes(c *results.Comparison, bench string) [2]*sideSpikes {
	var out [2]*sideSpikes
	for i, d := range []*results.Data{c.Old, c.New} {
		runs := d.Runs[bench]
		if len(runs) == 0 {
			continue
		}
		sp := &sideSpikes{Runs: len(runs)}
		var periods []float64
		for _, r := range runs {
			sp.Spikes += r.Spikes
			sp.WithGC += r.SpikesWithGC
			sp.Steps += r.Steps
			if r.SpikePeriod > 0 {
				periods = append(periods, r.SpikePeriod)
			}
		}
		if 2*len(periods) > len(runs) {
			sort.Float64s(periods)
			sp.Period = stats.Quantile(periods, 0.5)
		}
		out[i] = sp
	}
	return out
}

func (sp *sideSpikes) stepsPerRun() int { return sp.Steps / sp.Runs }

func (sp *sideSpikes) perKStep() float64 {
	return 1000 * float64(sp.Spikes) / float64(max(sp.Steps, 1))
}

// withGCFraction is the share of spikes that held a collection; NaN
// without spikes.
func (sp *sideSpikes) withGCFraction() float64 {
	if sp.Spikes == 0 {
		return math.NaN()
	}
	return float64(sp.WithGC) / float64(sp.Spikes)
}

func (sp *sideSpikes) text(label string) string {
	s := fmt.Sprintf("%s %d runs x %d steps: %.1f spikes/kstep", label, sp.Runs, sp.stepsPerRun(), sp.perKStep())
	if sp.Spikes > 0 {
		s += fmt.Sprintf(", %.0f%% in a collection", 100*sp.withGCFraction())
	}
	if sp.Period > 0 {
		s += fmt.Sprintf(", periodic every %.0f steps", sp.Period)
	}
	return s
}

// fmtEst prints a median and its interval; an exact count has none.
func fmtEst(e stats.Estimate, unit string, exact bool) string {
	if e.N == 0 || math.IsNaN(e.Center) {
		return "-"
	}
	s := stats.FormatValue(e.Center, unit)
	if exact {
		return s
	}
	if math.IsInf(e.Lo, 0) || math.IsInf(e.Hi, 0) {
		return s + " ±∞"
	}
	if e.Center == 0 {
		if e.Lo == 0 && e.Hi == 0 {
			return s + " ±0"
		}
		return s
	}
	return fmt.Sprintf("%s ±%.0f%%", s, 100*math.Max(e.Center-e.Lo, e.Hi-e.Center)/math.Abs(e.Center))
}

func fmtChange(r *stats.Row) string {
	if math.IsNaN(r.Change) {
		return "-"
	}
	if r.Exact || r.ChangeLo == r.ChangeHi {
		return stats.Pct(r.Change)
	}
	return fmt.Sprintf("%s [%s, %s]", stats.Pct(r.Change), stats.Pct(r.ChangeLo), stats.Pct(r.ChangeHi))
}

func fmtP(r *stats.Row) string {
	switch {
	case r.Exact:
		return "exact"
	case math.IsNaN(r.PAdj):
		return "-"
	case r.PAdj < 0.001:
		return fmt.Sprintf("%.0e", r.PAdj)
	}
	return fmt.Sprintf("%.3f", r.PAdj)
}

// fmtVerdict is the row's verdict in the comparison's words
// (results.Comparison.Word): against a reference variant, "worse" and
// "better"; old -> new, "regressed" and "improved".
func fmtVerdict(c *results.Comparison, r *stats.Row) string {
	if r.Explains() {
		return "explains" // a mechanism's change under its cost floor: the cause, not a verdict
	}
	if r.Verdict == stats.Unknown && r.RunsNeeded > 0 {
		return fmt.Sprintf("unknown (+%d runs)", r.MoreRuns())
	}
	return c.Word(r.Verdict)
}

// fmtChangeReadable is fmtChange where an interval means something, and
// the change with "too few runs (needs N)" where it is too wide to read
// (stats.Row.Wide): the page's verdict rows.
func fmtChangeReadable(r *stats.Row) string {
	wide, needs := r.Wide()
	if !wide {
		return fmtChange(r)
	}
	if needs > 0 && needs < stats.MaxRunsNeeded {
		return fmt.Sprintf("%s, too few runs (needs %d)", stats.Pct(r.Change), needs)
	}
	return stats.Pct(r.Change) + ", too few runs"
}

// paint wraps a verdict word in its ANSI colour. tabwriter counts the
// escape bytes as width, but every row of the column gets the same number
// (reset included), so alignment holds.
func paint(s string, v stats.Verdict, color bool) string {
	if !color {
		return s
	}
	code := map[stats.Verdict]string{stats.Regressed: "31;1", stats.Improved: "32", stats.Unknown: "33", stats.Same: "0"}[v]
	return "\033[" + code + "m" + s + "\033[0m"
}

// ColorFor reports whether output to w should be coloured: a terminal, and
// NO_COLOR unset (https://no-color.org).
func ColorFor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
