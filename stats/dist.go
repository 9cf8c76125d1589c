package stats

import (
	"math"
	"sync"

	"github.com/aclements/go-moremath/mathx"
	mstats "github.com/aclements/go-moremath/stats"
)

// tPValue is the two-sided p-value of Student's t statistic t with df
// degrees of freedom. The incomplete beta function gives the tail itself,
// so p-values of 1e-12 keep their digits (1-CDF would not).
func tPValue(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || !(df > 0):
		return math.NaN()
	case math.IsInf(t, 0):
		return 0
	}
	return mathx.BetaInc(df/(df+t*t), df/2, 0.5)
}

var tCriticalCache sync.Map

// tCritical is the two-sided critical value c of Student's t with df
// degrees of freedom at the given level: tPValue(c, df) = level.
func tCritical(level, df float64) float64 {
	switch {
	case level >= 1:
		return 0
	case !(level > 0) || !(df > 0):
		return math.Inf(1)
	}
	key := [2]float64{level, df}
	if c, ok := tCriticalCache.Load(key); ok {
		return c.(float64)
	}
	lo, hi := 0.0, 1.0
	for tPValue(hi, df) > level {
		lo, hi = hi, 2*hi
		if hi > 1e150 {
			return math.Inf(1)
		}
	}
	// Newton's method on the p-value, kept inside the bracket (a bisection
	// step where it would leave it): about 6 incomplete-beta calls where
	// bisection to full precision took about 60, and Welch's degrees of
	// freedom make most calls a cache miss.
	lgamma := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	logNorm := lgamma((df+1)/2) - lgamma(df/2) - 0.5*math.Log(df*math.Pi)
	x := lo + (hi-lo)/2
	p := tPValue(x, df) // always x's
	for range 200 {
		if p > level {
			lo = x
		} else {
			hi = x
		}
		// -dp/dx: twice the t density at x.
		slope := 2 * math.Exp(logNorm-(df+1)/2*math.Log1p(x*x/df))
		next := x + (p-level)/slope
		if !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
		}
		if next <= lo || next >= hi || math.Abs(next-x) <= 1e-15*x {
			break
		}
		x, p = next, tPValue(next, df)
	}
	// The critical value is the least c with p <= level, so that |t| >= c
	// exactly when t is significant at level (Holm's thresholds and the
	// intervals agree): step the last ulps to it, or bisect what is left
	// where that is more.
	c := x
	if p <= level {
		hi = c
		for range 16 {
			below := math.Nextafter(c, 0)
			if tPValue(below, df) > level {
				tCriticalCache.Store(key, c)
				return c
			}
			c, hi = below, below
		}
	} else {
		lo = c
		for range 16 {
			c = math.Nextafter(c, math.Inf(1))
			if tPValue(c, df) <= level {
				tCriticalCache.Store(key, c)
				return c
			}
			lo = c
		}
	}
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if tPValue(mid, df) > level {
			lo = mid
		} else {
			hi = mid
		}
	}
	tCriticalCache.Store(key, hi)
	return hi
}

// zCritical is the two-sided critical value of the standard normal.
func zCritical(level float64) float64 {
	switch {
	case level >= 1:
		return 0
	case !(level > 0):
		return math.Inf(1)
	}
	return -mstats.StdNormal.InvCDF(level / 2)
}

// tPower is the probability that a noncentral t with df degrees of
// freedom and noncentrality lambda exceeds c: P((Z+lambda)/sqrt(V/df) > c)
// with V chi-squared on df. It integrates the normal tail over w =
// sqrt(V), whose density has no singularity even at df = 1.
func tPower(lambda, c, df float64) float64 {
	if math.IsInf(c, 1) {
		return 0
	}
	if df > 300 {
		// The chi-squared factor is ~1: the normal's tail.
		return mstats.StdNormal.CDF(lambda - c)
	}
	lg, _ := math.Lgamma(df / 2)
	logC := -(df/2-1)*math.Ln2 - lg
	const n = 800 // even: Simpson's rule
	wmax := math.Sqrt(df) + 12
	h := wmax / n
	sum := 0.0
	for i := 0; i <= n; i++ {
		w := float64(i) * h
		var g float64
		switch {
		case w == 0 && df == 1:
			g = math.Exp(logC)
		case w == 0:
			g = 0
		default:
			g = math.Exp((df-1)*math.Log(w) - w*w/2 + logC)
		}
		f := g * mstats.StdNormal.CDF(lambda-c*w/math.Sqrt(df))
		switch {
		case i == 0 || i == n:
			sum += f
		case i%2 == 1:
			sum += 4 * f
		default:
			sum += 2 * f
		}
	}
	return math.Min(1, sum*h/3)
}

var tNoncentralityCache sync.Map

// tNoncentrality is the noncentrality lambda at which a two-sided t-test
// at level, with df degrees of freedom, rejects (on the side of the
// effect) with probability power: the effect in standard errors that the
// test detects.
func tNoncentrality(level, df, power float64) float64 {
	key := [3]float64{level, df, power}
	if l, ok := tNoncentralityCache.Load(key); ok {
		return l.(float64)
	}
	c := tCritical(level, df)
	if math.IsInf(c, 1) {
		return math.Inf(1)
	}
	lo, hi := 0.0, c+1
	for tPower(hi, c, df) < power {
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 60 {
		mid := lo + (hi-lo)/2
		if tPower(mid, c, df) < power {
			lo = mid
		} else {
			hi = mid
		}
	}
	tNoncentralityCache.Store(key, hi)
	return hi
}

// uMinP is the smallest two-sided p-value the Mann-Whitney U test can give
// for n1 and n2 runs (complete separation): 2/C(n1+n2, n1).
func uMinP(n1, n2 int) float64 {
	return math.Min(1, 2*math.Exp(-mathx.Lchoose(n1+n2, n1)))
}

// uCDF is P(U <= u) for the U statistic of n1 and n2 values without ties:
// exact up to 20 runs a side, else the normal approximation with a
// continuity correction (the same rule as uCritical, so that p-values and
// intervals agree).
func uCDF(u float64, n1, n2 int) float64 {
	if n1 <= 20 && n2 <= 20 {
		return mstats.UDist{N1: n1, N2: n2}.CDF(u)
	}
	nm := float64(n1 * n2)
	sd := math.Sqrt(nm * float64(n1+n2+1) / 12)
	return mstats.StdNormal.CDF((u + 0.5 - nm/2) / sd)
}
