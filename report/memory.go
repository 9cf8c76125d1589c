package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// VariantMemory is what a variant's memory did, medians over its runs
// that recorded RSS, and how long the host's memory would last at it.
type VariantMemory struct {
	RSSPeak   float64 `json:"rss_peak_bytes"`
	RSSGrowth float64 `json:"rss_growth_bytes_per_kstep"`
	// The growth's 90% interval (medians of the runs' ends) and its class
	// (stats.PoolMem): grows, bounded or undecided, with the measured
	// steps a run needs to decide an undecided one.
	RSSGrowthLo *float64       `json:"rss_growth_lo_bytes_per_kstep"`
	RSSGrowthHi *float64       `json:"rss_growth_hi_bytes_per_kstep"`
	Class       stats.MemClass `json:"memory_class,omitempty"`
	StepsNeeded int            `json:"memory_steps_needed,omitempty"`
	// Limit is the memory limit the time to it is reckoned against, and
	// LimitFrom where it came from (the cgroup, MemTotal, -mem-limit).
	Limit     int64  `json:"mem_limit_bytes,omitempty"`
	LimitFrom string `json:"mem_limit_from,omitempty"`
	// StepsToLimit and HoursToLimit (at the median step time) are at the
	// growth interval's lower end, SoonestHours at its upper end; nil
	// unless the memory grows (bounded: never; undecided: unknown) and
	// the limit is known.
	StepsToLimit *float64 `json:"steps_to_limit"`
	HoursToLimit *float64 `json:"hours_to_limit"`
	SoonestHours *float64 `json:"hours_to_limit_soonest,omitempty"`
	// Why is the class in the collector's words (stats.MemPool.Why), ""
	// where the collector's accounting was not observed. NextFull is the
	// predicted step of a first full collection the runs did not reach,
	// and PeakAtNext the RSS by then: memory that grows until it.
	Why        string   `json:"memory_why,omitempty"`
	NextFull   int      `json:"first_full_collection_predicted_step,omitempty"`
	PeakAtNext *float64 `json:"rss_peak_predicted_bytes,omitempty"`
}

// variantMemory summarises the runs' memory; nil when none recorded RSS
// (results written before, or imported traces).
func variantMemory(sums []*stats.RunSummary, limit int64, from string, stepNS float64) *VariantMemory {
	var peaks, growths []float64
	var mems []*stats.Mem
	most := 0
	for _, s := range sums {
		if s.RSS != nil && s.RSS.Samples >= 2 {
			peaks, growths = append(peaks, s.RSS.Peak), append(growths, s.RSS.Growth)
			mems, most = append(mems, s.RSS), max(most, s.Steps)
		}
	}
	if len(peaks) == 0 {
		return nil
	}
	slices.Sort(peaks)
	slices.Sort(growths)
	pool := stats.PoolMem(mems, most)
	vm := &VariantMemory{RSSPeak: stats.Quantile(peaks, 0.5), RSSGrowth: stats.Quantile(growths, 0.5), Limit: limit, LimitFrom: from,
		RSSGrowthLo: stats.Finite(pool.Lo), RSSGrowthHi: stats.Finite(pool.Hi), Class: pool.Class, StepsNeeded: pool.StepsNeeded, Why: pool.Why}
	if pool.NextFull > 0 {
		vm.NextFull, vm.PeakAtNext = pool.NextFull, stats.Finite(pool.PeakAtNext)
	}
	if pool.Class != stats.MemGrows || pool.NextFull > 0 && limit > 0 && pool.PeakAtNext < float64(limit) {
		// Growth that stops at a full collection below the limit never
		// reaches it.
		return vm
	}
	if steps, hours := stats.TimeToLimit(pool.Lo, vm.RSSPeak, float64(limit), stepNS); !math.IsInf(steps, 1) {
		vm.StepsToLimit, vm.HoursToLimit = &steps, &hours
	}
	if _, hours := stats.TimeToLimit(pool.Hi, vm.RSSPeak, float64(limit), stepNS); !math.IsInf(hours, 1) {
		vm.SoonestHours = &hours
	}
	return vm
}

// memoryCells are the table's memory columns (memoryHeader).
func (vs VariantSummary) memoryCells() []string {
	m := vs.Memory
	if m == nil {
		return []string{"-", "-", "-", "-"}
	}
	class, to := string(m.Class), "never"
	switch {
	case m.Class == "":
		class, to = "-", "?"
	case m.Class == stats.MemUndecided:
		class, to = fmt.Sprintf("undecided: %d steps", m.StepsNeeded), "?"
	case m.NextFull > 0 && m.Class == stats.MemBounded:
		class = fmt.Sprintf("bounded, full at %d", m.NextFull)
	case m.NextFull > 0:
		class = fmt.Sprintf("grows to step %d", m.NextFull)
		if m.HoursToLimit == nil && m.PeakAtNext != nil {
			to = "never: peak " + stats.Bytes(*m.PeakAtNext)
		}
		if m.HoursToLimit != nil {
			to = stats.Hours(*m.HoursToLimit)
		}
	case m.HoursToLimit != nil:
		soonest := *m.HoursToLimit
		if m.SoonestHours != nil {
			soonest = *m.SoonestHours
		}
		to = stats.HoursRange(soonest, *m.HoursToLimit)
	}
	if m.Limit == 0 {
		to = "?"
	}
	return []string{stats.Bytes(m.RSSPeak), stats.Bytes(m.RSSGrowth), class, to}
}

