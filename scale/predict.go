package scale

import (
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gcjitter/gcjitter/stats"
)

// Options are a prediction's settings.
type Options struct {
	Steps      int // simulated steps per job (default 10,000)
	Boot       int // bootstrap replicates for the intervals (default: stats.BootReplicates(Level), 400 at 95%)
	Seed       uint64
	Collective Collective
	// Level is the intervals' coverage (default 0.95).
	Level float64
	// HostNoise is how the measured ranks' noise scales with N: NoiseAuto
	// (the default), NoiseIndependent or NoiseShared.
	HostNoise string
}

// How a host's noise scales with the number of hosts.
const (
	// NoiseIndependent: each host of the measured world size draws its
	// own noise, so more hosts make a slower slowest host.
	NoiseIndependent = "independent"
	// NoiseShared: one host's noise at any N: what collections and the
	// collective alone do.
	NoiseShared = "shared"
	// NoiseAuto: independent where the measured ranks had a CPU each,
	// shared where they outnumbered the host's CPUs. Ranks taking turns
	// on shared cores make most of such a host's noise (straggler-gc's 4
	// ranks on a 2-core host: the slowest rank's own time at p90 is
	// 1.75-2.0x its p50, a lone rank's 1.2x), and a cluster that gives
	// each rank its CPUs has none of it; multiplied by 256 hosts it put
	// +15..+57% on every policy's p50 at 1024 ranks, GC-free or not.
	NoiseAuto = "auto"
)

// NoiseModes are the values -host-noise accepts.
var NoiseModes = []string{NoiseAuto, NoiseIndependent, NoiseShared}

// noiseFor is the noise model for a prediction from runs: shared when
// asked, or under auto when a run's ranks contended for CPUs (the reason
// then says how).
func (o Options) noiseFor(runs []*Run) (mode, reason string) {
	switch o.HostNoise {
	case NoiseShared, NoiseIndependent:
		return o.HostNoise, ""
	}
	for _, r := range runs {
		if r.Contention != "" {
			return NoiseShared, r.Contention
		}
	}
	return NoiseIndependent, ""
}

func (o Options) orDefault() Options {
	if o.Steps <= 0 {
		o.Steps = 10000
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = 0.95
	}
	if o.Boot <= 0 {
		o.Boot = stats.BootReplicates(o.Level)
	}
	if o.Collective.Kind == "" {
		o.Collective.Kind = "tree"
	}
	if o.HostNoise == "" {
		o.HostNoise = NoiseAuto
	}
	return o
}

// Prediction is one policy's job at one number of ranks.
type Prediction struct {
	Case, Variant, Policy string
	FromRanks             int // world size of the runs it was predicted from
	Runs                  int
	Ranks                 int
	Est, Lo, Hi           Figures
	CollectiveNS          float64 // the collective's modelled growth over the measured one
	// HostNoise is the noise model used (NoiseIndependent or NoiseShared)
	// and NoiseReason, under auto, the contention that chose shared.
	HostNoise, NoiseReason string
}

// Predict simulates the group's job at each n of ranks: a point estimate
// from the runs as measured and intervals from block-bootstrap resamples
// of them (runs and blocks of steps), each simulated afresh, so the
// intervals hold both the data's and the simulation's uncertainty.
func Predict(g *Group, ranks []int, opt Options) []Prediction {
	return predictWith(g, g.Runs, g.Ranks, nil, ranks, opt)
}

// predictWith predicts from runs whose residual collective cost was
// measured at world size from; resid, when not nil, replaces the runs'
// own (single-rank runs have none: it comes from multi-rank runs).
func predictWith(g *Group, runs []*Run, from int, resid []float64, ranks []int, opt Options) []Prediction {
	opt = opt.orDefault()
	block := blockLen(runs)
	out := make([]Prediction, len(ranks))
	reps := make([][]Figures, len(ranks))
	for i := range reps {
		reps[i] = make([]Figures, opt.Boot)
	}
	est := prepare(runs, g.Rule)
	if resid != nil {
		est.resid = resid
	}
	noise, reason := opt.noiseFor(runs)
	shared := noise == NoiseShared
	for i, n := range ranks {
		rng := rand.New(rand.NewPCG(opt.Seed, uint64(n)))
		growth := opt.Collective.Growth(n, from)
		out[i] = Prediction{Case: g.Case, Variant: g.Variant, Policy: g.Policy, FromRanks: g.Ranks, Runs: len(runs), Ranks: n,
			Est: est.simulate(n, opt.Steps, growth, shared, rng).figures(g.Rule), CollectiveNS: growth, HostNoise: noise, NoiseReason: reason}
	}
	// Replicates in parallel: each its own resample and generator.
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				rng := rand.New(rand.NewPCG(opt.Seed+1, uint64(b)))
				md := prepare(resample(runs, block, rng), g.Rule)
				if resid != nil {
					md.resid = resid
				}
				for i, n := range ranks {
					reps[i][b] = md.simulate(n, opt.Steps, opt.Collective.Growth(n, from), shared, rng).figures(g.Rule)
				}
			}
		}()
	}
	for b := range opt.Boot {
		next <- b
	}
	close(next)
	wg.Wait()
	for i := range out {
		out[i].Lo, out[i].Hi = interval(reps[i], opt.Level)
	}
	return out
}

// interval is the percentile interval of each figure over replicates.
func interval(reps []Figures, level float64) (lo, hi Figures) {
	pick := func(f func(Figures) float64) (float64, float64) {
		xs := make([]float64, len(reps))
		for i, r := range reps {
			xs[i] = f(r)
		}
		return stats.PercentileInterval(xs, level)
	}
	lo.P50, hi.P50 = pick(func(f Figures) float64 { return f.P50 })
	lo.P90, hi.P90 = pick(func(f Figures) float64 { return f.P90 })
	lo.P99, hi.P99 = pick(func(f Figures) float64 { return f.P99 })
	lo.Mean, hi.Mean = pick(func(f Figures) float64 { return f.Mean })
	lo.SpikeRate, hi.SpikeRate = pick(func(f Figures) float64 { return f.SpikeRate })
	lo.Loss, hi.Loss = pick(func(f Figures) float64 { return f.Loss })
	lo.FreeP50, hi.FreeP50 = pick(func(f Figures) float64 { return f.FreeP50 })
	return lo, hi
}
