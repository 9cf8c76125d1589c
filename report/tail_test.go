package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// TestTracedReportSaysWhatGCExplains: a traced job's report says how much
// of its tail GC explains, pooled over its runs, and that the tail is
// elsewhere when it is; a synthetic case's variants say nothing of it.
func TestTracedReportSaysWhatGCExplains(t *testing.T) {
	sum := func(tail stats.TailGC) *stats.RunSummary {
		return &stats.RunSummary{Steps: 1000, P50: 10e6, P99: 40e6, Collections: [3]int{3, 0, 0}, Tail: &tail}
	}
	m := &results.Manifest{Cases: []results.Case{
		{Name: "job", Steps: 1000, Runs: 2, Variants: []results.Variant{{Name: "traced", Policy: "traced"}}},
		{Name: "synthetic", Steps: 1000, Runs: 1, Variants: []results.Variant{{Name: "default", Policy: "default"}}},
	}, Runs: []*results.Run{
		{ID: "job/traced/run-01", Case: "job", Variant: "traced", Status: results.StatusOK, Steps: 1000,
			Summary: sum(stats.TailGC{Slowest: 10, WithGC: 1, Excess: 300e6, InGC: 9e6})},
		{ID: "job/traced/run-02", Case: "job", Variant: "traced", Status: results.StatusOK, Steps: 1000,
			Summary: sum(stats.TailGC{Slowest: 10, Excess: 300e6})},
		{ID: "synthetic/default/run-01", Case: "synthetic", Variant: "default", Status: results.StatusOK, Steps: 1000,
			Summary: sum(stats.TailGC{Slowest: 10, WithGC: 10, Excess: 300e6, InGC: 300e6})},
	}}
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Render(&b, format, &Doc{Kind: "run", Manifest: m}); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		want := "GC explains 2% of this job's p99 excess (1 of 20 slowest steps held a collection); its tail is elsewhere"
		if !strings.Contains(text, want) {
			t.Errorf("%s: no %q in\n%s", format, want, text)
		}
		if strings.Count(text, "GC explains") != 1 {
			t.Errorf("%s: only the traced job's tail is explained:\n%s", format, text)
		}
	}
}
