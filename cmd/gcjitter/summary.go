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
		fmt.Fprintf(w, "\ncase %s (%d steps + %d warm-up, %d runs per variant)\n", c.Name, c.Steps, c.Warmup, c.Runs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "variant\truns ok\tp50\tp90\tp99\tmax\tspikes/1k\tGC share\tgen0/1k\tgen1/1k\tgen2/1k\tgen2 max pause\t")
		for _, v := range c.Variants {
			var sums []*stats.RunSummary
			total := 0
			for _, r := range m.Runs {
				if r.Case == c.Name && r.Variant == v.Name {
					total++
					if r.Summary != nil {
						sums = append(sums, r.Summary)
					}
				}
			}
			if len(sums) == 0 {
				fmt.Fprintf(tw, "%s\t0/%d\t\t\t\t\t\t\t\t\t\t\t\n", v.Name, total)
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
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%.1f\t%.2f%%\t%.0f\t%.1f\t%.1f\t%s\t\n", v.Name, len(sums), total,
				ms(med(func(s *stats.RunSummary) float64 { return s.P50 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.P90 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.P99 })),
				ms(med(func(s *stats.RunSummary) float64 { return s.Max })),
				med(per1k(func(s *stats.RunSummary) int { return s.Spikes })),
				100*med(func(s *stats.RunSummary) float64 { return s.GCShare }),
				med(per1k(func(s *stats.RunSummary) int { return s.Collections[0] })),
				med(per1k(func(s *stats.RunSummary) int { return s.Collections[1] })),
				med(per1k(func(s *stats.RunSummary) int { return s.Collections[2] })),
				ms(med(func(s *stats.RunSummary) float64 { return s.MaxPauseNS[2] })))
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\nmedians over runs; spikes: steps over", spikeFactors(m), "x their run's median")
}

func spikeFactors(m *results.Manifest) string {
	if len(m.Cases) == 0 {
		return "?"
	}
	return fmt.Sprint(m.Cases[0].SpikeFactor)
}
