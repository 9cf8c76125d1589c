package stats

import (
	"math"
	"testing"
)

// bisectTCritical is tCritical by bisection to the last ulp: the
// reference for the Newton steps tCritical takes.
func bisectTCritical(level, df float64) float64 {
	lo, hi := 0.0, 1.0
	for tPValue(hi, df) > level {
		lo, hi = hi, 2*hi
	}
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return hi
		}
		if tPValue(mid, df) > level {
			lo = mid
		} else {
			hi = mid
		}
	}
}

// TestTCriticalIsTheLeastSignificantT: over integer and Welch (fractional)
// degrees of freedom and the levels Holm's steps give, tCritical is the
// least t whose p-value is at most the level, as bisection finds it.
func TestTCriticalIsTheLeastSignificantT(t *testing.T) {
	for _, df := range []float64{1, 1.37, 2, 3.9, 4, 7.25, 8, 17.6, 40, 133.3, 1e4} {
		for _, level := range []float64{0.5, 0.1, 0.05, 0.05 / 3, 0.01, 0.05 / 60, 1e-6, 1e-10} {
			tCriticalCache.Clear()
			c, want := tCritical(level, df), bisectTCritical(level, df)
			if tPValue(c, df) > level {
				t.Errorf("df %g level %g: p(%v) = %g, above the level", df, level, c, tPValue(c, df))
			}
			// At the last ulps the incomplete beta's rounding can make two
			// searches stop a few apart; each must stop at a least t.
			if tPValue(math.Nextafter(c, 0), df) <= level || math.Abs(c-want) > 1e-14*want {
				t.Errorf("df %g level %g: %v, bisection %v", df, level, c, want)
			}
		}
	}
}

// BenchmarkTCritical: one uncached critical value at a Welch degrees of
// freedom (BENCHMARKS.md, "tCritical"); /bisect is the old search.
func BenchmarkTCritical(b *testing.B) {
	b.Run("newton", func(b *testing.B) {
		for i := range b.N {
			tCriticalCache.Clear()
			tCritical(0.05/7, 7.3+float64(i%5))
		}
	})
	b.Run("bisect", func(b *testing.B) {
		for i := range b.N {
			bisectTCritical(0.05/7, 7.3+float64(i%5))
		}
	})
}
