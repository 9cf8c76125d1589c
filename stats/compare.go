package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	mstats "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// Verdict is the judgement on one metric (a contract: reports, JUnit and
// scripts key on these words).
type Verdict string

const (
	// Regressed: the change is significant and its confidence interval is
	// entirely on the bad side of the floor.
	Regressed Verdict = "regressed"
	// Improved: the same, on the good side.
	Improved Verdict = "improved"
	// Same: the confidence interval lies inside ±floor.
	Same Verdict = "same"
	// Unknown: the data cannot tell a change of the floor's size from none.
	Unknown Verdict = "unknown"
)

// Options configure a comparison.
type Options struct {
	// Alpha is the family-wise significance level over every metric and
	// benchmark of the comparison (Holm's method). 0 means 0.05.
	Alpha float64
	// Floor returns a pair's floor: the smallest relative change of its
	// metric worth a verdict. Nil, or a negative answer, means
	// DefaultFloors for gcjitter's metrics and DefaultFloor for others.
	Floor func(p Pair) float64
	// DefaultFloor is the floor of metrics Floor does not know. 0 means 5%.
	DefaultFloor float64
}

func (o Options) alpha() float64 {
	if o.Alpha <= 0 {
		return 0.05
	}
	return o.Alpha
}

func (o Options) floor(p Pair) float64 {
	if o.Floor != nil {
		if f := o.Floor(p); f >= 0 {
			return f
		}
	}
	if f, ok := DefaultFloors[p.Metric]; ok {
		return f
	}
	if o.DefaultFloor > 0 {
		return o.DefaultFloor
	}
	return 0.05
}

// Pair is one metric of one benchmark, measured on both sides: one value
// per run.
type Pair struct {
	Bench  string
	Metric string // a gate name (p99) or, for foreign data, the unit
	Unit   string
	// Better is -1 when lower values are better (every gcjitter metric),
	// +1 when higher are.
	Better   int
	Exact    bool // a deterministic count: compared as is, not tested
	Old, New []float64
}

// Estimate is a sample's center (the median of its per-run values) and the
// confidence interval of that median.
type Estimate struct {
	Center, Lo, Hi float64
	N              int
}

// Row is the comparison of one Pair.
type Row struct {
	Pair
	OldEst, NewEst Estimate
	// Change is new relative to old (+0.05 is 5% higher), with its
	// confidence interval: the Hodges-Lehmann shift of the per-run values
	// (of their logarithms when all are positive), distribution-free, the
	// interval that matches the Mann-Whitney U test.
	Change, ChangeLo, ChangeHi float64
	// P is the U test's p-value, PAdj after Holm's correction; NaN for
	// exact metrics.
	P, PAdj float64
	Floor   float64
	Verdict Verdict
	// Reason says why, in words.
	Reason string
	// RunsNeeded, for an unknown verdict, estimates how many runs per side
	// would likely decide it (0 when no estimate can be made).
	RunsNeeded int
	Warnings   []string
}

// Compare compares every pair and returns the rows in the order given.
func Compare(pairs []Pair, opt Options) []*Row {
	alpha := opt.alpha()
	rows := make([]*Row, len(pairs))
	for i, p := range pairs {
		rows[i] = compareOne(p, alpha, opt.floor(p))
	}
	holm(rows)
	tests := 0
	for _, r := range rows {
		if !math.IsNaN(r.P) {
			tests++
		}
	}
	for _, r := range rows {
		decide(r, alpha, tests)
	}
	return rows
}

// clean sets aside values no metric can take: non-finite ones, and
// negative ones (every gcjitter metric is a time, count, rate or share, and
// a change in percent of a negative baseline means nothing).
func clean(name string, xs []float64) ([]float64, []string) {
	out := make([]float64, 0, len(xs))
	var warn []string
	bad, neg := 0, 0
	for _, x := range xs {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			bad++
		case x < 0:
			neg++
		default:
			out = append(out, x)
		}
	}
	if bad > 0 {
		warn = append(warn, fmt.Sprintf("%s: %d non-finite values ignored", name, bad))
	}
	if neg > 0 {
		warn = append(warn, fmt.Sprintf("%s: %d negative values ignored (times, counts, rates and shares cannot be negative)", name, neg))
	}
	return out, warn
}

