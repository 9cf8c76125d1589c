package stats

import (
	"math"
	"slices"
	"sort"
	"sync"

	mstats "github.com/aclements/go-moremath/stats"
)

// setInterval sets the change and its interval at confidence 1-level.
func setInterval(r *Row, level float64) {
	switch r.Test {
	case TestULog, TestU:
		e, l, h := rawShiftCISorted(r.xs, r.ys, level)
		if r.logs {
			r.Change, r.ChangeLo, r.ChangeHi = math.Expm1(e), math.Expm1(l), math.Expm1(h)
			return
		}
		base := Quantile(sortedCopy(r.Old), 0.5)
		r.Change, r.ChangeLo, r.ChangeHi = relChange(base+e, base), relChange(base+l, base), relChange(base+h, base)
	case TestTLog, TestT:
		half := math.Inf(1)
		if !r.tooFew {
			half = tCritical(level, r.DF) * r.se
			if r.se == 0 {
				half = 0
			}
		}
		if r.logs {
			r.Change, r.ChangeLo, r.ChangeHi = math.Expm1(r.est), math.Expm1(r.est-half), math.Expm1(r.est+half)
			return
		}
		r.Change = relChange(r.base+r.est, r.base)
		r.ChangeLo, r.ChangeHi = relChange(r.base+r.est-half, r.base), relChange(r.base+r.est+half, r.base)
	}
}

// rawShiftCI is the Hodges-Lehmann estimate of the shift from old to new
// and its distribution-free confidence interval at level 1-alpha (from the
// order statistics of all pairwise differences, with the Mann-Whitney U
// distribution's critical value), on differences y-x (or log y - log x
// when logs).
func rawShiftCI(old, new []float64, alpha float64, logs bool) (est, lo, hi float64) {
	xs, ys := sortedCopy(old), sortedCopy(new)
	if logs {
		logAll(xs)
		logAll(ys)
	}
	return rawShiftCISorted(xs, ys, alpha)
}

// rawShiftCISorted is rawShiftCI on sorted xs and ys, as they are.
func rawShiftCISorted(xs, ys []float64, alpha float64) (est, lo, hi float64) {
	nm := len(xs) * len(ys)
	kth := func(k int) float64 { return kthDiff(xs, ys, k) } // 1-based
	if nm <= 1<<18 {
		diffs := make([]float64, 0, nm)
		for _, y := range ys {
			for _, x := range xs {
				diffs = append(diffs, y-x)
			}
		}
		sort.Float64s(diffs)
		kth = func(k int) float64 { return diffs[k-1] }
	}
	est = (kth((nm+1)/2) + kth(nm/2+1)) / 2 // the median difference
	lo, hi = math.Inf(-1), math.Inf(1)
	if k := uCritical(len(xs), len(ys), alpha); k >= 1 {
		lo, hi = kth(k), kth(nm+1-k)
	}
	return est, lo, hi
}

// kthDiff is the k-th smallest (1-based) of all differences y-x of sorted
// xs and ys, found without listing them: bisection on the value, counting
// the differences at or below it in O(n+m). Large samples (many runs of a
// foreign benchfmt file) would otherwise need n*m memory.
func kthDiff(xs, ys []float64, k int) float64 {
	countLE := func(d float64) int {
		// for each y, the xs with y-x <= d are those x >= y-d.
		n, j := 0, 0
		for _, y := range ys {
			for j < len(xs) && xs[j] < y-d {
				j++
			}
			n += len(xs) - j
		}
		return n
	}
	lo := ys[0] - xs[len(xs)-1] // the smallest difference
	hi := ys[len(ys)-1] - xs[0] // the largest
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if countLE(mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s
}

// uCritical returns the largest k with P(U <= k-1) <= alpha/2 under the
// null hypothesis, so that [D(k), D(nm+1-k)] of the sorted pairwise
// differences D is a confidence interval of level at least 1-alpha; 0 when
// the samples are too small for any finite interval. uCDF is the same
// distribution, so the interval excludes 0 exactly when the row's p is at
// most alpha.
func uCritical(n1, n2 int, alpha float64) int {
	key := [3]float64{float64(n1), float64(n2), alpha}
	if k, ok := uCriticalCache.Load(key); ok {
		return k.(int)
	}
	var k int
	if n1 <= 20 && n2 <= 20 {
		// Exact: the U distribution without ties.
		d := mstats.UDist{N1: n1, N2: n2}
		for u := 0; u <= n1*n2/2; u++ {
			if d.CDF(float64(u)) > alpha/2 {
				break
			}
			k = u + 1
		}
	} else {
		// Normal approximation with continuity correction; it agrees with
		// the exact value at 20x20 (128) and 50x50 (966).
		nm := float64(n1 * n2)
		z := mstats.StdNormal.InvCDF(1 - alpha/2)
		k = max(0, int(math.Floor(nm/2-z*math.Sqrt(nm*float64(n1+n2+1)/12)+0.5)))
	}
	uCriticalCache.Store(key, k)
	return k
}

var uCriticalCache sync.Map
