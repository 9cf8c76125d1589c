package stats

import (
	"math"
	"slices"
)

// Run-level outliers: runs of one variant whose typical step disagrees with
// the others beyond what the host's noise explains. A host disturbed for
// part of a session (another job, a CPU burner, a noisy neighbour) moves
// every step of the runs it overlapped, so their p50s stand apart from the
// rest; GC never moves p50 (collections are a few steps in a hundred).
//
// The test is Iglewicz and Hoaglin's modified z-score on the runs' p50
// (median and MAD, robust to up to half of the runs being disturbed; on the
// log of each run's ratio to its variant's median, the MAD pooled over the
// session), with a floor on the run's ratio to the median: the noise of a run's p50 is
// heavy-tailed on shared VMs, and a MAD of 5 runs says little about its
// tails. The floor is measured: on a quiet 2-core VM the 115 runs of the
// quick suite's baselines (5 a variant) lay between 0.71x and 1.40x of their
// variants' medians (the sub-millisecond cases; the others within 0.83x and
// 1.26x), while the disturbance that spoiled the shipped baselines ran at
// 2x. So a run is an outlier only at 1.6x or 1/1.6x of the median or beyond:
// at a 10% spread of the runs' log p50 that is 4 standard deviations.
// OutlierMetrics are the run figures the test reads: p50, which a
// disturbance that slows every step moves (another job's memory traffic, a
// slower clock), and the mean, which a CPU taken by another process moves
// when p50 does not (measured: two CPU burners on a 2-core VM left the
// sub-millisecond runs' p50 within 0.69x-1.43x of their medians, their mean
// at up to 2.34x).
var OutlierMetrics = []string{"p50", "mean"}

const (
	// OutlierZ is the modified z-score beyond which a run is an outlier
	// (Iglewicz and Hoaglin's recommended 3.5).
	OutlierZ = 3.5
	// OutlierRatio is the least ratio to the median (or its inverse) that
	// counts.
	OutlierRatio = 1.6

	// OutlierRatioShort is the floor for short runs, whose steps together
	// last under OutlierShortRunNS: a whole run of a few milliseconds to
	// a few dozen is moved by where and when it ran as a longer one is
	// not (measured on a quiet 2-core VM: 12-run sessions of 7 ms and 72
	// ms runs met 1.61x-1.68x now and then, and golden update refused
	// them twice in a row), while the disturbances it must catch ran at
	// 2x and beyond (a CPU burner put 30 ms runs at 2.5x-3.0x).
	OutlierRatioShort = 2.0
	OutlierShortRunNS = 1e9

	// OutlierMinRuns: with fewer runs, which side is the outlier is unknowable.
	OutlierMinRuns = 3
)

// Outlier is one outlying run: its index among its group's runs, its
// value, and the group's median.
type Outlier struct {
	Index         int
	Value, Median float64
}

// Ratio is the run's value over the median.
func (o Outlier) Ratio() float64 { return o.Value / o.Median }

// OutlyingRuns are, per group (the runs of one variant, one value each),
// the runs that disagree with the others: a ratio to the group's median of
// OutlierRatio or beyond, and a modified z-score above OutlierZ. The
// z-score's scale is pooled over every group of the session (the MAD of
// the runs' log ratios to their medians): a MAD of one variant's 5 runs
// swings with its own luck, the session's is the host's noise. Groups of
// fewer than OutlierMinRuns runs are not judged.
func OutlyingRuns(groups [][]float64) [][]Outlier {
	out := make([][]Outlier, len(groups))
	meds := make([]float64, len(groups))
	var pool []float64
	for g, xs := range groups {
		if len(xs) < OutlierMinRuns {
			continue
		}
		meds[g] = medianOfValues(xs)
		if meds[g] <= 0 {
			continue
		}
		for _, x := range xs {
			if x > 0 {
				pool = append(pool, math.Abs(math.Log(x/meds[g])))
			}
		}
	}
	if len(pool) == 0 {
		return out
	}
	scale := 1.4826 * medianOfValues(pool)
	for g, xs := range groups {
		if len(xs) < OutlierMinRuns || meds[g] <= 0 {
			continue
		}
		for i, x := range xs {
			if x <= 0 {
				continue
			}
			d := math.Abs(math.Log(x / meds[g]))
			if d < math.Log(OutlierRatio) || (scale > 0 && d <= OutlierZ*scale) {
				continue
			}
			out[g] = append(out[g], Outlier{Index: i, Value: x, Median: meds[g]})
		}
	}
	return out
}

func medianOfValues(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// OutlierFloor is the ratio to the median a run must reach to be an
// outlier, by how long its measured steps last together.
func OutlierFloor(runNS float64) float64 {
	if runNS < OutlierShortRunNS {
		return OutlierRatioShort
	}
	return OutlierRatio
}
