package report

import (
	"fmt"
	"io"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Worker prints what one worker run measured (gcjitter worker). Comparisons and verdicts are the
// stats package's job; this is a first look at a single run.
func Worker(w io.Writer, path string, s *bench.Stream) {
	m := s.Meta
	measured := s.Measured()
	fmt.Fprintf(w, "records:  %s\n", path)
	torch := m.Torch
	if torch == "" {
		torch = "none"
	}
	fmt.Fprintf(w, "python:   %s (%s), torch %s, device %s (%s)\n", m.Python.Version, m.Python.Executable, torch, m.Device.Kind, m.Device.Name)
	fmt.Fprintf(w, "workload: model %s, garbage %s, long-lived %d, policy %s, seed %d\n", m.Model, m.Garbage.Pattern, m.Garbage.LongLived, m.Policy, m.Seed)
	for _, note := range m.Notes {
		fmt.Fprintf(w, "note:     %s\n", note)
	}
	r := stats.Summarize(s, stats.DefaultSpikeRule)
	fmt.Fprintf(w, "steps:    %d measured, %d warm-up\n", len(measured), len(s.Steps)-len(measured))
	if r.Steps > 0 {
		fmt.Fprintf(w, "step time: median %s, p90 %s, p99 %s, max %s\n", stats.MS(r.P50), stats.MS(r.P90), stats.MS(r.P99), stats.MS(r.Max))
		fmt.Fprintf(w, "GC share: %.2f%% of measured step time\n", 100*r.GCShare)
	}
	fmt.Fprintf(w, "collections (measured steps): gen0 %d, gen1 %d, gen2 %d; max pause gen0 %s, gen1 %s, gen2 %s\n",
		r.Collections[0], r.Collections[1], r.Collections[2], stats.MS(r.MaxPauseNS[0]), stats.MS(r.MaxPauseNS[1]), stats.MS(r.MaxPauseNS[2]))
	if len(s.End.GCStats) >= 3 {
		g := s.End.GCStats
		fmt.Fprintf(w, "gc.get_stats() over all steps: gen0 %d, gen1 %d, gen2 %d collections\n", g[0].Collections, g[1].Collections, g[2].Collections)
	}
}
