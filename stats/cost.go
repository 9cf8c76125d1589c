package stats

import (
	"fmt"
	"math"
	"time"
)

// CostFloor is the smallest cost, as a share of the mean step, for which a
// change in the collector's mechanism (a collection count, the objects a
// full collection walks) gets a verdict of its own when the environment
// changed (an upgrade, another interpreter, other thresholds). Under it
// the change is the cause of what the costs show (gc-share, the pauses,
// p50, p99), not a verdict: one more young collection a run costs
// microseconds. Half a percent of the step is a tenth of gc-share's floor
// on a step that spends 10% of its time collecting: smaller than any cost
// the timing rows could resolve.
const CostFloor = 0.005

// Cost is what a change in the collector's mechanism costs the user: the
// time it adds to (or saves from) the mean step, as a share of it.
type Cost struct {
	// Share is the change's time over the mean step (+0.01: one percent
	// of the step added); NaN where no pause was measured to price it.
	Share float64
	// What is how it was priced, in words: "+1.00 gen0 collections a
	// 1000 steps x 52µs pause over a 1.2ms step".
	What string
}

// String: "+0.0043% of the step (+1.00 gen0 collections ...)".
func (c *Cost) String() string {
	if math.IsNaN(c.Share) {
		return "a cost not measured (" + c.What + ")"
	}
	return fmt.Sprintf("%s of the step (%s)", sharePct(c.Share), c.What)
}

// sharePct prints a share of the step with enough digits that a tiny one
// does not read as zero.
func sharePct(f float64) string {
	switch x := math.Abs(100 * f); {
	case f == 0:
		return "0%"
	case x >= 1:
		return fmt.Sprintf("%+.2f%%", 100*f)
	case x >= 0.01:
		return fmt.Sprintf("%+.3f%%", 100*f)
	}
	return fmt.Sprintf("%+.2g%%", 100*f)
}

// pooled is the runs' total of f over their total of g (NaN when g sums to 0).
func pooled(runs []RunSummary, f, g func(RunSummary) float64) float64 {
	var num, den float64
	for _, r := range runs {
		num += f(r)
		den += g(r)
	}
	if den <= 0 {
		return math.NaN()
	}
	return num / den
}

// MeanStep is the runs' mean step in nanoseconds (their p50 where a
// summary predates the mean); NaN without runs.
func MeanStep(runs []RunSummary) float64 {
	return pooled(runs, func(r RunSummary) float64 {
		if r.Mean > 0 {
			return r.Mean * float64(r.Steps)
		}
		return r.P50 * float64(r.Steps)
	}, func(r RunSummary) float64 { return float64(r.Steps) })
}

// MeanPause is the runs' mean pause of a generation-g collection in
// nanoseconds; NaN when they made none.
func MeanPause(runs []RunSummary, g int) float64 {
	return pooled(runs, func(r RunSummary) float64 { return r.PauseNS[g] },
		func(r RunSummary) float64 { return float64(r.Collections[g]) })
}

// CountCost prices a change of generation g's collections from oldPerK to
// newPerK a 1000 steps: the collections added (or saved) per step, times
// their mean pause over the mean step, both from the new runs (else both
// from the old runs, where the new made no such collection). A pause and
// the step it is a share of, measured in the same runs, keep their ratio
// when the host is slower or busier than the baseline's; a busy run's
// pause over a quiet baseline's step would price a neighbour's load as
// the upgrade's. Either side's runs may be missing (a baseline keeps no
// summaries); then the side that has both prices it.
func CountCost(old, new []RunSummary, g int, oldPerK, newPerK float64) *Cost {
	pause, step := MeanPause(new, g), MeanStep(new)
	if math.IsNaN(pause) || math.IsNaN(step) {
		if p, s := MeanPause(old, g), MeanStep(old); !math.IsNaN(p) && !math.IsNaN(s) {
			pause, step = p, s
		}
	}
	d := newPerK - oldPerK
	c := &Cost{Share: d / 1000 * pause / step,
		What: fmt.Sprintf("%+.3g gen%d collections a 1000 steps x %s pause over a %s step", d, g, dur(pause), dur(step))}
	if math.IsNaN(c.Share) || math.IsInf(c.Share, 0) {
		c.Share = math.NaN()
	}
	return c
}

// CensusCost prices a change of the objects one generation-g collection
// walks, from oldWalk to newWalk (the heap census): the objects added per
// collection, times the collector's measured time per object walked (the
// runs' mean pause over newWalk), times the runs' collections per step,
// over their mean step. The runs are the new side's timed runs.
func CensusCost(runs []RunSummary, g int, oldWalk, newWalk float64) *Cost {
	pause := MeanPause(runs, g)
	perStep := pooled(runs, func(r RunSummary) float64 { return float64(r.Collections[g]) },
		func(r RunSummary) float64 { return float64(r.Steps) })
	step := MeanStep(runs)
	perObj := pause / newWalk
	d := newWalk - oldWalk
	c := &Cost{Share: d * perObj * perStep / step,
		What: fmt.Sprintf("%+.0f objects per gen%d collection x %.3g ns an object x %.3g collections a step over a %s step", d, g, perObj, perStep, dur(step))}
	if math.IsNaN(c.Share) || math.IsInf(c.Share, 0) {
		c.Share = math.NaN()
	}
	return c
}

