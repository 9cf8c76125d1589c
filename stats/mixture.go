package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gcjitter/gcjitter/bench"
)

// The tail as a labelled mixture (docs/compare.md, "The tail from the
// mechanism"). Every step is labelled by the collections inside it: G, a
// full (gen-2) collection ran in it (for a multi-rank job's global step: on
// any rank), B, none did. The step-time distribution is
// F(x) = (1-pi) F_B(x) + pi F_G(x), pi the share of G steps, which the
// schedule fixes (the same in every run of a seeded case). Where
// pi > 1-p the p-quantile lies among the G steps: with one full collection
// in 40 steps p99 is the 60th percentile of the G steps, a central quantile.
// B keeps its own tail (a stall that is not the collector's).
//
// What the known-truth study (mixture_test.go) found decides where this is
// used: within a run the two components mixed at the run's own pi are the
// run's distribution, so a run's raw p99 already reads G's central
// quantile, and between runs it detected a slower collector at least as
// often as this estimator pooled over runs in every world tried. So the
// gated metrics stay per run (p99, and p99-no-gen2 for B's tail), and this
// is the study's estimator and a side's pooled figure, not a gated metric.

// LabelledRun is one run's measured step times split by the mechanism.
type LabelledRun struct {
	B []float64 // steps without a full collection
	G []float64 // steps with one (any rank's, for a global step)
}

// MixtureSide is one side's runs, pooled once for the quantiles of any
// resample of its runs.
type MixtureSide struct {
	Runs int
	Pi   float64 // the share of G steps over the side's runs
	pts  []mixPoint
	nB   []int // per run
	nG   []int
}

type mixPoint struct {
	x   float64
	run int32
	g   bool
}

