package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// VariantSummary is a variant's first look, without comparison: per
// figure, the median over its completed runs. `gcjitter run` prints it;
// `gcjitter report RESULTS` renders it in every format.
type VariantSummary struct {
	Case    string `json:"case"`
	Variant string `json:"variant"`
	Policy  string `json:"policy"`
	RunsOK  int    `json:"runs_ok"`
	Runs    int    `json:"runs"`
	// Medians over the completed runs; times in seconds as elsewhere in
	// the JSON report. Zero when no run completed.
	P50       float64 `json:"p50"`
	P90       float64 `json:"p90"`
	P99       float64 `json:"p99"`
	Max       float64 `json:"max"`
	Spikes    float64 `json:"spikes_per_run"`
	Gen0PerK  float64 `json:"gen0_per_kstep"`
	Gen1PerK  float64 `json:"gen1_per_kstep"`
	Gen2      float64 `json:"gen2_per_run"`
	Gen2Pause float64 `json:"gen2_max_pause"`
	GCShare   float64 `json:"gc_share"`
	// SpikesInGC is the pooled share of spikes with a collection in them
	// (nil without spikes).
	SpikesInGC *float64 `json:"spikes_in_gc"`
	// Tail is how much of the tail GC explains, pooled over the runs of a
	// traced or imported job (nil for the synthetic cases' variants).
	Tail *stats.TailGC `json:"tail,omitempty"`
	// Memory is the price of the policy (nil when no run recorded RSS).
	Memory *VariantMemory `json:"memory,omitempty"`
	// Device is how its steps met an asynchronous device (nil without
	// device timing).
	Device *VariantDevice `json:"device,omitempty"`
	Notes  []string       `json:"notes,omitempty"`
}

// VariantSummaries summarises every variant of m, in case and variant order.
func VariantSummaries(m *results.Manifest) []VariantSummary {
	var out []VariantSummary
	for _, c := range m.Cases {
		for _, v := range c.Variants {
			vs := VariantSummary{Case: c.Name, Variant: v.Name, Policy: v.Policy}
			var sums []*stats.RunSummary
			var runs []*results.Run
			for _, r := range m.Runs {
				if r.Case != c.Name || r.Variant != v.Name {
					continue
				}
				vs.Runs++
				runs = append(runs, r)
				if r.Summary != nil {
					sums = append(sums, r.Summary)
				}
				if r.Meta != nil {
					for _, n := range r.Meta.Notes {
						if !slices.Contains(vs.Notes, n) {
							vs.Notes = append(vs.Notes, n)
						}
					}
				}
			}
			if n, most := results.BusyOf(runs, m.Host.CPUs); n > 0 {
				vs.Notes = append(vs.Notes, fmt.Sprintf("%s: %d of %d runs beside other load (other processes kept up to %.2f of the host's %d CPUs busy, over %.2f): their timings are partly the host's",
					v.Name, n, vs.Runs, most, m.Host.CPUs, results.BusyLimit(m.Host.CPUs)))
			}
			vs.RunsOK = len(sums)
			if len(sums) > 0 {
				summarizeRuns(&vs, sums)
				vs.Memory = variantMemory(sums, m.Host.MemLimit, m.Host.MemLimitFrom, 1e9*vs.P50)
				vs.Device = variantDevice(sums)
			}
			out = append(out, vs)
		}
	}
	return out
}

func summarizeRuns(vs *VariantSummary, sums []*stats.RunSummary) {
	med := func(f func(*stats.RunSummary) float64) float64 {
		xs := make([]float64, len(sums))
		for i, s := range sums {
			xs[i] = f(s)
		}
		slices.Sort(xs)
		return stats.Quantile(xs, 0.5)
	}
	perK := func(g int) func(*stats.RunSummary) float64 {
		return func(s *stats.RunSummary) float64 { return 1000 * float64(s.Collections[g]) / float64(max(s.Steps, 1)) }
	}
	const ns = 1e-9
	vs.P50 = ns * med(func(s *stats.RunSummary) float64 { return s.P50 })
	vs.P90 = ns * med(func(s *stats.RunSummary) float64 { return s.P90 })
	vs.P99 = ns * med(func(s *stats.RunSummary) float64 { return s.P99 })
	vs.Max = ns * med(func(s *stats.RunSummary) float64 { return s.Max })
	vs.Spikes = med(func(s *stats.RunSummary) float64 { return float64(s.Spikes) })
	vs.Gen0PerK, vs.Gen1PerK = med(perK(0)), med(perK(1))
	vs.Gen2 = med(func(s *stats.RunSummary) float64 { return float64(s.Collections[2]) })
	vs.Gen2Pause = ns * med(func(s *stats.RunSummary) float64 { return s.MaxPauseNS[2] })
	vs.GCShare = med(func(s *stats.RunSummary) float64 { return s.GCShare })
	spikes, inGC := 0, 0
	for _, s := range sums {
		spikes += s.Spikes
		inGC += s.SpikesWithGC
	}
	if spikes > 0 {
		share := float64(inGC) / float64(spikes)
		vs.SpikesInGC = &share
	}
	if cases.Observed(vs.Variant) {
		var tail stats.TailGC
		for _, s := range sums {
			if s.Tail == nil { // summarised before tails were
				return
			}
			tail = tail.Add(*s.Tail)
		}
		vs.Tail = &tail
	}
}

