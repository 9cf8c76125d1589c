package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
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
	// Regressed: the change is significant in its family and its
	// confidence interval is entirely on the bad side of the floor.
	Regressed Verdict = "regressed"
	// Improved: the same, on the good side.
	Improved Verdict = "improved"
	// Same: the confidence interval lies inside ±floor.
	Same Verdict = "same"
	// Unknown: the data cannot tell a change of the floor's size from none.
	Unknown Verdict = "unknown"
	// Descriptive: the metric is not tested (not a primary metric, or a
	// count that runs of different lengths make incomparable). Its change
	// and interval are reported; it never fails a gate and is in no
	// family.
	Descriptive Verdict = "descriptive"
)

// Tests a row's p-value and interval can come from.
const (
	TestTLog  = "t-log" // Student's t on the logarithms of the per-run values
	TestT     = "t"     // Student's t on the values (some are zero)
	TestULog  = "U-log" // Mann-Whitney U, Hodges-Lehmann shift of the logarithms
	TestU     = "U"     // the same on the values
	TestExact = "exact" // a deterministic count, compared as it is
)

// RankTestRuns is the number of runs per side from which the Mann-Whitney
// U test decides instead of Student's t: its smallest p-value, 2/C(2n,n),
// is 1.1e-5 at 10+10 runs (below the level of any family gcjitter forms),
// it assumes no distribution, and one disturbed run moves it little. Below
// that the U test cannot reach significance (2+2 runs: p >= 0.33, 5+5: p >=
// 0.008) while t on the logarithms can when the change is large against the
// run-to-run spread.
const RankTestRuns = 10

// DetectPower is the power at which Row.Detectable and Plan state the
// smallest detectable change.
const DetectPower = 0.95

// Options configure a comparison.
type Options struct {
	// Alpha is the family-wise significance level (Holm's method within
	// each family). 0 means 0.05.
	Alpha float64
	// Floor returns a pair's floor: the smallest relative change of its
	// metric worth a verdict. Nil, or a negative answer, means
	// DefaultFloors for gcjitter's metrics and DefaultFloor for others.
	Floor func(p Pair) float64
	// DefaultFloor is the floor of metrics Floor does not know. 0 means 5%.
	DefaultFloor float64
	// Family names a pair's multiple-comparison family: the tested pairs
	// with the same name share one Holm correction. Nil: one family, every
	// tested pair of the Compare call (the gate's false-alarm rate is then
	// at most Alpha).
	Family func(p Pair) string
	// Drift returns a pair's session drift: the standard deviation of the
	// shift of a session's mean (on the test's scale: about relative) from
	// one session to another on the same host, for sides measured in
	// different sessions (a gate against a committed baseline). Runs of one
	// session share their session's shift, so more runs cannot average it
	// away: it adds to the variance of the difference whatever the sizes.
	// Nil, or 0: both sides come from one session (ab interleaves them).
	Drift func(p Pair) float64
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
	Better int
	Exact  bool // a deterministic count: compared as is, not tested
	// Descriptive pairs are reported with their change and interval but
	// not tested: they join no family and never fail a gate (MarkPrimary
	// sets it for gcjitter metrics outside the primary set).
	Descriptive bool
	Old, New    []float64
	// OldSteps and NewSteps are the measured steps of the runs, when known
	// (in any order; one value stands for every run of its side). Counts
	// per 1000 steps and maxima over a run are not judged across runs of
	// different lengths.
	OldSteps, NewSteps []int
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
	// confidence interval at level 1-Level, from the same test as P: for
	// Student's t on logarithms, the ratio of the geometric means; for the
	// U test, the Hodges-Lehmann shift (of logarithms when every value is
	// positive). A descriptive row's interval is at 1-alpha.
	Change, ChangeLo, ChangeHi float64
	// Test is the test behind P and the interval (TestTLog, TestT,
	// TestULog, TestU, TestExact), "" when there was none.
	Test string
	// P is the test's p-value, PAdj after Holm's correction within the
	// row's family; NaN when the row was not tested.
	P, PAdj float64
	// Family is the name of the row's family and FamilySize the number of
	// tests in it.
	Family     string
	FamilySize int
	// Level is the significance level the row was tested at: Holm's
	// threshold for its rank in its family. Regressed, improved and same
	// all read the interval at 1-Level.
	Level float64
	// Spread is the run-to-run standard deviation the test saw: of the
	// logarithms of the per-run values (about the relative spread), or of
	// the values relative to old's mean. DF is the t-test's degrees of
	// freedom (0 for the U test).
	Spread, DF float64
	// Drift is the session drift the test added to the run-to-run spread
	// (Options.Drift), on the same scale; 0 when the sides share a session.
	Drift float64
	// Detectable is the smallest relative change (beyond the floor) that a
	// row of this size and spread detects with 95% power in its family,
	// alone; NaN when unknown, +Inf when none can be.
	Detectable float64
	Floor      float64
	Verdict    Verdict
	// Reason says why, in words.
	Reason string
	// RunsNeeded, for an unknown verdict, estimates how many runs per side
	// would likely decide it (0 when no estimate can be made).
	RunsNeeded int
	Warnings   []string

	logs        bool      // the test works on logarithms
	est, se     float64   // t: mean difference and its standard error
	base        float64   // raw t: old's mean, the base of relative changes
	xs, ys      []float64 // U: both sides, sorted (logarithms when logs)
	significant bool
	tooFew      bool // no test possible: too few runs
}

