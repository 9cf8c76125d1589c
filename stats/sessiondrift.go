package stats

import (
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"
)

// SessionSpread is how much one metric's level moves from session to
// session of one host beyond its runs' own spread (other neighbours,
// another boot, another thermal state): what more runs in one session
// cannot average away.
type SessionSpread struct {
	Sessions, Runs int
	// Within is the runs' pooled spread within a session (SD, on the log
	// scale: about relative).
	Within float64
	// SD is one session's level's standard deviation beyond Within, and
	// Upper its one-sided 90% upper confidence bound (0 and +Inf where
	// fewer than 2 sessions say nothing).
	SD, Upper float64
}

// Drift is the session drift of a comparison of one session against
// another (Options.Drift: the SD of their difference, √2 SD), and
// DriftUpper the same from Upper. A history baseline pools many sessions,
// so against it the drift is SD alone.
func (s SessionSpread) Drift() float64      { return math.Sqrt2 * s.SD }
func (s SessionSpread) DriftUpper() float64 { return math.Sqrt2 * s.Upper }

// SessionDrift estimates how much sessions' levels move beyond their runs'
// spread, on the log scale the tests use: the variance of the sessions'
// mean log values less the part their runs' own variance explains
// (one-way random effects, method of moments), as a standard deviation.
// Values that are not all positive are taken relative to their mean. The
// upper bound takes the sessions' means' variance at its chi-square 90%
// upper limit (k-1 degrees of freedom).
func SessionDrift(sessions [][]float64) SessionSpread {
	out := SessionSpread{Upper: math.Inf(1)}
	var all []float64
	for _, xs := range sessions {
		all = append(all, xs...)
	}
	out.Runs = len(all)
	if len(all) == 0 {
		return out
	}
	logs := !slices.ContainsFunc(all, func(x float64) bool { return !(x > 0) })
	mean := 0.0
	for _, x := range all {
		mean += x
	}
	mean /= float64(len(all))
	scale := func(x float64) float64 {
		if logs {
			return math.Log(x)
		}
		if mean == 0 {
			return 0
		}
		return x / mean
	}
	var means []float64
	within, pooled, df := 0.0, 0.0, 0
	k := 0
	for _, xs := range sessions {
		if len(xs) == 0 {
			continue
		}
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = scale(x)
		}
		m, v := meanVar(ys)
		means = append(means, m)
		if len(ys) > 1 {
			within += v / float64(len(ys))
			pooled += v * float64(len(ys)-1)
			df += len(ys) - 1
			k++
		}
	}
	out.Sessions = len(means)
	if df > 0 {
		out.Within = math.Sqrt(pooled / float64(df))
	}
	if len(means) < 2 {
		return out
	}
	_, between := meanVar(means)
	if k > 0 {
		within /= float64(k)
	}
	out.SD = math.Sqrt(max(0, between-within))
	nu := float64(len(means) - 1)
	out.Upper = math.Sqrt(max(0, between*nu/chiSquareQuantile(0.10, nu)-within))
	return out
}

// chiSquareQuantile is the p-quantile of the chi-square distribution with
// nu degrees of freedom, by Wilson and Hilferty's cube-root normal
// approximation (within a few percent from nu = 1 at p = 0.10).
func chiSquareQuantile(p, nu float64) float64 {
	z := mstats.StdNormal.InvCDF(p)
	c := 2 / (9 * nu)
	return nu * math.Pow(max(0, 1-c+z*math.Sqrt(c)), 3)
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}
