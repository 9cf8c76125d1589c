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
// (median and MAD, robust to up to half of the runs being disturbed), with
// a relative floor so that a host whose runs agree to a fraction of a
// percent (MAD near 0) does not call a 3% difference an outlier.
const (
	// OutlierZ is the modified z-score beyond which a run is an outlier
	// (Iglewicz and Hoaglin's recommended 3.5).
	OutlierZ = 3.5
	// OutlierFloor is the least relative distance from the median that
	// counts: three times the session drift shared hosts show (HostDrift).
	OutlierFloor = 3 * HostDrift
	// OutlierMetric is the run figure the test reads.
	OutlierMetric = "p50"
	// OutlierMinRuns: with fewer runs, which side is the outlier is unknowable.
	OutlierMinRuns = 3
)

// Outlier is one outlying run: its index among the runs given, its value,
// and the runs' median.
type Outlier struct {
	Index         int
	Value, Median float64
}

// Ratio is the run's value over the median.
func (o Outlier) Ratio() float64 { return o.Value / o.Median }

// OutlyingRuns are the runs among xs (one value per run) that disagree with
// the others: modified z-score above OutlierZ and further than OutlierFloor
// from the median. None for fewer than OutlierMinRuns runs.
func OutlyingRuns(xs []float64) []Outlier {
	if len(xs) < OutlierMinRuns {
		return nil
	}
	med := medianOfValues(xs)
	if med <= 0 {
		return nil
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	// MAD 0 (more than half the runs equal): any run off the median by more
	// than the floor is an outlier.
	mad := medianOfValues(dev)
	var out []Outlier
	for i, x := range xs {
		if dev[i] <= OutlierFloor*med {
			continue
		}
		if mad > 0 && 0.6745*dev[i]/mad <= OutlierZ {
			continue
		}
		out = append(out, Outlier{Index: i, Value: x, Median: med})
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
