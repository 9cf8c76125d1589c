package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
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
	// OldFixed says the old side is a baseline that stays as it is (a gate
	// against committed runs): runs that would decide an unknown are
	// counted on the new side alone, whose growth narrows the interval
	// only as far as the old side's runs allow.
	OldFixed bool
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
	// Cost, for an exact count of the collector's mechanism whose
	// environment changed, prices the change (CountCost, CensusCost): it
	// is then judged by that price against CostFloor, not by the count.
	// Nil: an exact change is a verdict (the same environment: identical
	// specs must give identical schedules).
	Cost *Cost
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
	// would likely decide it (0 when no estimate can be made); against a
	// baseline that does not grow (Options.OldFixed), how many new runs.
	RunsNeeded int
	Warnings   []string

	logs        bool      // the test works on logarithms
	est, se     float64   // t: mean difference and its standard error
	base        float64   // raw t: old's mean, the base of relative changes
	xs, ys      []float64 // U: both sides, sorted (logarithms when logs)
	significant bool
	tooFew      bool // no test possible: too few runs
	oldFixed    bool // Options.OldFixed
}

// Tested reports whether the row was tested (it has a family).
func (r *Row) Tested() bool { return !math.IsNaN(r.P) }

// Compare compares every pair and returns the rows in the order given.
func Compare(pairs []Pair, opt Options) []*Row { return compare(pairs, opt, true) }

// compare is Compare; without detect it leaves Detectable NaN (its power
// search is most of a row's cost), for the known-truth studies' verdicts
// over thousands of trials.
func compare(pairs []Pair, opt Options, detect bool) []*Row {
	alpha := opt.alpha()
	rows := make([]*Row, len(pairs))
	for i, p := range pairs {
		drift := 0.0
		if opt.Drift != nil {
			drift = max(0, opt.Drift(p))
		}
		rows[i] = compareOne(p, alpha, opt.floor(p), drift)
		rows[i].oldFixed = opt.OldFixed
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
			if detect {
				r.Detectable = detectable(r, alpha/float64(r.FamilySize))
			}
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
