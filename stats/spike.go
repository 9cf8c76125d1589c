package stats

import (
	"fmt"
	"math"
)

// SpikeRule decides which steps are spikes. By default a step is a spike
// when its excess over the run's typical step is large against the run's
// own spread: more than Sigmas robust standard deviations and more than
// Floor of the typical step. The typical step and the spread are the
// median and the scaled MAD of the steps without a full collection, so the
// collections being judged do not widen the yardstick.
//
// A step whose recorded in-step collection pauses explain most of its
// excess (GCShareOfExcess) needs only GCSigmas: the recorder already says
// where to look, so it is one question about that step, not a scan of
// every step for outliers. This is what finds the customer's +4.7% pauses
// under 1% step noise, where 5 SDs would miss most of them; a step that
// holds only a small young collection cannot pass, as its pause explains
// half its excess only when the excess is itself small.
//
// A multiple of the median (Factor) measures the host, not the jitter: a
// pause crosses f x the median only when it exceeds (f-1) x the step, so
// the same collection is a spike on a fast host and not on a slow one. It
// stays as an explicit override for users who need a fixed ratio.
type SpikeRule struct {
	Sigmas   float64 `json:"sigmas,omitempty"`
	GCSigmas float64 `json:"gc_sigmas,omitempty"`
	Floor    float64 `json:"floor,omitempty"`
	// Factor > 0 replaces the noise rule: a spike is a step over Factor
	// times the run's median.
	Factor float64 `json:"factor,omitempty"`
}

// DefaultSpikeRule: 5 robust SDs keep a run's own noise out (a normal run
// of 100k steps has ~0.03 steps beyond 5 SDs; heavier-tailed host noise is
// what the GC attribution then rejects); 2.5 SDs for a step the recorded
// pauses explain (0.6% of normal steps would pass on time alone, and then
// only if a collection in them is itself that large); and 0.5% of the step
// keeps a run of near-constant steps (an accelerator host waiting on its
// device, MAD near 0) from calling every wobble a spike, while still
// catching the customer's +4.7% pauses.
var DefaultSpikeRule = SpikeRule{Sigmas: 5, GCSigmas: 2.5, Floor: 0.005}

// GCShareOfExcess is how much of a spike's excess the in-step collection
// pauses must explain for it to be a GC spike: most of it, so a spike the
// scheduler made is not blamed on the gen-0 collection that happened to
// run in the same step.
const GCShareOfExcess = 0.5

// madToSD scales the median absolute deviation to the standard deviation
// of a normal distribution.
const madToSD = 1.4826

// OrDefault fills the zero rule with the default.
func (r SpikeRule) OrDefault() SpikeRule {
	if r == (SpikeRule{}) {
		return DefaultSpikeRule
	}
	if r.Factor == 0 && r.Sigmas == 0 {
		r.Sigmas = DefaultSpikeRule.Sigmas
	}
	if r.Factor == 0 && r.GCSigmas == 0 {
		r.GCSigmas = min(r.Sigmas, DefaultSpikeRule.GCSigmas)
	}
	return r
}

// String says the rule in words, for reports.
func (r SpikeRule) String() string {
	r = r.OrDefault()
	if r.Factor > 0 {
		return fmt.Sprintf("a step over %gx its run's median", r.Factor)
	}
	return fmt.Sprintf("a step over its run's typical step by > %g robust SDs (%g when its collections explain it) and > %g%%",
		r.Sigmas, r.GCSigmas, 100*r.Floor)
}

// Baseline is a run's yardstick for spikes: the typical step and the
// robust spread of the steps around it.
type Baseline struct {
	Typical, Spread float64
}

// Limits are the excesses over the typical step beyond which a step is a
// spike: Any for every step, GC for a step its collections explain.
type Limits struct {
	Any, GC float64
}

// Limits are the rule's limits against a run's baseline.
func (r SpikeRule) Limits(b Baseline) Limits {
	r = r.OrDefault()
	if r.Factor > 0 {
		l := (r.Factor - 1) * b.Typical
		return Limits{l, l}
	}
	floor := r.Floor * b.Typical
	return Limits{Any: max(r.Sigmas*b.Spread, floor), GC: max(r.GCSigmas*b.Spread, floor)}
}

// Classify judges one step by its excess over the typical step and the
// pauses of the collections inside it.
func (l Limits) Classify(excess, pause float64) (spike, gcSpike bool) {
	explained := pause > 0 && pause >= GCShareOfExcess*excess
	if explained && excess > l.GC {
		return true, true
	}
	return excess > l.Any, false
}

// baselineOf is the median and the scaled MAD of the steps that keep(i)
// selects, or of all steps when none is selected (every step holds a full
// collection under collect-every-step). With a factor rule the typical step
// is the median of all steps, as the rule has always said.
func baselineOf(durs []float64, keep func(i int) bool, rule SpikeRule) Baseline {
	base := make([]float64, 0, len(durs))
	if rule.OrDefault().Factor == 0 {
		for i, d := range durs {
			if keep(i) {
				base = append(base, d)
			}
		}
	}
	if len(base) == 0 {
		base = append(base, durs...)
	}
	if len(base) == 0 {
		return Baseline{}
	}
	SortFloat64s(base)
	med := Quantile(base, 0.5)
	for i, d := range base {
		base[i] = math.Abs(d - med)
	}
	SortFloat64s(base)
	return Baseline{Typical: med, Spread: madToSD * Quantile(base, 0.5)}
}