// memoryHeader names the memory columns: peak RSS, its growth per 1000
// steps, its class, and the time until the memory limit at that growth.
var memoryHeader = []string{"peak RSS", "RSS/1k steps", "memory", "to limit"}

// neverFreesRatio is how much faster a variant's RSS must grow than the
// reference's, and neverFreesTail how much lower its p99 must be, for the
// summary to say the calm tail is bought with memory.
const (
	neverFreesRatio = 10
	neverFreesTail  = -0.05
)

// memoryTradeLines say plainly, for each variant of one case that is
// faster at the tail than ref (the default policy) because it does not
// free what ref's collections do, what it costs:
// "disabled: p99 -40% against default, but RSS grows 2.9 GiB per 1000
// steps (default: 12 MiB): it never frees cyclic garbage; at this rate
// 16 GiB lasts 5.1 h".
func memoryTradeLines(vss []VariantSummary, ref string) []string {
	i := slices.IndexFunc(vss, func(v VariantSummary) bool { return v.Variant == ref })
	if i < 0 || vss[i].Memory == nil || vss[i].P99 <= 0 {
		return nil
	}
	base := vss[i]
	var out []string
	for _, vs := range vss {
		m := vs.Memory
		if vs.Variant == ref || m == nil || vs.RunsOK == 0 {
			continue
		}
		tail := vs.P99/base.P99 - 1
		floor := math.Max(stats.RSSGrowthFloorAbs, neverFreesRatio*base.Memory.RSSGrowth)
		if tail > neverFreesTail || m.RSSGrowth <= floor {
			continue
		}
		why := "its collections leave the cyclic garbage it keeps"
		switch {
		case vs.Gen0PerK == 0 && vs.Gen1PerK == 0 && vs.Gen2 == 0:
			why = "it never frees cyclic garbage"
		case vs.Gen2 == 0:
			why = "its full collections never run, so cyclic garbage that outlives a young collection is never freed"
		}
		line := fmt.Sprintf("%s: p99 %s against %s, but RSS grows %s per 1000 steps (%s: %s): %s",
			vs.Variant, stats.Pct(tail), ref, stats.Bytes(m.RSSGrowth), ref, stats.Bytes(base.Memory.RSSGrowth), why)
		if m.HoursToLimit != nil {
			line += fmt.Sprintf("; at this rate %s lasts %s", stats.Bytes(float64(m.Limit)), stats.Hours(*m.HoursToLimit))
		}
		out = append(out, line)
	}
	return out
}

// memoryWhyLines say, for each variant of one case whose memory the
// collector's accounting decided, its class in the collector's words:
// "disabled: memory grows: 2,403 tracked objects a step never freed: the
// collector is off".
func memoryWhyLines(vss []VariantSummary) []string {
	var out []string
	for _, vs := range vss {
		if m := vs.Memory; m != nil && m.Why != "" {
			out = append(out, fmt.Sprintf("%s: memory %s: %s", vs.Variant, m.Class, m.Why))
		}
	}
	return out
}

// caseVariants are the summaries of one case's variants.
func caseVariants(all []VariantSummary, caseName string) []VariantSummary {
	var out []VariantSummary
	for _, vs := range all {
		if vs.Case == caseName {
			out = append(out, vs)
		}
	}
	return out
}

// memoryLegend explains the memory columns and names the limit.
func memoryLegend(m *results.Manifest) string {
	limit := "unknown (give -mem-limit)"
	if m.Host.MemLimit > 0 {
		limit = fmt.Sprintf("%s, from %s", stats.Bytes(float64(m.Host.MemLimit)), m.Host.MemLimitFrom)
	}
	return "memory: peak RSS over the measured steps; RSS/1k steps: its growth per 1000 steps, of what collections leave (the slope of its lower envelope in the run's second half); memory: grows, bounded, or undecided with the measured steps a run needs to tell, from the collector's own accounting where the records show it (gc.get_count() and each collection's objects freed), else from RSS alone (stats.MemClass, docs/policy.md); grows to step N: until the first full collection, predicted from the thresholds and the counts; to limit: for memory that grows, time until the memory limit at its growth interval's ends and the median step time; limit " + limit
}

// memoryTrade is every case's memoryTradeLines, each named by its case
// when there are several.
func memoryTrade(m *results.Manifest, all []VariantSummary) []string {
	var out []string
	for _, c := range m.Cases {
		vss := caseVariants(all, c.Name)
		for _, l := range append(memoryTradeLines(vss, "default"), memoryWhyLines(vss)...) {
			if len(m.Cases) > 1 {
				l = c.Name + " " + l
			}
			out = append(out, l)
		}
	}
	return out
}
