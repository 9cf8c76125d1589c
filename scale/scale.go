package scale

import (
	"fmt"
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/stats"
)

// Report is what gcjitter scale prints: predictions per policy and number
// of ranks, the validation that comes before them, and the model's settings.
type Report struct {
	Predictions []Prediction
	Validation  []Validation
	Options     Options
	Warnings    []string
}

// Validation is a prediction of a measured multi-rank job, with its error.
type Validation struct {
	Case, Variant, Policy string
	// From says what predicted it: "own ranks" (the runs' own rank
	// streams), "the other runs, run K held out" (out of sample, for groups
	// of several runs) or "single-rank runs" (runs of the case with
	// ranks: 1).
	From      string
	FromRanks int
	Ranks     int // the measured job's world size
	Runs      int // measured runs
	Measured  Figures
	Predicted Prediction
	// Err are the relative errors of p50, p90, p99 (predicted over
	// measured, minus 1); SpikeRatio predicted over measured spike rate
	// (NaN when the measured job had none and the prediction some).
	Err        struct{ P50, P90, P99 float64 }
	SpikeRatio float64
	// Spikes is the measured job's count of spikes, and PredSpikes the
	// prediction's over as many steps: below minSpikes both, a ratio is
	// counting noise (0 against 1 spike is no 2x error) and is not judged.
	Spikes, PredSpikes float64
	Note               string
}

// minSpikes is the fewest spikes on either side for their ratio to be
// judged against TolSpike.
const minSpikes = 3

// Tolerances of the acceptance check: the validation says whether
// each figure is within them.
const (
	TolQuantile = 0.25 // p50 and p90 within 25%
	TolSpike    = 2.0  // spike rate within 2x
)

// Within says whether p50, p90 and the spike rate are within tolerance.
func (v *Validation) Within() bool {
	ok := math.Abs(v.Err.P50) <= TolQuantile && math.Abs(v.Err.P90) <= TolQuantile
	if !v.SpikesJudged() {
		return ok
	}
	r := v.SpikeRatio
	return ok && !math.IsNaN(r) && r <= TolSpike && r >= 1/TolSpike
}

// SpikesJudged says whether either side has spikes enough to judge their ratio.
func (v *Validation) SpikesJudged() bool {
	return v.Spikes >= minSpikes || v.PredSpikes >= minSpikes
}

// Build predicts every case's variants at ranks, each from its runs of the
// largest world size, after validating the model on every measured
// multi-rank job: from its own rank streams, and from single-rank runs of
// the same case's variant where there are some.
func Build(groups []*Group, ranks []int, opt Options) *Report {
	opt = opt.orDefault()
	rep := &Report{Options: opt}
	sortGroups(groups)
	type cv struct{ c, v string }
	var order []cv
	bySize := map[cv][]*Group{}
	contended := map[string]bool{} // cases warned of CPU contention
	for _, g := range groups {
		k := cv{g.Case, g.Variant}
		if bySize[k] == nil {
			order = append(order, k)
		}
		bySize[k] = append(bySize[k], g)
	}
	for _, k := range order {
		gs := bySize[k]
		slices.SortFunc(gs, func(a, b *Group) int { return a.Ranks - b.Ranks })
		var single *Group
		if gs[0].Ranks == 1 {
			single = gs[0]
		}
		for _, g := range gs {
			if g.Ranks < 2 {
				continue
			}
			rep.Validation = append(rep.Validation, validate(g, g, opt))
			rep.Validation = append(rep.Validation, leaveOneOut(g, opt)...)
			if single != nil {
				rep.Validation = append(rep.Validation, validate(single, g, opt))
			}
		}
		src := gs[len(gs)-1]
		preds := Predict(src, ranks, opt)
		rep.Predictions = append(rep.Predictions, preds...)
		if len(preds) > 0 && preds[0].NoiseReason != "" && !contended[k.c] {
			contended[k.c] = true
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: its ranks shared this host's CPUs (%s): their noise is mostly their taking turns on the cores, which a cluster with CPUs for every rank does not have, so it is kept at one host's at any N (-host-noise auto); -host-noise independent multiplies it by the hosts anyway", k.c, preds[0].NoiseReason))
		}
		if src.Ranks == 1 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s/%s: predicted from single-rank runs: no measured collective, its cost is the model's alone (-hop-latency)", k.c, k.v))
		}
	}
	return rep
}