func estimate(xs []float64, confidence float64) Estimate {
	if len(xs) == 0 {
		return Estimate{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), confidence)
	return Estimate{Center: s.Center, Lo: s.Lo, Hi: s.Hi, N: len(xs)}
}

func compareOne(p Pair, alpha, floor float64) *Row {
	if p.Better == 0 {
		p.Better = -1
	}
	r := &Row{Pair: p, Floor: floor, P: math.NaN(), PAdj: math.NaN(), Change: math.NaN(), ChangeLo: math.NaN(), ChangeHi: math.NaN()}
	var w1, w2 []string
	r.Old, w1 = clean("old", p.Old)
	r.New, w2 = clean("new", p.New)
	r.Warnings = append(w1, w2...)
	r.OldEst, r.NewEst = estimate(r.Old, 1-alpha), estimate(r.New, 1-alpha)
	if len(r.Old) == 0 || len(r.New) == 0 {
		side := "old"
		if len(r.Old) > 0 {
			side = "new"
		}
		r.Verdict, r.Reason = Unknown, fmt.Sprintf("no runs on the %s side", side)
		return r
	}
	if !p.Exact && allEqual(r.Old) && allEqual(r.New) && r.Old[0] == r.New[0] {
		// Every run of both sides gave the same value (no pause of that
		// generation at all, say): nothing to test, nothing changed.
		r.Exact = true
	}
	if r.Exact {
		if allEqual(r.Old) && allEqual(r.New) {
			r.Change = relChange(r.New[0], r.Old[0])
			r.ChangeLo, r.ChangeHi = r.Change, r.Change
			return r
		}
		r.Warnings = append(r.Warnings, "values differ between runs of one side: compared as noisy")
		r.Exact = false
	}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(r.Old, &benchmath.DefaultThresholds), benchmath.NewSample(r.New, &benchmath.DefaultThresholds))
	r.P = cmp.P
	r.Change, r.ChangeLo, r.ChangeHi = shiftCI(r.Old, r.New, alpha)
	return r
}

