package stats

import (
	"math"
	"slices"
)

// bootTail is how many bootstrap replicates lie beyond each end of a
// percentile interval. With 10 an end is an order statistic inside the
// replicates, and the tail it cuts off is known to about a third of
// itself (1/sqrt(10)); at 40 replicates a 95% interval's ends are the
// extreme replicates, whose tails are as uncertain as they are large.
const bootTail = 10

// BootReplicates is how many bootstrap replicates a percentile interval at
// level (0.95 for 95%) needs: bootTail beyond each end, 400 at 95%.
func BootReplicates(level float64) int {
	return int(math.Ceil(bootTail/((1-level)/2) - 1e-9))
}

// PercentileInterval is the bootstrap percentile interval at level from
// the replicates' values, which it sorts. Its ends are the order
// statistics at (B+1)a and (B+1)(1-a) of the B replicates (Hyndman and
// Fan's type 6, interpolated), a = (1-level)/2: on average a of the
// replicates' distribution lies beyond each. Type 7 (Quantile), at
// 1+(B-1)a, puts them inside that: at 40 replicates its 95% interval held
// 90% of the distribution.
func PercentileInterval(reps []float64, level float64) (lo, hi float64) {
	if len(reps) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(reps)
	a := (1 - level) / 2
	at := func(p float64) float64 {
		pos := p * float64(len(reps)+1) // 1-based
		i := int(math.Floor(pos))
		switch {
		case i < 1:
			return reps[0]
		case i >= len(reps):
			return reps[len(reps)-1]
		}
		return reps[i-1] + (pos-float64(i))*(reps[i]-reps[i-1])
	}
	return at(a), at(1 - a)
}