// NewMixtureSide pools runs; pi is the schedule's share of steps with a
// full collection, or NaN to take the runs' own (the same thing for a
// deterministic schedule).
func NewMixtureSide(runs []LabelledRun, pi float64) (*MixtureSide, error) {
	s := &MixtureSide{Runs: len(runs)}
	var b, g int
	for i, r := range runs {
		s.nB, s.nG = append(s.nB, len(r.B)), append(s.nG, len(r.G))
		b, g = b+len(r.B), g+len(r.G)
		for _, x := range r.B {
			s.pts = append(s.pts, mixPoint{x, int32(i), false})
		}
		for _, x := range r.G {
			s.pts = append(s.pts, mixPoint{x, int32(i), true})
		}
	}
	if b+g == 0 {
		return nil, fmt.Errorf("no steps")
	}
	if math.IsNaN(pi) {
		pi = float64(g) / float64(b+g)
	}
	if pi < 0 || pi > 1 || (pi > 0 && g == 0) || (pi < 1 && b == 0) {
		return nil, fmt.Errorf("a share of %g steps with a full collection, from %d such steps and %d others", pi, g, b)
	}
	s.Pi = pi
	slices.SortFunc(s.pts, func(a, b mixPoint) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	return s, nil
}

// Quantile is the p-quantile of the mixture of the side's pooled B and G
// steps at the side's pi. weights, one per run (nil: all 1), are a
// resample's multiplicities: runs stay whole. bOnly gives the B steps' own
// quantile. Each step's mass spreads evenly from the value below it to its
// own (a piecewise linear CDF), so the quantile moves smoothly with the
// data instead of jumping between order statistics. The walk starts at the
// top: a tail quantile visits the few steps above it.
func (s *MixtureSide) Quantile(p float64, weights []float64, bOnly bool) float64 {
	var wb, wg float64
	for i := range s.nB {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		wb += w * float64(s.nB[i])
		wg += w * float64(s.nG[i])
	}
	pi := s.Pi
	if bOnly || wg == 0 {
		pi = 0
	}
	mb, mg := (1-pi)/wb, pi/wg
	mass := func(pt mixPoint) float64 {
		w := 1.0
		if weights != nil {
			w = weights[pt.run]
		}
		if pt.g {
			return mg * w
		}
		return mb * w
	}
	above := 0.0 // the mass above the current point
	for i := len(s.pts) - 1; i >= 0; i-- {
		m := mass(s.pts[i])
		if m == 0 {
			continue
		}
		if above+m < 1-p {
			above += m
			continue
		}
		// The CDF rises by m from the next point down with mass to this one.
		lo := s.pts[i].x
		for k := i - 1; k >= 0; k-- {
			if mass(s.pts[k]) > 0 {
				lo = s.pts[k].x
				break
			}
		}
		cdfLo := 1 - above - m
		return lo + (p-cdfLo)/m*(s.pts[i].x-lo)
	}
	return s.pts[0].x
}

// MixtureChange is the comparison of a tail quantile between two sides.
type MixtureChange struct {
	P          float64 // the quantile (0.99)
	BOnly      bool    // the B steps' own tail
	Old, New   float64 // the pooled estimates
	Change     float64 // new/old - 1
	Lo, Hi     float64 // its interval at 1-alpha
	PValue     float64
	SE, DF     float64 // of the log ratio
	Replicates int
}

// MixtureResamples is the bootstrap replicates a comparison draws.
const MixtureResamples = 200

// CompareMixture compares the p-quantile of two sides (bOnly: of their B
// steps) by resampling whole runs within each side: a replicate draws each
// side's runs with replacement, keeping every run's B and G steps together,
// and recomputes the quantile at the side's pi. The log ratio's standard
// error is the replicates', scaled by n/(n-1) per side (the bootstrap's
// variance of a mean is (n-1)/n of the unbiased one), with the session
// drift added as Compare adds it; Student's t on the conservative degrees of
// freedom (min(n1,n2)-1, Welch-Satterthwaite with drift) gives p and
// the interval.
func CompareMixture(old, new *MixtureSide, p float64, bOnly bool, alpha, drift float64, rng *rand.Rand) MixtureChange {
	c := MixtureChange{P: p, BOnly: bOnly, Replicates: MixtureResamples}
	c.Old, c.New = old.Quantile(p, nil, bOnly), new.Quantile(p, nil, bOnly)
	est := math.Log(c.New / c.Old)
	c.Change = math.Expm1(est)
	variance := func(s *MixtureSide) float64 {
		w := make([]float64, s.Runs)
		var sum, sum2 float64
		for range MixtureResamples {
			clear(w)
			for range s.Runs {
				w[rng.IntN(s.Runs)]++
			}
			l := math.Log(s.Quantile(p, w, bOnly))
			sum += l
			sum2 += l * l
		}
		m := sum / MixtureResamples
		v := math.Max(0, sum2/MixtureResamples-m*m)
		if s.Runs > 1 {
			v *= float64(s.Runs) / float64(s.Runs-1)
		}
		return v
	}
	within := variance(old) + variance(new)
	// Welch's conservative degrees of freedom: a bootstrap over 5 runs
	// estimates its own standard error loosely (on n1+n2-2 the A/A rate of
	// the B tail's p99 was 6-8% at 5 runs a side; on these 5.9% pooled over
	// the study's worlds, the mixture's 3.3%).
	c.DF = float64(min(old.Runs, new.Runs) - 1)
	total := within + drift*drift
	if drift > 0 && within > 0 {
		// Rounded: the critical values are cached by degrees of freedom.
		c.DF = math.Min(math.Round(100*c.DF*total*total/(within*within))/100, 1e6)
	}
	c.SE = math.Sqrt(total)
	switch {
	case c.SE == 0 && est == 0:
		c.PValue = 1
	case c.SE == 0:
		c.PValue = 0
	default:
		c.PValue = tPValue(est/c.SE, c.DF)
	}
	h := tCritical(alpha, c.DF) * c.SE
	c.Lo, c.Hi = math.Expm1(est-h), math.Expm1(est+h)
	return c
}

// Labelled splits one run's measured steps by the mechanism: G where a
// full collection ran inside the step (a global step's events are every
// rank's), B elsewhere; the step times in nanoseconds.
func Labelled(s *bench.Stream) LabelledRun {
	var lr LabelledRun
	for _, st := range s.Measured() {
		full := slices.ContainsFunc(st.GC, func(e bench.GCEvent) bool { return e.InStep && e.Gen == 2 })
		if full {
			lr.G = append(lr.G, float64(st.DurationNS))
		} else {
			lr.B = append(lr.B, float64(st.DurationNS))
		}
	}
	return lr
}