// Tested reports whether the row was tested (it has a family).
func (r *Row) Tested() bool { return !math.IsNaN(r.P) }

// Compare compares every pair and returns the rows in the order given.
func Compare(pairs []Pair, opt Options) []*Row {
	alpha := opt.alpha()
	rows := make([]*Row, len(pairs))
	for i, p := range pairs {
		drift := 0.0
		if opt.Drift != nil {
			drift = max(0, opt.Drift(p))
		}
		rows[i] = compareOne(p, alpha, opt.floor(p), drift)
	}
	family := func(r *Row) string { return "" }
	if opt.Family != nil {
		family = func(r *Row) string { return opt.Family(r.Pair) }
	}
	holm(rows, alpha, family)
	for _, r := range rows {
		switch {
		case r.Tested():
			setInterval(r, r.Level)
			r.Detectable = detectable(r, alpha/float64(r.FamilySize))
		case r.Verdict == "" && r.Test != "" && r.Test != TestExact:
			setInterval(r, alpha) // descriptive
		}
		decide(r, alpha)
	}
	return rows
}

// atFloorAbs raises a metric's values below its absolute floor to it
// (Metric.FloorAbs): a growth of -1 MiB and one of +3 MiB per 1000 steps
// are both "none", and only then is a change relative to them a size.
func atFloorAbs(metric string, xs []float64) []float64 {
	m, ok := MetricByName(metric)
	if !ok || m.FloorAbs == 0 {
		return xs
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x
		if x < m.FloorAbs {
			out[i] = m.FloorAbs
		}
	}
	return out
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

// stepsDiffer describes runs of different lengths ("200 and 210 steps"),
// or returns "" when every known run has the same number of steps.
func stepsDiffer(old, new []int) string {
	var all []int
	for _, s := range [][]int{old, new} {
		for _, n := range s {
			if n > 0 && !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	if len(all) < 2 {
		return ""
	}
	slices.Sort(all)
	return fmt.Sprintf("runs of %d to %d steps (old %s, new %s)", all[0], all[len(all)-1], stepList(old), stepList(new))
}

func stepList(s []int) string {
	u := slices.Compact(slices.Sorted(slices.Values(s)))
	parts := make([]string, len(u))
	for i, n := range u {
		parts[i] = fmt.Sprint(n)
	}
	if len(parts) == 0 {
		return "?"
	}
	return strings.Join(parts, "/")
}

func compareOne(p Pair, alpha, floor, drift float64) *Row {
	if p.Better == 0 {
		p.Better = -1
	}
	r := &Row{Pair: p, Floor: floor, P: math.NaN(), PAdj: math.NaN(), Change: math.NaN(), ChangeLo: math.NaN(), ChangeHi: math.NaN(),
		Level: math.NaN(), Spread: math.NaN(), Detectable: math.NaN(), Drift: drift}
	var w1, w2 []string
	r.Old, w1 = clean("old", atFloorAbs(p.Metric, p.Old))
	r.New, w2 = clean("new", atFloorAbs(p.Metric, p.New))
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
	if d := stepsDiffer(p.OldSteps, p.NewSteps); d != "" {
		// A count per 1000 steps is exact only at one length (the warm-up's
		// collections and the collector's phase at the end weigh
		// differently), and a maximum over a run grows with its length.
		m, _ := MetricByName(p.Metric)
		switch {
		case p.Exact:
			r.Descriptive = true
			r.Warnings = append(r.Warnings, d+": a count per 1000 steps is not compared exactly across run lengths")
		case m.LengthBiased:
			r.Descriptive = true
			r.Warnings = append(r.Warnings, d+": a maximum over the run grows with its length, so it is not tested")
		}
	}
	if !p.Exact && allEqual(r.Old) && allEqual(r.New) && r.Old[0] == r.New[0] {
		// Every run of both sides gave the same value (no pause of that
		// generation at all, say): nothing to test, nothing changed.
		r.Exact = true
	}
	if r.Exact {
		if allEqual(r.Old) && allEqual(r.New) {
			r.Test = TestExact
			r.Change = relChange(r.New[0], r.Old[0])
			r.ChangeLo, r.ChangeHi = r.Change, r.Change
			return r
		}
		r.Warnings = append(r.Warnings, "values differ between runs of one side: compared as noisy")
		r.Exact = false
	}
	r.logs = slices.IndexFunc(r.Old, func(x float64) bool { return x <= 0 }) < 0 &&
		slices.IndexFunc(r.New, func(x float64) bool { return x <= 0 }) < 0
	n1, n2 := len(r.Old), len(r.New)
	// A rank test cannot carry the session drift (every run of a side
	// shares one shift): with drift, Student's t at every size.
	if min(n1, n2) >= RankTestRuns && drift == 0 {
		r.Test = TestU
		if r.logs {
			r.Test = TestULog
		}
		r.xs, r.ys = sortedCopy(r.Old), sortedCopy(r.New)
		if r.logs {
			logAll(r.xs)
			logAll(r.ys)
		}
		r.Spread = pooledSD(r.xs, r.ys)
		if !r.logs {
			r.Spread = relTo(r.Spread, mean(r.Old))
		}
		// P is the smallest level at which the Hodges-Lehmann interval
		// excludes no shift: tied pairs count against the change, as they
		// do in the interval, so p and interval never disagree.
		a, b := 0, 0 // pairs with y-x <= 0, >= 0; O((n+m) log n) for huge inputs
		for _, y := range r.ys {
			a += len(r.xs) - sort.SearchFloat64s(r.xs, y)                        // x >= y
			b += sort.Search(len(r.xs), func(i int) bool { return r.xs[i] > y }) // x <= y
		}
		r.P = math.Min(1, 2*math.Min(uCDF(float64(a), n1, n2), uCDF(float64(b), n1, n2)))
	} else {
		r.Test = TestT
		if r.logs {
			r.Test = TestTLog
		}
		if n1+n2 < 3 {
			r.tooFew = true
		}
		x, y := slices.Clone(r.Old), slices.Clone(r.New)
		if r.logs {
			logAll(x)
			logAll(y)
		}
		r.est = mean(y) - mean(x)
		sp := math.Max(pooledSD(x, y), quantumSD(p, append(slices.Clone(r.Old), r.New...), r.logs))
		r.Spread = sp
		d := drift
		if !r.logs {
			r.base = mean(r.Old)
			r.Spread = relTo(sp, r.base)
			d = drift * math.Abs(r.base)
		}
		r.se, r.DF = tScale(sp, d, n1, n2)
		switch {
		case r.tooFew:
			r.Spread = math.NaN()
		case r.se == 0 && r.est == 0:
			r.P = 1
		case r.se == 0:
			r.P = 0 // every run of a side agrees, and the sides differ
		default:
			r.P = tPValue(r.est/r.se, r.DF)
		}
	}
	if r.Descriptive {
		r.P = math.NaN()
	}
	return r
}

// quantumSD is the least spread a count per 1000 steps can be said to
// have: its runs can only take multiples of 1000/steps, and rounding to
// that quantum hides noise of sd quantum/sqrt(12) (Sheppard). Without it,
// two runs of 5 spikes in 200 steps against two of 6 have no spread at
// all, and t calls +20% certain. On logarithms, relative to the values'
// mean; 0 when the metric is not a count or the lengths are unknown.
func quantumSD(p Pair, values []float64, logs bool) float64 {
	m, ok := MetricByName(p.Metric)
	if !ok || !m.PerKStep {
		return 0
	}
	steps := math.MaxInt
	for _, s := range [][]int{p.OldSteps, p.NewSteps} {
		for _, n := range s {
			if n > 0 {
				steps = min(steps, n)
			}
		}
	}
	if steps == math.MaxInt {
		return 0
	}
	sd := 1000 / float64(steps) / math.Sqrt(12)
	if logs {
		sd /= mean(values)
	}
	return sd
}

// relTo is a spread relative to a base; NaN when the base is 0.
func relTo(spread, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return spread / math.Abs(base)
}

func logAll(xs []float64) {
	for i := range xs {
		xs[i] = math.Log(xs[i])
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pooledSD is the pooled standard deviation of two samples (Student's);
// 0 with fewer than three values.
func pooledSD(x, y []float64) float64 {
	df := len(x) + len(y) - 2
	if df < 1 {
		return 0
	}
	ss := 0.0
	for _, s := range [][]float64{x, y} {
		m := mean(s)
		for _, v := range s {
			ss += (v - m) * (v - m)
		}
	}
	return math.Sqrt(ss / float64(df))
}

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

// holm sets PAdj, Level and the family of every tested row, by Holm's
// step-down method within each family. A row's Level is the threshold it
// was held to: alpha/(m-i) for the i-th smallest p while the steps reject,
// and the threshold of the first step that did not for every row after it.
// So a row is significant exactly when p <= Level, and exactly when its
// interval at 1-Level excludes no change.
func holm(rows []*Row, alpha float64, family func(*Row) string) {
	groups := map[string][]*Row{}
	var names []string
	for _, r := range rows {
		if !r.Tested() {
			continue
		}
		f := family(r)
		if _, ok := groups[f]; !ok {
			names = append(names, f)
		}
		groups[f] = append(groups[f], r)
	}
	for _, f := range names {
		tested := groups[f]
		sort.SliceStable(tested, func(i, j int) bool { return tested[i].P < tested[j].P })
		m := len(tested)
		running := 0.0
		stop := m // the first step that does not reject
		for i, r := range tested {
			adj := math.Min(1, float64(m-i)*r.P)
			running = math.Max(running, adj) // adjusted p-values never decrease
			r.PAdj = running
			if stop == m && r.P > alpha/float64(m-i) {
				stop = i
			}
			r.Level = alpha / float64(m-min(i, stop))
			r.significant = i < stop
			r.Family, r.FamilySize = f, m
		}
	}
}

// decide turns a row's change, interval and family into a verdict.
func decide(r *Row, alpha float64) {
	if r.Verdict != "" {
		return
	}
	// bad is the change oriented so that positive is worse.
	bad, badLo, badHi := r.Change, r.ChangeLo, r.ChangeHi
	if r.Better > 0 {
		bad, badLo, badHi = -bad, -badHi, -badLo
	}
	f := r.Floor
	if r.Exact && !r.Descriptive {
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
	if r.Descriptive {
		r.Verdict = Descriptive
		switch {
		case r.Test == TestExact && r.Change == 0:
			r.Reason = fmt.Sprintf("not tested: %s in every run of both sides", num(r.Old[0]))
		case r.Test == TestExact:
			r.Reason = fmt.Sprintf("not judged: %s -> %s (%s)", num(r.Old[0]), num(r.New[0]), Pct(r.Change))
		case r.tooFew:
			r.Reason = fmt.Sprintf("not tested: %s, too few runs (%d+%d) for an interval", Pct(r.Change), len(r.Old), len(r.New))
		default:
			r.Reason = fmt.Sprintf("not tested: %s [%s, %s] (%s interval)", Pct(r.Change), Pct(r.ChangeLo), Pct(r.ChangeHi), confText(alpha))
		}
		if len(r.Warnings) > 0 {
			r.Reason += "; " + r.Warnings[len(r.Warnings)-1]
		}
		return
	}
	if r.tooFew {
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("too few runs (%d+%d) for a test: the run-to-run spread needs 3 runs in all, 2 per side to decide", len(r.Old), len(r.New))
		r.RunsNeeded = 2
		return
	}
	test := testName(r.Test)
	if r.Drift > 0 {
		test += fmt.Sprintf(" with session drift ±%s", pctAbs(r.Drift))
	}
	ci := fmt.Sprintf("%s [%s, %s] (%s interval, %s)", Pct(r.Change), Pct(r.ChangeLo), Pct(r.ChangeHi), confText(r.Level), test)
	fam := fmt.Sprintf("p=%s after Holm over %d tests", pval(r.PAdj), r.FamilySize)
	if r.FamilySize == 1 {
		fam = fmt.Sprintf("p=%s, the only test", pval(r.PAdj))
	}
	det := ""
	if !math.IsNaN(r.Detectable) {
		det = "; detectable: " + detText(r)
	}
	switch {
	case r.significant && badLo > f:
		r.Verdict = Regressed
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; %s%s", ci, floorText(f, r.Better, true), fam, det)
	case r.significant && badHi < -f:
		r.Verdict = Improved
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; %s%s", ci, floorText(f, r.Better, false), fam, det)
	case badLo >= -f && badHi <= f:
		r.Verdict = Same
		r.Reason = fmt.Sprintf("%s, inside the floor ±%s%s", ci, pctAbs(f), det)
	default:
		r.Verdict = Unknown
		// What the size could not see leads: an unknown that passes a gate
		// (-unknown pass) is only as safe as that.
		lead := ""
		if !math.IsNaN(r.Detectable) {
			lead = "undecided: " + r.Unseen() + "; "
		}
		if r.significant {
			r.Reason = fmt.Sprintf("%s%s is significant (%s) but reaches into the floor ±%s", lead, ci, fam, pctAbs(f))
		} else {
			r.Reason = fmt.Sprintf("%s%s straddles the floor ±%s (%s)", lead, ci, pctAbs(f), fam)
		}
		r.RunsNeeded = runsNeeded(r, alpha)
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

func testName(t string) string {
	switch t {
	case TestTLog:
		return "t on logs"
	case TestT:
		return "t"
	case TestULog, TestU:
		return "U test"
	}
	return t
}

// confText is a confidence level as text: "95%", "99.67%", with the
// fewest digits that keep the tail (1-confidence) within 5%.
func confText(level float64) string {
	c := 100 * (1 - level)
	for prec := 0; prec <= 8; prec++ {
		s := strconv.FormatFloat(c, 'f', prec, 64)
		if v, _ := strconv.ParseFloat(s, 64); math.Abs(v-c) <= 0.05*100*level {
			if strings.Contains(s, ".") {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
			return s + "%"
		}
	}
	return strconv.FormatFloat(c, 'g', -1, 64) + "%"
}

func detText(r *Row) string {
	if math.IsInf(r.Detectable, 1) {
		return fmt.Sprintf("no change at %s runs (the test cannot reach the family's level)", r.Sizes())
	}
	return fmt.Sprintf("%s with %.0f%% power at %s runs and this spread", Pct(r.Detectable), 100*DetectPower, r.Sizes())
}

// Sizes are the row's runs, old+new ("5+5").
func (r *Row) Sizes() string { return fmt.Sprintf("%d+%d", len(r.Old), len(r.New)) }

// Unseen says what a row of this size could not have detected: "a change
// under +38% could not be seen at 5+5 runs (95% power)". "" when the row
// was not tested.
func (r *Row) Unseen() string {
	switch {
	case math.IsNaN(r.Detectable):
		return ""
	case math.IsInf(r.Detectable, 1):
		return fmt.Sprintf("no change could be seen at %s runs (the test cannot reach the family's level)", r.Sizes())
	}
	return fmt.Sprintf("a change under %s could not be seen at %s runs (%.0f%% power)", Pct(r.Detectable), r.Sizes(), 100*DetectPower)
}

// testScale returns the row's change d and its floor on the test's own
// scale (logarithms, or relative to old's mean), the scale of Spread.
func testScale(r *Row) (d, floor float64) {
	switch {
	case r.logs && (r.Test == TestTLog):
		return r.est, math.Log1p(r.Floor)
	case r.logs:
		return math.Log1p(r.Change), math.Log1p(r.Floor)
	case r.Test == TestT && r.base != 0:
		return r.est / math.Abs(r.base), r.Floor
	}
	return r.Change, r.Floor
}

// halfWidth is the interval's expected half-width on the test's scale for
// n1 and n2 runs of the given spread at the given level: Student's t for
// small samples, the Hodges-Lehmann interval (asymptotic variance
// pi/3·sigma²·(1/n1+1/n2) under normality) from RankTestRuns on, +Inf where
// the U test cannot reach the level.
func halfWidth(n1, n2 int, spread, drift, level float64) float64 {
	inv := 1/float64(n1) + 1/float64(n2)
	if min(n1, n2) >= RankTestRuns && drift == 0 {
		if uMinP(n1, n2) > level {
			return math.Inf(1)
		}
		return zCritical(level) * spread * math.Sqrt(math.Pi/3*inv)
	}
	if n1+n2 < 3 {
		return math.Inf(1)
	}
	se, df := tScale(spread, drift, n1, n2)
	return tCritical(level, df) * se
}

// detectShift is the shift, on the test's scale, beyond a floor on that
// scale, that n1 and n2 runs of the given spread detect with the given
// power at the given level.
func detectShift(n1, n2 int, spread, drift, level, power float64) float64 {
	inv := 1/float64(n1) + 1/float64(n2)
	if min(n1, n2) >= RankTestRuns && drift == 0 {
		if uMinP(n1, n2) > level {
			return math.Inf(1)
		}
		return (zCritical(level) - mstats.StdNormal.InvCDF(1-power)) * spread * math.Sqrt(math.Pi/3*inv)
	}
	if n1+n2 < 3 {
		return math.Inf(1)
	}
	se, df := tScale(spread, drift, n1, n2)
	return tNoncentrality(level, df, power) * se
}

// tScale is the standard error of a difference of means of n1 and n2 runs
// of the given run-to-run spread, when each side's session is shifted by
// a drift of the given standard deviation, with its degrees of freedom:
// Welch-Satterthwaite's, the drift being a known variance (infinite
// degrees of freedom). Without drift, Student's pooled test: n1+n2-2.
func tScale(spread, drift float64, n1, n2 int) (se, df float64) {
	within := spread * spread * (1/float64(n1) + 1/float64(n2))
	df = float64(n1 + n2 - 2)
	if drift > 0 {
		total := within + drift*drift
		// Rounded: the critical values are cached by degrees of freedom.
		df = math.Min(math.Round(100*df*total*total/(within*within))/100, 1e6)
		if within == 0 {
			df = 1e6
		}
		within = total
	}
	return math.Sqrt(within), df
}

// detectable is the smallest relative change beyond the floor that the
// row's size and spread detect with DetectPower at level.
func detectable(r *Row, level float64) float64 {
	if math.IsNaN(r.Spread) {
		return math.NaN()
	}
	_, fl := testScale(r)
	d := fl + detectShift(len(r.Old), len(r.New), r.Spread, r.Drift, level, DetectPower)
	if r.logs {
		return math.Expm1(d)
	}
	return d
}

// runsNeeded estimates the runs per side that would likely decide an
// unknown: the smallest n for which the interval's expected half-width
// (at the family's first Holm step, alpha/m) is less than the distance
// between the estimate and the floor.
func runsNeeded(r *Row, alpha float64) int {
	n0 := min(len(r.Old), len(r.New))
	d, fl := testScale(r)
	e := math.Abs(d)
	target := math.Abs(e - fl)
	if target < 0.25*math.Max(fl, 0.01) || math.IsInf(e, 0) || math.IsNaN(e) || math.IsNaN(r.Spread) {
		return 0 // the estimate sits at the floor: more runs may never decide
	}
	level := alpha / float64(max(r.FamilySize, 1))
	ok := func(n int) bool { return halfWidth(n, n, r.Spread, r.Drift, level) < target }
	if !ok(MaxRunsNeeded) {
		return MaxRunsNeeded
	}
	lo, hi := n0, MaxRunsNeeded // ok(hi); lo is not known to be ok
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return max(hi, n0+1)
}

// MoreRuns is how many runs to add to the smaller side to reach
// RunsNeeded: what an unknown verdict asks for.
func (r *Row) MoreRuns() int {
	return max(0, r.RunsNeeded-min(len(r.Old), len(r.New)))
}

// MaxRunsNeeded caps RunsNeeded: beyond it, more runs is not the answer.
const MaxRunsNeeded = 1000

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
