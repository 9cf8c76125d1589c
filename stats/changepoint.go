package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"
)

// ChangePoint is a shift in the level of a series (of nights): the first
// point after it, its size, and how sure the detector is.
type ChangePoint struct {
	// Index is the first point after the shift.
	Index int
	// P is the permutation p-value of the split (E-divisive's test).
	P float64
	// Size is the relative change of the level from the segment before to
	// the segment after (the geometric means of positive series, the
	// means otherwise), with a 95% interval [Lo, Hi].
	Size, Lo, Hi float64
	// Before and After are the segments' levels.
	Before, After float64
}

// ChangePointOptions tune ChangePoints; zero values take the defaults.
type ChangePointOptions struct {
	Alpha        float64 // significance of each split (0.05)
	Permutations int     // permutations per test (199)
	MinSize      int     // fewest points in a segment (5)
	Seed         uint64  // the permutations' seed: the same series gives the same answer
}

func (o ChangePointOptions) withDefaults() ChangePointOptions {
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.MinSize <= 0 {
		o.MinSize = 5
	}
	return o
}

// ChangePoints finds the shifts in xs by E-divisive means (Matteson and
// James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014), the method MongoDB's and Apache Otava's
// performance CI use: the split that maximises the energy distance between
// the two sides, kept when a permutation test finds it significant, then
// the same within each side (binary segmentation). With the exponent 1 and
// one dimension, the statistic of every split is computed in O(n log n)
// (sums of |x_i - x_j| kept with Fenwick trees over ranks), so a year of
// nights with 199 permutations per test takes milliseconds.
//
// Positive series are split on their logs, so a shift is a ratio and the
// noise of a time series is as wide at any level. The result is in order
// of Index.
func ChangePoints(xs []float64, o ChangePointOptions) []ChangePoint {
	o = o.withDefaults()
	ys := slices.Clone(xs)
	logs := true
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			logs = false
			break
		}
	}
	if logs {
		for i := range ys {
			ys[i] = math.Log(ys[i])
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	var cuts []int
	var p []float64
	type segment struct{ lo, hi int }
	queue := []segment{{0, len(ys)}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		tau, pv, ok := splitSegment(ys[s.lo:s.hi], o, rng)
		if !ok {
			continue
		}
		cuts = append(cuts, s.lo+tau)
		p = append(p, pv)
		queue = append(queue, segment{s.lo, s.lo + tau}, segment{s.lo + tau, s.hi})
	}
	order := make([]int, len(cuts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cuts[a] - cuts[b] })
	out := make([]ChangePoint, 0, len(cuts))
	for k, i := range order {
		lo, hi := 0, len(ys)
		if k > 0 {
			lo = cuts[order[k-1]]
		}
		if k+1 < len(order) {
			hi = cuts[order[k+1]]
		}
		cp := ChangePoint{Index: cuts[i], P: p[i]}
		cp.Size, cp.Lo, cp.Hi, cp.Before, cp.After = levelShift(ys[lo:cuts[i]], ys[cuts[i]:hi], logs)
		out = append(out, cp)
	}
	return out
}

// splitSegment finds ys' best split and tests it: ok when the permutation
// p-value is at most alpha. The permutations stop as soon as the p-value
// can no longer get there, so a flat segment costs a few of them.
func splitSegment(ys []float64, o ChangePointOptions, rng *rand.Rand) (tau int, p float64, ok bool) {
	n := len(ys)
	if n < 2*o.MinSize {
		return 0, 1, false
	}
	var e energy
	tau, q := e.best(ys, o.MinSize)
	perm := slices.Clone(ys)
	exceed := 0
	limit := int(math.Floor(o.Alpha*float64(o.Permutations+1))) - 1 // the most exceedances that still give p <= alpha
	for r := 0; r < o.Permutations; r++ {
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, qp := e.best(perm, o.MinSize); qp >= q {
			exceed++
			if exceed > limit {
				return tau, float64(exceed+1) / float64(r+2), false
			}
		}
	}
	p = float64(exceed+1) / float64(o.Permutations+1)
	return tau, p, p <= o.Alpha
}

// energy holds the scratch space of the split statistic.
type energy struct {
	rank             []int
	order            []int
	left, right      []float64
	cntTree, sumTree []float64
}

// best is the split tau (MinSize <= tau <= n-MinSize) maximising
// Matteson and James' Q(tau) = (m k / n) * (2/(m k) B - W_L/C(m,2) - W_R/C(k,2)),
// with m = tau, k = n - tau, B the sum of |x - y| across the split and W_L,
// W_R the sums within each side.
func (e *energy) best(ys []float64, minSize int) (tau int, q float64) {
	n := len(ys)
	e.ranks(ys)
	e.left = e.within(ys, e.left[:0], false)
	e.right = e.within(ys, e.right[:0], true)
	total := e.left[n]
	q = math.Inf(-1)
	for t := minSize; t <= n-minSize; t++ {
		m, k := float64(t), float64(n-t)
		wl, wr := e.left[t], e.right[t]
		b := total - wl - wr
		stat := 2 * b / (m * k)
		if t > 1 {
			stat -= wl / (m * (m - 1) / 2)
		}
		if n-t > 1 {
			stat -= wr / (k * (k - 1) / 2)
		}
		stat *= m * k / float64(n)
		if stat > q {
			tau, q = t, stat
		}
	}
	return tau, q
}

func (e *energy) ranks(ys []float64) {
	n := len(ys)
	e.order = e.order[:0]
	for i := 0; i < n; i++ {
		e.order = append(e.order, i)
	}
	slices.SortFunc(e.order, func(a, b int) int {
		switch {
		case ys[a] < ys[b]:
			return -1
		case ys[a] > ys[b]:
			return 1
		}
		return a - b
	})
	e.rank = slices.Grow(e.rank[:0], n)[:n]
	for r, i := range e.order {
		e.rank[i] = r
	}
}

// within returns w with w[t] the sum of |y_i - y_j| over pairs inside the
// prefix ys[:t] (or, reversed, inside the suffix ys[t:]), for t in 0..n.
func (e *energy) within(ys []float64, w []float64, suffix bool) []float64 {
	n := len(ys)
	w = slices.Grow(w, n+1)[:n+1]
	e.cntTree = clear0(e.cntTree, n+1)
	e.sumTree = clear0(e.sumTree, n+1)
	var cnt, sum float64 // of everything added so far
	add := func(i int) float64 {
		r := e.rank[i] + 1
		var cLess, sLess float64
		for j := r - 1; j > 0; j -= j & -j {
			cLess += e.cntTree[j]
			sLess += e.sumTree[j]
		}
		y := ys[i]
		d := (cLess*y - sLess) + ((sum - sLess) - (cnt-cLess)*y)
		for j := r; j <= n; j += j & -j {
			e.cntTree[j]++
			e.sumTree[j] += y
		}
		cnt++
		sum += y
		return d
	}
	if suffix {
		w[n] = 0
		for t := n - 1; t >= 0; t-- {
			w[t] = w[t+1] + add(t)
		}
	} else {
		w[0] = 0
		for t := 1; t <= n; t++ {
			w[t] = w[t-1] + add(t-1)
		}
	}
	return w
}

func clear0(s []float64, n int) []float64 {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// levelShift is the change from segment a to segment b: on logs, the
// ratio of geometric means with a Welch t interval; otherwise the
// difference of means relative to a's.
func levelShift(a, b []float64, logs bool) (size, lo, hi, before, after float64) {
	ma, mb := mstats.Mean(a), mstats.Mean(b)
	df := float64(len(a) + len(b) - 2)
	va, vb := 0.0, 0.0
	if len(a) > 1 {
		va = mstats.Variance(a) / float64(len(a))
	}
	if len(b) > 1 {
		vb = mstats.Variance(b) / float64(len(b))
	}
	se2 := va + vb
	if va > 0 && vb > 0 {
		df = se2 * se2 / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	}
	t := tCritical(0.05, max(df, 1))
	d, half := mb-ma, t*math.Sqrt(se2)
	if logs {
		return math.Expm1(d), math.Expm1(d - half), math.Expm1(d + half), math.Exp(ma), math.Exp(mb)
	}
	if ma == 0 {
		return math.NaN(), math.NaN(), math.NaN(), ma, mb
	}
	return d / math.Abs(ma), (d - half) / math.Abs(ma), (d + half) / math.Abs(ma), ma, mb
}