// decideByCost is decide for an exact count judged by its cost
// (Pair.Cost): the environment changed, so the count moving is the
// change's mechanism; only its price can fail.
func decideByCost(r *Row) {
	c := r.Cost
	moved := fmt.Sprintf("%s -> %s (%s)", count(r.Old[0]), count(r.New[0]), finePct(r.Change))
	switch {
	case math.IsNaN(c.Share):
		r.Verdict, r.Reason = Descriptive, fmt.Sprintf("explains: %s, at %s; the costs decide (gc-share, the pauses, gc-cost, p50, p99)", moved, c)
	case c.Share > CostFloor:
		r.Verdict, r.Reason = Regressed, fmt.Sprintf("exact: %s, costing %s, beyond the cost floor +%s of the step", moved, c, pctAbs(CostFloor))
	case c.Share < -CostFloor:
		r.Verdict, r.Reason = Improved, fmt.Sprintf("exact: %s, saving %s, beyond the cost floor -%s of the step", moved, c, pctAbs(CostFloor))
	default:
		r.Verdict, r.Reason = Descriptive, fmt.Sprintf("explains: %s, costing %s, within the cost floor ±%s of the step: the cause of what the costs show (gc-share, the pauses, gc-cost, p50, p99), not a verdict", moved, c, pctAbs(CostFloor))
	}
}

// Explains reports whether the row is a mechanism's change priced under
// the cost floor (or not priced): reported as the cause, not judged.
func (r *Row) Explains() bool {
	return r.Cost != nil && r.Verdict == Descriptive && r.Change != 0 && !math.IsNaN(r.Change)
}

// ExactRow compares one exact pair on its own (a heap census, which no
// metric of the catalogue carries): the decision of Compare, no family.
func ExactRow(p Pair) *Row {
	p.Exact = true
	r := compareOne(p, DefaultAlpha, 0, 0)
	decide(r, DefaultAlpha)
	return r
}

// count prints an exact count whole (400001, not 4e+05: one object more
// must show), and a large mean per collection to the object (397486);
// other values as num does.
func count(x float64) string {
	if (x == math.Trunc(x) || math.Abs(x) >= 1000) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return num(x)
}

// finePct is Pct with two significant digits where Pct would print a
// change as zero: one object more in 400,000 is "+0.00025%", not "+0.00%".
func finePct(f float64) string {
	if f != 0 && math.Abs(f) < 5e-5 {
		return fmt.Sprintf("%+.2g%%", 100*f)
	}
	return Pct(f)
}

// dur prints nanoseconds as a duration with 3 significant digits.
func dur(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "?"
	}
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}

// DecideTogether re-decides a generation's collection count and the heap
// its collections walk (each priced by CountCost and CensusCost, decided
// alone) on what they cost together: they are one mechanism's two halves,
// the time in that generation's collections a step. A bigger heap makes
// CPython's 25% rule wait longer, so an upgrade often brings fewer full
// collections that each walk more (torch 2.5.1 -> 2.15.0 on
// ascend-gpt-periodic-gc: -4.59% and +4.74% of the step); the user pays
// the sum, +0.15%. Under the floor both rows explain; beyond it, the rows
// that moved the sum's way keep a verdict and the other explains. Rows
// that did not move, or were not priced, are left as decided.
func DecideTogether(counted, census *Row) {
	if counted == nil || census == nil || counted.Cost == nil || census.Cost == nil {
		return
	}
	a, b := counted.Cost.Share, census.Cost.Share
	if math.IsNaN(a) || math.IsNaN(b) || a == 0 || b == 0 || counted.Change == 0 || census.Change == 0 {
		return
	}
	net := a + b
	for _, r := range []*Row{counted, census} {
		other := census
		if r == census {
			other = counted
		}
		moved := fmt.Sprintf("%s -> %s (%s)", count(r.Old[0]), count(r.New[0]), finePct(r.Change))
		together := fmt.Sprintf("with %s %s: %s of the step together", other.Metric, sharePct(other.Cost.Share), sharePct(net))
		switch s := r.Cost.Share; {
		case net > CostFloor && s > 0:
			r.Verdict, r.Reason = Regressed, fmt.Sprintf("exact: %s, costing %s, %s, beyond the cost floor +%s of the step", moved, r.Cost, together, pctAbs(CostFloor))
		case net < -CostFloor && s < 0:
			r.Verdict, r.Reason = Improved, fmt.Sprintf("exact: %s, saving %s, %s, beyond the cost floor -%s of the step", moved, r.Cost, together, pctAbs(CostFloor))
		default:
			r.Verdict, r.Reason = Descriptive, fmt.Sprintf("explains: %s, costing %s, %s, within the cost floor ±%s of the step or against it: the cause of what the costs show, not a verdict", moved, r.Cost, together, pctAbs(CostFloor))
		}
	}
}
