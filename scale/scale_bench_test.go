package scale

import (
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

// benchGroup is one policy's runs of 4 ranks and 200 steps whose ranks
// pause on 2% of their steps (straggler-gc's default has about that many
// collections of note).
func benchGroup(runs int) *Group {
	return &Group{Case: "synthetic", Variant: "default", Ranks: 4, Rule: stats.DefaultSpikeRule,
		Runs: synthRuns(1, runs, 4, 200, 0.02, 30e6, 0)}
}

// BenchmarkScale4096: one policy at 4096 ranks x 10,000 simulated steps,
// from two runs of benchGroup: the point estimate and its bootstrap
// replicates, as many as gcjitter scale runs for 95% intervals
// (BENCHMARKS.md, "scale").
func BenchmarkScale4096(b *testing.B) {
	g := benchGroup(2)
	for b.Loop() {
		Predict(g, []int{4096}, Options{Steps: 10000})
	}
}

// BenchmarkScale4096Replicates is what the replicates cost: the same
// prediction with the default replicates over it with 40 (the default
// before stats.BootReplicates), timed in turns within each iteration so
// that a shared host's load falls on both alike (metric new/old).
func BenchmarkScale4096Replicates(b *testing.B) {
	g := benchGroup(2)
	var old, cur time.Duration
	for b.Loop() {
		t := time.Now()
		Predict(g, []int{4096}, Options{Steps: 10000, Boot: 40})
		old += time.Since(t)
		t = time.Now()
		Predict(g, []int{4096}, Options{Steps: 10000})
		cur += time.Since(t)
	}
	b.ReportMetric(float64(cur)/float64(old), "new/old")
}

// BenchmarkScale4096OneJob is one simulated job of 4096 ranks x 10,000
// steps, without the bootstrap.
func BenchmarkScale4096OneJob(b *testing.B) {
	g := benchGroup(2)
	for b.Loop() {
		Predict(g, []int{4096}, Options{Steps: 10000, Boot: 1})
	}
}
