package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// printRunSummary prints, per case and variant, the median over runs of
// each run's figures: a first look, without comparison or verdicts.
func printRunSummary(w io.Writer, m *results.Manifest) {
	for _, c := range m.Cases {
		fmt.Fprintf(w, "\ncase %s (%d steps + %d warm-up, %d runs per variant; spikes: steps over %gx their run's median)\n",
			c.Name, c.Steps, c.Warmup, c.Runs, c.SpikeFactor)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "variant\truns ok\tp50\tp90\tp99\tmax\tspikes\tin GC\tgen0/1k\tgen1/1k\tgen2\tgen2 max pause\tGC share\t")
		var notes []string
		for _, v := range c.Variants {
			var sums []*stats.RunSummary
			total := 0
			for _, r := range m.Runs {
				if r.Case != c.Name || r.Variant != v.Name {
					continue
				}
				total++
				if r.Summary != nil {
					sums = append(sums, r.Summary)
				}
				if r.Meta != nil {
					for _, n := range r.Meta.Notes {
						if !slices.Contains(notes, n) {
							notes = append(notes, n)
						}
					}
				}
			}
			if len(sums) == 0 {
				fmt.Fprintf(tw, "%s\t0/%d\t\t\t\t\t\t\t\t\t\t\t\t\n", v.Name, total)
				continue
			}
			med := func(f func(*stats.RunSummary) float64) float64 {
				xs := make([]float64, len(sums))
				for i, s := range sums {
					xs[i] = f(s)
				}
				slices.Sort(xs)
				return stats.Quantile(xs, 0.5)
			}
			per1k := func(f func(*stats.RunSummary) int) func(*stats.RunSummary) float64 {
				return func(s *stats.RunSummary) float64 { return 1000 * float64(f(s)) / float64(max(s.Steps, 1)) }
			}
			spikes, inGC := 0, 0
			for _, s := range sums {
				spikes += s.Spikes
				inGC += s.SpikesWithGC
			}
			attribution := "-"
			if spikes > 0 {
				attribution = fmt.Sprintf("%.0f%%", 100*float64(inGC)/float64(spikes))
			}
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%.0f\t%s\t%.0f\t%.1f\t%.0f\t%s\t%.2f%%\t\n", v.Name, len(sums), total,
				ms(med(func(s *stats.RunSummary) float64 { return s.P50 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.P90 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.P99 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.Max })),
				med(func(s *stats.RunSummary) float64 { return float64(s.Spikes) }),
				attribution,
				med(per1k(func(s *stats.RunSummary) int { return s.Collections[0] })),
				med(per1k(func(s *stats.RunSummary) int { return s.Collections[1] })),
				med(func(s *stats.RunSummary) float64 { return float64(s.Collections[2]) }),
				ms(med(func(s *stats.RunSummary) float64 { return s.MaxPauseNS[2] })),
				100*med(func(s *stats.RunSummary) float64 { return s.GCShare }))
		}
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	fmt.Fprintln(w, "\nper variant, medians over runs: step-time quantiles; spikes and gen2 are counts per run; in GC: share of spikes with a collection in them")
}