func (vs VariantSummary) inGCText() string {
	if vs.SpikesInGC == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**vs.SpikesInGC)
}

// Cells are the table's columns after the variant's name, the same in
// text and Markdown; empty figures when no run completed.
func (vs VariantSummary) Cells() []string {
	runs := fmt.Sprintf("%d/%d", vs.RunsOK, vs.Runs)
	if vs.RunsOK == 0 {
		return append([]string{runs}, make([]string, 11+len(memoryHeader))...)
	}
	return append([]string{runs, stats.MS(1e9 * vs.P50), stats.MS(1e9 * vs.P90), stats.MS(1e9 * vs.P99), stats.MS(1e9 * vs.Max), fmt.Sprintf("%.0f", vs.Spikes), vs.inGCText(),
		fmt.Sprintf("%.0f", vs.Gen0PerK), fmt.Sprintf("%.1f", vs.Gen1PerK), fmt.Sprintf("%.0f", vs.Gen2), stats.MS(1e9 * vs.Gen2Pause),
		fmt.Sprintf("%.2f%%", 100*vs.GCShare)}, vs.memoryCells()...)
}

// policyHeader names the variants table's columns, in text, Markdown and
// HTML.
var policyHeader = append([]string{"variant", "runs ok", "p50", "p90", "p99", "max", "spikes", "in GC", "gen0/1k", "gen1/1k", "gen2", "gen2 max pause", "GC share"}, memoryHeader...)

// RunSummaryText prints, per case, the variants' table: what `gcjitter
// run` shows at the end.
func RunSummaryText(w io.Writer, m *results.Manifest) {
	all := VariantSummaries(m)
	for _, c := range m.Cases {
		fmt.Fprintf(w, "\ncase %s (%d steps + %d warm-up, %s per variant; spike: %s)\n",
			c.Name, c.Steps, c.Warmup, runsPerVariant(m, c), c.SpikeRule())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(policyHeader, "\t")+"\t")
		var notes []string
		for _, vs := range all {
			if vs.Case != c.Name {
				continue
			}
			for _, n := range vs.Notes {
				if !slices.Contains(notes, n) {
					notes = append(notes, n)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", vs.Variant, strings.Join(vs.Cells(), "\t"))
		}
		tw.Flush()
		for _, vs := range all {
			if vs.Case == c.Name && vs.Tail != nil {
				fmt.Fprintf(w, "%s: %s\n", vs.Variant, vs.Tail)
			}
		}
		for _, l := range memoryTradeLines(caseVariants(all, c.Name), "default") {
			fmt.Fprintln(w, l)
		}
		for _, l := range memoryWhyLines(caseVariants(all, c.Name)) {
			fmt.Fprintln(w, l)
		}
		for _, vs := range all {
			if vs.Case == c.Name && vs.Device != nil {
				fmt.Fprintln(w, vs.deviceLine())
			}
		}
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	fmt.Fprintln(w, "\nper variant, medians over runs: step-time quantiles; spikes and gen2 are counts per run; in GC: share of spikes that are GC spikes (their collections explain most of the excess)")
	if slices.ContainsFunc(all, func(vs VariantSummary) bool { return vs.Memory != nil }) {
		fmt.Fprintln(w, memoryLegend(m))
	}
}

// runsPerVariant is the case's runs a variant, as a range where they
// differ (run's advise rounds add runs of two variants only).
func runsPerVariant(m *results.Manifest, c results.Case) string {
	n := map[string]int{}
	for _, r := range m.Runs {
		if r.Case == c.Name {
			n[r.Variant]++
		}
	}
	lo, hi := c.Runs, c.Runs
	if len(n) > 0 {
		lo, hi = slices.Min(slices.Collect(maps.Values(n))), slices.Max(slices.Collect(maps.Values(n)))
	}
	if lo == hi {
		return fmt.Sprintf("%d runs", c.Runs)
	}
	return fmt.Sprintf("%d-%d runs", lo, hi)
}

// runSummaryMarkdown is the same table in Markdown.
func runSummaryMarkdown(w io.Writer, m *results.Manifest) {
	all := VariantSummaries(m)
	for _, c := range m.Cases {
		fmt.Fprintf(w, "\n### %s\n\n%d steps + %d warm-up, %s per variant; spike: %s; medians over runs\n\n",
			c.Name, c.Steps, c.Warmup, runsPerVariant(m, c), c.SpikeRule())
		fmt.Fprintf(w, "| %s |\n", strings.Join(policyHeader, " | "))
		fmt.Fprintln(w, "|---"+strings.Repeat("|---:", len(policyHeader)-1)+"|")
		for _, vs := range all {
			if vs.Case != c.Name {
				continue
			}
			fmt.Fprintf(w, "| `%s` | %s |\n", vs.Variant, strings.Join(vs.Cells(), " | "))
		}
		for _, vs := range all {
			if vs.Case == c.Name && vs.Tail != nil {
				fmt.Fprintf(w, "\n`%s`: %s\n", vs.Variant, vs.Tail)
			}
		}
	}
}