// validate predicts target's measured job (its world size) from src's
// runs: the same group (own rank streams) or single-rank runs, whose
// collective cost is then the target's measured one.
func validate(src, target *Group, opt Options) Validation {
	v := Validation{Case: target.Case, Variant: target.Variant, Policy: target.Policy, FromRanks: src.Ranks, Ranks: target.Ranks, Runs: len(target.Runs)}
	var pred []Prediction
	if src == target {
		v.From = "own ranks"
		pred = Predict(src, []int{target.Ranks}, opt)
	} else {
		v.From = "single-rank runs"
		var resid []float64
		for _, r := range target.Runs {
			resid = append(resid, r.Resid...)
		}
		stats.SortFloat64s(resid)
		pred = predictWith(src, src.Runs, target.Ranks, resid, []int{target.Ranks}, opt)
		// The collective and the ranks' skew come from the multi-rank
		// runs; what is tested is the own-time process of one rank alone.
		own1, ownN := medianOwn(src), medianOwn(target)
		v.Note = fmt.Sprintf("collective and skew from the %d-rank runs; own time: %d-rank median %.3g ms, single-rank %.3g ms", target.Ranks, target.Ranks, ownN/1e6, own1/1e6)
		if ownN > 1.25*own1 || own1 > 1.25*ownN {
			v.Note += fmt.Sprintf(" (x%.2f: CPU contention between the ranks, which single-rank runs cannot show)", ownN/own1)
		}
		if e1, eN := medianEventOwn(src), medianEventOwn(target); e1 > 0 && eN > 0 {
			v.Note += fmt.Sprintf("; own time in a collection of note: %d-rank median %.3g ms, single-rank %.3g ms", target.Ranks, eN/1e6, e1/1e6)
			if eN > 1.25*e1 {
				v.Note += fmt.Sprintf(" (x%.2f: ranks collecting at once share the CPUs, so the single-rank pauses are too short for the tail here)", eN/e1)
			}
		}
	}
	v.Predicted = pred[0]
	v.measure(target.Runs)
	return v
}

// medianEventOwn is the median own time in the group's collections of
// note (0: none).
func medianEventOwn(g *Group) float64 {
	md := prepare(g.Runs, g.Rule)
	var xs []float64
	for _, d := range md.drift {
		for _, e := range d.ev {
			xs = append(xs, e.own)
		}
	}
	if md.common != nil {
		xs = append(xs, md.common.pool...)
	}
	if len(xs) == 0 {
		return 0
	}
	stats.SortFloat64s(xs)
	return stats.Quantile(xs, 0.5)
}

// leaveOneOut predicts each run of a group of several from the others:
// the out-of-sample check (repeats on a shared host differ by more than
// one run's own sampling noise).
func leaveOneOut(g *Group, opt Options) []Validation {
	if len(g.Runs) < 2 {
		return nil
	}
	var out []Validation
	for k, held := range g.Runs {
		others := slices.Concat(g.Runs[:k], g.Runs[k+1:])
		v := Validation{Case: g.Case, Variant: g.Variant, Policy: g.Policy, FromRanks: g.Ranks, Ranks: g.Ranks, Runs: 1,
			From: fmt.Sprintf("the other runs, run %d held out", k+1)}
		v.Predicted = predictWith(g, others, g.Ranks, nil, []int{g.Ranks}, opt)[0]
		v.Predicted.FromRanks = g.Ranks
		v.measure([]*Run{held})
		out = append(out, v)
	}
	return out
}

// measure fills the measured figures from runs and the errors of the
// prediction against them.
func (v *Validation) measure(runs []*Run) {
	var all []float64
	rate := 0.0
	for _, r := range runs {
		all = append(all, r.Global...)
		rate += r.SpikeRate / float64(len(runs))
		v.Spikes += r.SpikeRate * float64(r.steps()) / 1000
	}
	v.Measured = quantiles(all)
	v.Measured.SpikeRate = rate
	p := v.Predicted.Est
	v.PredSpikes = p.SpikeRate * float64(len(all)) / 1000
	v.Err.P50, v.Err.P90, v.Err.P99 = p.P50/v.Measured.P50-1, p.P90/v.Measured.P90-1, p.P99/v.Measured.P99-1
	switch {
	case rate == 0 && p.SpikeRate == 0:
		v.SpikeRatio = 1
	case rate == 0:
		v.SpikeRatio = math.NaN()
	default:
		v.SpikeRatio = p.SpikeRate / rate
	}
}

func medianOwn(g *Group) float64 {
	var xs []float64
	for _, r := range g.Runs {
		for _, rk := range r.Ranks {
			xs = append(xs, rk.Own...)
		}
	}
	stats.SortFloat64s(xs)
	return stats.Quantile(xs, 0.5)
}
