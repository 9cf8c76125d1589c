package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// explainDoc is an A/B whose B makes every full collection 20% slower: 5
// a run of 40 ms in 1000 steps of 10 ms, so the cost per object adds 40 us
// a step (0.39% of 10.3 ms) and 4 ms to the slowest 1% (half of which hold one: 13.3% of their 30 ms).
func explainDoc() *Doc {
	run := func(full float64) stats.RunSummary {
		r := stats.RunSummary{Steps: 1000, Collections: [3]int{1160, 100, 5}, PauseNS: [3]float64{1160 * 50e3, 100 * 400e3, 5 * full}, FullWalk: 400_000,
			P50: 10e6, Typical: 10e6, Yardstick: 10e6}
		gc := r.PauseNS[0] + r.PauseNS[1] + r.PauseNS[2]
		r.Mean = 10e6 + gc/1000
		r.GCShare = gc / (r.Mean * 1000)
		r.Tail = &stats.TailGC{Slowest: 10, WithGC: 5, InGC: 5 * full, Excess: 5 * full}
		return r
	}
	old, new := results.NewData("A"), results.NewData("B")
	for range 3 {
		old.AddRun("GCJitter/case=c/variant=default", run(40e6))
		new.AddRun("GCJitter/case=c/variant=default", run(48e6))
	}
	return &Doc{Kind: "ab", Title: "gcjitter ab", Generated: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), Comparison: results.Compare(old, new, results.CompareOptions{})}
}

// The table of parts is in every format, with the planted change in the
// cost per object and nothing in the other parts.
func TestExplainInEveryFormat(t *testing.T) {
	for format, want := range map[string][]string{
		"text":     {"what moved the step and its tail", "cost per object walked", "+40µs (+0.39%)", "+4ms (+13.3%)", "  collection frequency (schedule)  0               0 pt      0\n"},
		"markdown": {"### what moved the step and its tail", "| cost per object walked | +40µs (+0.39%) |", "| heap walked (census) | 0 | 0 pt | 0 |"},
		"json":     {`"explanations"`, `"part": "cost per object walked"`, `"step_ns": 40000`, `"tail_ns": 4000000`},
		"html":     {`id="explain"`, "<td>cost per object walked</td><td>&#43;40µs (&#43;0.39%)</td>"},
	} {
		var b bytes.Buffer
		if err := RenderColor(&b, format, explainDoc(), false); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", format, w, b.String())
			}
		}
	}
}
