package results

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// SpeedPoint is one measurement of the host's calibration workload
// (runner.Calibrate): a walk of a fixed pointer graph (what a collection
// does) and a fixed arithmetic loop, each the fastest of a few repeats, in
// nanoseconds per node and per iteration. It runs in gcjitter itself, not
// in the interpreter under test, so an upgrade cannot move the yardstick.
type SpeedPoint struct {
	At        time.Time `json:"at"`
	WalkNS    float64   `json:"walk_ns"`
	ComputeNS float64   `json:"compute_ns"`
}

// Cost is the point's one figure: the geometric mean of its two parts, in
// ns. Lower is faster.
func (p SpeedPoint) Cost() float64 { return math.Sqrt(p.WalkNS * p.ComputeNS) }

// Calibration is a session's measurements of the host's speed: before the
// first run, between rounds and after the last.
type Calibration struct {
	Points []SpeedPoint `json:"points"`
}

// Known says whether anything was measured.
func (c *Calibration) Known() bool { return c != nil && len(c.Points) > 0 }

// Cost is the median of the points' costs: the session's speed.
func (c *Calibration) Cost() float64 {
	if !c.Known() {
		return 0
	}
	costs := make([]float64, len(c.Points))
	for i, p := range c.Points {
		costs[i] = p.Cost()
	}
	return median(costs)
}

// Spread is how far the speed moved within the session: the slowest
// point's cost over the fastest's, less 1 (0 with one point).
func (c *Calibration) Spread() float64 {
	if !c.Known() {
		return 0
	}
	lo, hi := c.costRange()
	return hi/lo - 1
}

// Speed limits, measured on 2-core VMs (BENCHMARKS.md, "Host speed"):
//   - SpeedBand is how far apart two speeds may be and still be called the
//     same (CompareSpeed): a ratio whose whole interval lies within ±10%.
//     Quiet sessions of one host here read 2.7% apart, their points
//     spreading 2-7% within a session, so their intervals fit inside it;
//   - SpeedMovedLimit is the spread within one session above which the
//     host's speed moved while the runs were made (another load, a
//     throttled CPU): golden update refuses such a session, as a busy one,
//     and the gate leaves its timings undecided (Disturbance).
const (
	SpeedBand       = 0.10
	SpeedMovedLimit = 0.25
)

// Moved says whether the host's speed moved within the session by more
// than SpeedMovedLimit.
func (c *Calibration) Moved() bool { return c.Known() && c.Spread() > SpeedMovedLimit }

// costRange is the fastest and slowest point's cost.
func (c *Calibration) costRange() (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	for _, p := range c.Points {
		lo, hi = min(lo, p.Cost()), max(hi, p.Cost())
	}
	return lo, hi
}

// Speed sameness, as CompareSpeed decides it.
const (
	SpeedSame      = "same"      // the ratio's interval lies within ±SpeedBand
	SpeedDiffers   = "differs"   // it lies wholly outside
	SpeedUndecided = "undecided" // it reaches across the band's edge: too noisy to say
	SpeedUnknown   = ""          // a side has no calibration
)

// SpeedComparison is this host's speed against a baseline's.
type SpeedComparison struct {
	// Known: both sides were calibrated.
	Known bool
	// Ratio is this host's speed over the baseline's host's: 0.5 runs the
	// calibration half as fast.
	Ratio float64
	// Lo and Hi bound the ratio: the slowest and fastest the two sessions'
	// points allow (each session's speed lies somewhere within its points).
	Lo, Hi float64
	// Verdict is SpeedSame, SpeedDiffers or SpeedUndecided.
	Verdict string
}

// CompareSpeed is the one rule for whether timings measured on two hosts
// (or two sessions of one) can be judged against each other: the gate,
// golden, history, system and compare read it. The speeds are the same
// only when the ratio's whole interval [Lo, Hi] lies within ±SpeedBand: a
// noisier calibration widens the interval and so gives less confidence of
// sameness, never more (a busy host's calibration spreading 161% cannot
// vouch that it runs as fast as the baseline's). Noise that makes the
// interval reach across the band's edge leaves it undecided, and timings
// are then reported, not gated.
func CompareSpeed(baseline, here *Calibration) SpeedComparison {
	if !baseline.Known() || !here.Known() {
		return SpeedComparison{}
	}
	bLo, bHi := baseline.costRange()
	hLo, hHi := here.costRange()
	s := SpeedComparison{Known: true, Ratio: baseline.Cost() / here.Cost(), Lo: bLo / hHi, Hi: bHi / hLo}
	band := math.Log1p(SpeedBand)
	lo, hi := math.Log(s.Lo), math.Log(s.Hi)
	switch {
	case lo >= -band && hi <= band:
		s.Verdict = SpeedSame
	case hi < -band || lo > band:
		s.Verdict = SpeedDiffers
	default:
		s.Verdict = SpeedUndecided
	}
	return s
}

// Comparable says whether the speeds are the same (SpeedSame).
func (s SpeedComparison) Comparable() bool { return s.Known && s.Verdict == SpeedSame }

// String says it in words: "this host runs the calibration at 0.52x the
// baseline's speed [0.50x, 0.55x]: differs beyond ±10%".
func (s SpeedComparison) String() string {
	if !s.Known {
		return "speed unknown: a side has no calibration"
	}
	what := map[string]string{
		SpeedSame:      fmt.Sprintf("the same within ±%.0f%%", 100*SpeedBand),
		SpeedDiffers:   fmt.Sprintf("differs beyond ±%.0f%%", 100*SpeedBand),
		SpeedUndecided: fmt.Sprintf("whether it is the same within ±%.0f%% is undecided: the calibrations are too noisy (a busy or throttled host)", 100*SpeedBand),
	}[s.Verdict]
	return fmt.Sprintf("this host runs the calibration at %.2fx the baseline's speed [%.2fx, %.2fx]: %s", s.Ratio, s.Lo, s.Hi, what)
}

// String describes the session's calibration: "walk 30.1 ns/node,
// compute 1.95 ns/iteration (median of 4 points, spread 3%)".
func (c *Calibration) String() string {
	if !c.Known() {
		return "not measured"
	}
	walk, compute := make([]float64, len(c.Points)), make([]float64, len(c.Points))
	for i, p := range c.Points {
		walk[i], compute[i] = p.WalkNS, p.ComputeNS
	}
	return fmt.Sprintf("walk %.3g ns/node, compute %.3g ns/iteration (median of %d points, spread %.0f%%)",
		median(walk), median(compute), len(c.Points), 100*c.Spread())
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}
