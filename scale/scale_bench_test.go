package scale

import (
	"testing"

	"github.com/gcjitter/gcjitter/stats"
)

// BenchmarkScale4096: one policy at 4096 ranks x 10,000 simulated steps,
// from two 4-rank runs of 200 steps whose ranks pause on 2% of their steps
// (straggler-gc's default has about that many collections of note): the
// point estimate and its 40 bootstrap replicates, as gcjitter scale runs it
// (BENCHMARKS.md, "scale").
func BenchmarkScale4096(b *testing.B) {
	g := &Group{Case: "synthetic", Variant: "default", Ranks: 4, Rule: stats.DefaultSpikeRule,
		Runs: synthRuns(1, 2, 4, 200, 0.02, 30e6, 0)}
	for b.Loop() {
		Predict(g, []int{4096}, Options{Steps: 10000, Boot: 40})
	}
}

// BenchmarkScale4096OneJob is one simulated job of 4096 ranks x 10,000
// steps, without the bootstrap.
func BenchmarkScale4096OneJob(b *testing.B) {
	g := &Group{Case: "synthetic", Variant: "default", Ranks: 4, Rule: stats.DefaultSpikeRule,
		Runs: synthRuns(1, 2, 4, 200, 0.02, 30e6, 0)}
	for b.Loop() {
		Predict(g, []int{4096}, Options{Steps: 10000, Boot: 1})
	}
}
