package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// night describes a synthetic results directory: runs of every variant of
// every case, with a level for the step times and a night-wide noise.
type night struct {
	host, class string
	started     time.Time
	cases       int
	variants    int
	runs        int
	level       float64 // relative step-time level (1: the usual)
	torch       string
	pending     int // runs planned but not run: a partial night
}

func (n night) manifest(rng *rand.Rand) *results.Manifest {
	m := &results.Manifest{Schema: results.ManifestSchema, Tool: "test", Command: []string{"gcjitter", "run", n.started.String()},
		Started: n.started, Host: results.Host{Hostname: n.host, CPUModel: "Test CPU", CPUs: 2}, HostClass: n.class,
		Worker: "worker/gcjitter-worker-0123456789ab.py", ShuffleSeed: n.started.UnixNano()}
	finished := n.started.Add(time.Hour)
	m.Finished = &finished
	torch := n.torch
	if torch == "" {
		torch = "1.13.1"
	}
	sessionNoise := math.Exp(0.03 * rng.NormFloat64())
	for c := 0; c < n.cases; c++ {
		name := fmt.Sprintf("case-%02d", c)
		rc := results.Case{Name: name, Steps: 400, Runs: n.runs}
		for v := 0; v < n.variants; v++ {
			rc.Variants = append(rc.Variants, results.Variant{Name: fmt.Sprintf("variant-%d", v), Policy: "default"})
		}
		m.Cases = append(m.Cases, rc)
		for v := 0; v < n.variants; v++ {
			for i := 0; i < n.runs; i++ {
				p50 := 40e6 * (1 + 0.2*float64(c)) * n.level * sessionNoise * math.Exp(0.02*rng.NormFloat64())
				sum := &stats.RunSummary{Steps: 400, P50: p50, P90: p50 * 1.3, P99: p50 * 2.5, P99NoGen2: p50 * 1.5, P99Rel: 2.5 * p50 / (40e6 * (1 + 0.2*float64(c))), P999: p50 * 3, Max: p50 * 3.2,
					Spikes: 10 + rng.IntN(3), Collections: [3]int{400, 36, 10 + v}, Collected: [3]int64{9000, 800, int64(3000 + v)},
					MaxPauseNS: [3]float64{1e5, 5e5, p50 * 1.5}, GCShare: 0.04 * n.level,
					RSS: &stats.Mem{Peak: 4e8, Growth: 8e6, Samples: 400}} // a CPU run: RSS, no device memory
				r := &results.Run{ID: fmt.Sprintf("%s/variant-%d/%d", name, v, i), Case: name, Variant: fmt.Sprintf("variant-%d", v),
					Index: i, Status: results.StatusOK, Summary: sum,
					Meta: &results.RunMeta{Python: "3.11.2", Build: "CPython", Torch: torch, Device: "cpu"}}
				m.Runs = append(m.Runs, r)
			}
		}
	}
	for i := 0; i < n.pending; i++ {
		m.Runs = append(m.Runs, &results.Run{ID: fmt.Sprintf("pending-%d", i), Case: "case-00", Variant: "variant-0", Index: n.runs + i, Status: results.StatusPending})
	}
	return m
}