func allEqual(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// relChange is (new-old)/|old|, with 0/0 = 0 and x/0 = ±Inf.
func relChange(new, old float64) float64 {
	d := new - old
	switch {
	case d == 0:
		return 0
	case old == 0:
		return math.Copysign(math.Inf(1), d)
	}
	return d / math.Abs(old)
}

// shiftCI is the Hodges-Lehmann estimate of the shift from old to new and
// its distribution-free confidence interval at level 1-alpha (from the
// order statistics of all pairwise differences, with the Mann-Whitney U
// distribution's critical value), as a relative change. Logarithms are
// used when every value is positive (a scale change); differences
// relative to old's median otherwise.
func shiftCI(old, new []float64, alpha float64) (est, lo, hi float64) {
	logs := slices.IndexFunc(old, func(x float64) bool { return x <= 0 }) < 0 &&
		slices.IndexFunc(new, func(x float64) bool { return x <= 0 }) < 0
	e, l, h := rawShiftCI(old, new, alpha, logs)
	if logs {
		return math.Expm1(e), math.Expm1(l), math.Expm1(h)
	}
	base := Quantile(sortedCopy(old), 0.5)
	return relChange(base+e, base), relChange(base+l, base), relChange(base+h, base)
}

// rawShiftCI works on differences y-x (or log y - log x when logs).
func rawShiftCI(old, new []float64, alpha float64, logs bool) (est, lo, hi float64) {
	xs, ys := sortedCopy(old), sortedCopy(new)
	if logs {
		for i := range xs {
			xs[i] = math.Log(xs[i])
		}
		for i := range ys {
			ys[i] = math.Log(ys[i])
		}
	}
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
// the samples are too small for any finite interval.
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

// holm sets PAdj by Holm's step-down method over the rows that were tested.
func holm(rows []*Row) {
	var tested []*Row
	for _, r := range rows {
		if !math.IsNaN(r.P) {
			tested = append(tested, r)
		}
	}
	sort.SliceStable(tested, func(i, j int) bool { return tested[i].P < tested[j].P })
	m := len(tested)
	running := 0.0
	for i, r := range tested {
		adj := math.Min(1, float64(m-i)*r.P)
		running = math.Max(running, adj) // adjusted p-values never decrease
		r.PAdj = running
	}
}

// decide turns a row's change, interval and adjusted p into a verdict.
func decide(r *Row, alpha float64, tests int) {
	if r.Verdict != "" {
		return
	}
	// bad is the change oriented so that positive is worse.
	bad, badLo, badHi := r.Change, r.ChangeLo, r.ChangeHi
	if r.Better > 0 {
		bad, badLo, badHi = -bad, -badHi, -badLo
	}
	f := r.Floor
	if r.Exact {
		switch {
		case math.Abs(bad) <= f:
			r.Verdict, r.Reason = Same, "exact: unchanged"
			if bad != 0 {
				r.Reason = fmt.Sprintf("exact: changed by %s, within the floor ±%s", Pct(r.Change), pctAbs(f))
			}
		case bad > 0:
			r.Verdict, r.Reason = Regressed, fmt.Sprintf("exact: %s -> %s (%s), beyond the floor ±%s", num(r.Old[0]), num(r.New[0]), Pct(r.Change), pctAbs(f))
		default:
			r.Verdict, r.Reason = Improved, fmt.Sprintf("exact: %s -> %s (%s), beyond the floor ±%s", num(r.Old[0]), num(r.New[0]), Pct(r.Change), pctAbs(f))
		}
		return
	}
	significant := r.PAdj < alpha
	ci := fmt.Sprintf("%s [%s, %s]", Pct(r.Change), Pct(r.ChangeLo), Pct(r.ChangeHi))
	switch {
	case significant && badLo > f:
		r.Verdict = Regressed
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; p=%s after Holm over %d tests", ci, floorText(f, r.Better, true), pval(r.PAdj), tests)
	case significant && badHi < -f:
		r.Verdict = Improved
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; p=%s after Holm over %d tests", ci, floorText(f, r.Better, false), pval(r.PAdj), tests)
	case badLo >= -f && badHi <= f:
		r.Verdict = Same
		r.Reason = fmt.Sprintf("%s, inside the floor ±%s", ci, pctAbs(f))
	default:
		r.Verdict = Unknown
		switch {
		case math.IsInf(r.ChangeLo, 0) && math.IsInf(r.ChangeHi, 0):
			r.Reason = fmt.Sprintf("too few runs (%d+%d) for a confidence interval", len(r.Old), len(r.New))
		case badLo > f || badHi < -f:
			r.Reason = fmt.Sprintf("%s is beyond the floor ±%s but not significant after Holm over %d tests (p=%s)", ci, pctAbs(f), tests, pval(r.PAdj))
		default:
			r.Reason = fmt.Sprintf("%s straddles the floor ±%s", ci, pctAbs(f))
		}
		r.RunsNeeded = runsNeeded(r, alpha, tests)
		switch {
		case r.RunsNeeded >= MaxRunsNeeded:
			r.Reason += fmt.Sprintf("; more than %d runs per side would be needed", MaxRunsNeeded)
		case r.RunsNeeded > 0:
			r.Reason += fmt.Sprintf("; about %d runs per side (%d more) would likely decide", r.RunsNeeded, r.MoreRuns())
		default:
			r.Reason += "; the estimate sits at the floor, so more runs may not decide"
		}
	}
}

// runsNeeded estimates the runs per side that would likely decide an
// unknown: enough that the interval's half-width shrinks (as 1/sqrt(n))
// below the distance between the estimate and the floor, and that the U
// test can reach significance after Holm's correction.
func runsNeeded(r *Row, alpha float64, tests int) int {
	n := min(len(r.Old), len(r.New))
	e := math.Abs(r.Change)
	target := math.Abs(e - r.Floor)
	if target < 0.25*math.Max(r.Floor, 0.01) || math.IsInf(e, 0) || math.IsNaN(e) {
		return 0 // the estimate sits at the floor: more runs may never decide
	}
	var half float64
	if !math.IsInf(r.ChangeLo, 0) && !math.IsInf(r.ChangeHi, 0) {
		half = (r.ChangeHi - r.ChangeLo) / 2
	} else {
		// No interval yet: the Hodges-Lehmann shift's asymptotic
		// half-width, z*sigma*sqrt(2*pi/(3n)), with sigma from the MADs.
		sigma := relSpread(r.Old, r.New)
		if sigma == 0 {
			return minRunsForSignificance(alpha / float64(max(tests, 1)))
		}
		half = 1.96 * sigma * math.Sqrt(2*math.Pi/(3*float64(n)))
	}
	need := int(math.Ceil(float64(n) * (half / target) * (half / target)))
	need = max(need, minRunsForSignificance(alpha/float64(max(tests, 1))), n+1)
	return min(need, MaxRunsNeeded)
}

// MoreRuns is how many runs to add to the smaller side to reach
// RunsNeeded: what an unknown verdict asks for.
func (r *Row) MoreRuns() int {
	return max(0, r.RunsNeeded-min(len(r.Old), len(r.New)))
}

// MaxRunsNeeded caps RunsNeeded: beyond it, more runs is not the answer.
const MaxRunsNeeded = 1000

// relSpread is the pooled scaled MAD of both sides relative to old's median.
func relSpread(old, new []float64) float64 {
	base := math.Abs(Quantile(sortedCopy(old), 0.5))
	if base == 0 {
		return 0
	}
	var devs []float64
	for _, side := range [][]float64{old, new} {
		m := Quantile(sortedCopy(side), 0.5)
		for _, x := range side {
			devs = append(devs, math.Abs(x-m))
		}
	}
	return 1.4826 * Quantile(sortedCopy(devs), 0.5) / base
}

// minRunsForSignificance is the smallest n (per side) for which the
// two-sided U test's smallest p-value, 2/C(2n,n), is below level.
func minRunsForSignificance(level float64) int {
	for n := 2; n < 1000; n++ {
		// log C(2n, n) via lgamma
		lc, _ := math.Lgamma(float64(2*n + 1))
		l1, _ := math.Lgamma(float64(n + 1))
		if math.Log(2)-(lc-2*l1) < math.Log(level) {
			return n
		}
	}
	return 1000
}

// Pct prints a relative change as a signed percentage (+3.25%, -12.5%,
// +250%), with infinities as ±∞: the one format every report uses.
func Pct(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+∞"
	case math.IsInf(f, -1):
		return "-∞"
	case math.IsNaN(f):
		return "?"
	case f == 0:
		return "0%"
	}
	switch x := math.Abs(f * 100); {
	case x < 10:
		return fmt.Sprintf("%+.2f%%", f*100)
	case x < 100:
		return fmt.Sprintf("%+.1f%%", f*100)
	}
	return fmt.Sprintf("%+.0f%%", f*100)
}

// pctAbs is a floor: a percentage without a sign.
func pctAbs(f float64) string { return strings.TrimPrefix(Pct(math.Abs(f)), "+") }

// floorText is the floor on the bad (regressed) or good side.
func floorText(f float64, better int, bad bool) string {
	if (better < 0) == bad {
		return "+" + pctAbs(f)
	}
	return "-" + pctAbs(f)
}

func pval(p float64) string {
	if p < 0.001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3f", p)
}

func num(x float64) string { return fmt.Sprintf("%.4g", x) }

// tidy is benchunit's normalisation of a unit ("ns/step" to "sec/step").
func tidy(unit string) string {
	_, u := benchunit.Tidy(1, unit)
	return u
}
