package fit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Params are the worker's knobs a fit sets (model none, ring garbage): the
// Garbage per step sets the young collections; Retain (steps the garbage
// stays referenced) the survivors promoted to the old generation;
// LongLived the heap a full collection walks, which sets its pause and,
// through CPython's 25% rule, its period; WaitMS the step's own time (a
// GIL-free wait, as for compute).
type Params struct {
	Garbage
	Retain, LongLived int
	// Refs makes each long-lived object a list of that many references: a
	// longer pause per object, the 25% rule's count unchanged.
	Refs   int
	WaitMS float64
}

// Garbage is the ring garbage a fitted case makes: Cycles rings of
// Objects nodes on one step in Every (0 cycles: none).
type Garbage struct {
	Cycles, Objects, Every int
}

// Objects per garbage cycle in fitted cases that make many per step.
const Objects = 4

// minCycles is the fewest cycles a garbage step makes: one more or less is
// then at most a 5% change of the rate (2.5% rounding).
const minCycles = 20

// PerStep is the tracked objects made per step, on average.
func (g Garbage) PerStep() float64 {
	return float64(g.Cycles*max(g.Objects, 1)) / float64(max(g.Every, 1))
}

// GarbageFor is the garbage closest to perStep tracked objects per step:
// rings of Objects every step where that is minCycles rings or more;
// below, self-referencing objects (rings of one) on one step in Every. A
// job that collects a few times per 1000 steps makes about one object per
// step, less than one ring of Objects (5.3 young collections per 1000
// steps, measured).
func GarbageFor(perStep float64) Garbage {
	switch {
	case perStep <= 0:
		return Garbage{Objects: Objects, Every: 1}
	case perStep >= Objects*minCycles:
		return Garbage{Cycles: int(math.Round(perStep / Objects)), Objects: Objects, Every: 1}
	}
	every := int(math.Ceil(minCycles / perStep))
	return Garbage{Cycles: max(1, int(math.Round(perStep*float64(every)))), Objects: 1, Every: every}
}

// Tolerances are what a reproduction must meet (fit -check):
// full-collection period and young-collection rates
// relative, full-collection pause relative.
const (
	PeriodTolerance = 0.15
	PauseTolerance  = 0.30
	RateTolerance   = 0.20
)

// Trial is one worker run of a fit: its knobs and what it did.
type Trial struct {
	Params
	Steps int
	Got   Schedule
}

// Runner runs the worker with p for steps measured steps and returns its
// schedule.
type Runner func(ctx context.Context, p Params, steps int) (Schedule, error)

// Result is a fit: the target, the chosen knobs, every trial, and the
// story of where each number came from.
type Result struct {
	ctx    context.Context
	run    Runner
	Target Schedule
	Best   Trial
	Trials []Trial
	Story  []string
	// Steps is the fitted case's run length: the traced run's, so its
	// check compares runs of one size; TrialSteps the heap search's.
	Steps, TrialSteps int
}

// Fit searches the knobs that reproduce target's schedule, by running the
// worker: the garbage rate from the young collections (linear), the heap
// from the full-collection pause (linear in the objects walked), then the
// survivors and the heap from the period, which the pause bounds.
func Fit(ctx context.Context, target Schedule, run Runner, logf func(string, ...any)) (*Result, error) {
	r := &Result{Target: target, ctx: ctx, run: run}
	period := target.Period()
	// Trials run long enough for 3 full collections; the case as long as
	// the traced run.
	r.TrialSteps = 500
	if period > 0 {
		r.TrialSteps = max(r.TrialSteps, int(math.Ceil(4*period)))
	}
	r.Steps = target.StreamSteps
	if r.Steps == 0 {
		r.Steps = r.TrialSteps
	}
	try := func(p Params, steps int) (Trial, error) {
		got, err := run(ctx, p, steps)
		t := Trial{Params: p, Steps: steps, Got: got}
		if err != nil {
			return t, err
		}
		r.Trials = append(r.Trials, t)
		logf("fit: %d rings of %d every %d steps, retain %d, long-lived %d x %d refs, %d steps: gen0 %.4f/step, gen2 period %.0f steps, pause %.1f ms",
			p.Cycles, p.Objects, p.Every, p.Retain, p.LongLived, p.Refs, steps, got.Rate(0), got.Period(), got.Gen2Pause()/1e6)
		return t, nil
	}

	// 1. Young collections: net tracked allocations per step, linear in the
	// objects made; one calibration run and one refinement, long enough
	// for 40 young collections (a rare one's phase would be a large error).
	const calCycles = 200
	cal, err := try(Params{Garbage: Garbage{Cycles: calCycles, Objects: Objects, Every: 1}}, 400)
	if err != nil {
		return nil, err
	}
	garbage, quiet := GarbageFor(0), cal.Got.NoGCP50
	if target.Rate(0) > 0 && cal.Got.Rate(0) > 0 {
		perStep := calCycles * Objects * target.Rate(0) / cal.Got.Rate(0)
		garbage = GarbageFor(perStep)
		steps := min(max(400, int(math.Ceil(40/target.Rate(0)))), 100_000)
		if again, err := try(Params{Garbage: garbage}, steps); err == nil && again.Got.Rate(0) > 0 {
			garbage = GarbageFor(perStep * target.Rate(0) / again.Got.Rate(0))
			quiet = again.Got.NoGCP50
		}
	}
	r.Story = append(r.Story, fmt.Sprintf("garbage: %s, for the traced %.4f gen-0 collections per step (calibrated: %d rings of %d objects per step gave %.3f)",
		garbage, target.Rate(0), calCycles, Objects, cal.Got.Rate(0)))

	// 2. The step's own time: what the traced steps without a collection
	// took beyond the worker's garbage-making, as a GIL-free wait. Every
	// later trial waits too: a host that idles between bursts of work
	// pauses longer in a collection (measured: +25% for 0.3 ms), so the
	// pause is matched with it.
	wait := math.Round(math.Max(0, (target.NoGCP50-quiet)/1e6)*1000) / 1000
	r.Story = append(r.Story, fmt.Sprintf("step time: a %.3f ms GIL-free wait per step (the traced steps without a collection take %.3f ms at the median; the garbage alone %.3f ms here)",
		wait, target.NoGCP50/1e6, quiet/1e6))

	best := Trial{Params: Params{Garbage: garbage, WaitMS: wait}}
	if period == 0 || target.Gen2Pause() == 0 {
		// No period to match: keep the heap the trace saw, and survivors
		// only if it had full collections at all.
		best.LongLived = int(target.Heap2)
		if target.Gen[2] > 0 {
			best.Retain = 4
		}
		r.Story = append(r.Story, fmt.Sprintf("heap: %d long-lived objects, the traced gen-2 heap; the trace has %s", best.LongLived, r.fullText()))
		t, err := try(best.Params, r.TrialSteps)
		if err != nil {
			return nil, err
		}
		best = t
	} else {
		best, err = fitHeap(r, target, garbage, wait, try)
		if err != nil {
			return nil, err
		}
	}

	// The wait, corrected by what the final knobs' steps took (their
	// retained garbage and heap cost time too); the schedule does not
	// depend on it.
	if best.Got.NoGCP50 > 0 {
		best.WaitMS = math.Round(math.Max(0, best.WaitMS+(target.NoGCP50-best.Got.NoGCP50)/1e6)*1000) / 1000
		if best.WaitMS != wait { // the story says the wait the case has
			r.Story = append(r.Story, fmt.Sprintf("step time, corrected: a %.3f ms wait (the final knobs' steps without a collection took %.3f ms with %.3f)",
				best.WaitMS, best.Got.NoGCP50/1e6, wait))
		}
	}
	r.Best = best
	return r, nil
}

// fitHeap finds the heap: its size (the objects CPython's 25% rule counts)
// sets the period of the full collections once enough garbage survives to
// the old generation; the weight of each object (references walked) then
// sets their pause without moving the period.
func fitHeap(r *Result, target Schedule, garbage Garbage, wait float64, try func(Params, int) (Trial, error)) (Trial, error) {
	period, pause := target.Period(), target.Gen2Pause()
	steps := r.TrialSteps
	const retain = 4 // every step's garbage survives its young collections
	// The period, by the heap's size: a secant search from the traced
	// heap, in steps of at most 4x.
	heap := max(int(target.Heap2), 10_000)
	var best Trial
	bestErr := math.Inf(1)
	type point struct{ heap, period float64 }
	var pts []point
	for range 10 {
		t, err := try(Params{Garbage: garbage, Retain: retain, WaitMS: wait, LongLived: heap}, steps)
		if err != nil {
			return Trial{}, err
		}
		p := t.Got.Period()
		if e := math.Abs(math.Log(math.Max(p, 1) / period)); p > 0 && e < bestErr {
			best, bestErr = t, e
		}
		if p > 0 && math.Abs(p/period-1) < 0.03 {
			break
		}
		pts = append(pts, point{float64(heap), p})
		next := float64(heap)
		n := len(pts)
		flat := n < 2 || math.Abs(pts[n-1].period-pts[n-2].period) <= 0.01*pts[n-1].period
		switch {
		case p == 0: // no full collection in the run: a smaller heap
			next /= 3
		case !flat:
			slope := (pts[n-1].period - pts[n-2].period) / (pts[n-1].heap - pts[n-2].heap)
			next = pts[n-1].heap + (period-pts[n-1].period)/slope
			if slope <= 0 { // noise: step by the ratio instead
				next = float64(heap) * period / p
			}
		case p < period:
			// Below the 25% rule the period is set by the young
			// collections and does not move with the heap: grow it fast.
			next *= math.Max(period/p, 2)
		default:
			next *= math.Min(period/p, 0.5)
		}
		// Never past a heap already seen on the other side of the target.
		for _, q := range pts {
			if q.period > period && next >= q.heap {
				next = (float64(heap) + q.heap) / 2
			}
			if q.period > 0 && q.period < period && next <= q.heap {
				next = (float64(heap) + q.heap) / 2
			}
		}
		next = min(max(next, float64(heap)/4, 1000), float64(heap)*4, 20_000_000)
		if int(next) == heap {
			break
		}
		heap = int(next)
	}
	if best.Got.Period() == 0 {
		return Trial{}, fmt.Errorf("no heap gave a full-collection period: the traced %.0f steps cannot be reproduced with %s", period, garbage)
	}
	r.Story = append(r.Story, fmt.Sprintf("heap size: %d long-lived objects, with every step's garbage kept %d steps so it survives to the old generation, give a full collection every %.0f steps (traced %.0f; the traced job's own heap was %d objects)",
		best.LongLived, retain, best.Got.Period(), period, target.Heap2))

	// The pause, by each object's weight: linear in the references walked.
	base := best
	const refs1 = 32
	heavy, err := try(Params{Garbage: garbage, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: refs1}, steps)
	if err != nil {
		return Trial{}, err
	}
	p0, p1 := base.Got.Gen2Pause(), heavy.Got.Gen2Pause()
	// The pause grows with the references, faster than linearly once the
	// heap outgrows the caches: a bracketed secant search on them.
	chosen := base
	closest := func(t Trial) {
		if math.Abs(math.Log(math.Max(t.Got.Gen2Pause(), 1)/pause)) < math.Abs(math.Log(math.Max(chosen.Got.Gen2Pause(), 1)/pause)) {
			chosen = t
		}
	}
	closest(heavy)
	type weight struct{ refs, pause float64 }
	lo, hi := weight{0, p0}, weight{refs1, p1}
	for pause > hi.pause && hi.refs < 4096 { // widen until the pause is bracketed
		t, err := try(Params{Garbage: garbage, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: int(hi.refs * 4)}, steps)
		if err != nil {
			return Trial{}, err
		}
		closest(t)
		lo, hi = hi, weight{hi.refs * 4, t.Got.Gen2Pause()}
	}
	for range 4 {
		if pause <= lo.pause || hi.pause <= lo.pause || math.Abs(chosen.Got.Gen2Pause()/pause-1) < 0.08 {
			break
		}
		refs := int(math.Round(lo.refs + (pause-lo.pause)*(hi.refs-lo.refs)/(hi.pause-lo.pause)))
		refs = min(max(refs, int(lo.refs)+1), int(hi.refs)-1)
		if refs <= int(lo.refs) || refs >= int(hi.refs) {
			break
		}
		t, err := try(Params{Garbage: garbage, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: refs}, steps)
		if err != nil {
			return Trial{}, err
		}
		closest(t)
		if got := t.Got.Gen2Pause(); got < pause {
			lo = weight{float64(refs), got}
		} else {
			hi = weight{float64(refs), got}
		}
	}
	// One run's pause varies by 20% from the next (memory layout, the
	// host): the choice is checked over CheckRuns runs and corrected once
	// from the pooled figure.
	if chosen.Refs > 0 {
		pooled, err := Check(r.ctx, r.run, chosen.Params, steps)
		if err != nil {
			return Trial{}, err
		}
		if got := pooled.Gen2Pause(); got > p0 && math.Abs(got/pause-1) > 0.12 {
			refs := max(1, int(math.Round(float64(chosen.Refs)*(pause-p0)/(got-p0))))
			next := chosen.Params
			next.Refs = refs
			if again, err := Check(r.ctx, r.run, next, steps); err == nil &&
				math.Abs(again.Gen2Pause()/pause-1) < math.Abs(got/pause-1) {
				chosen = Trial{Params: next, Steps: steps, Got: again}
			} else {
				chosen.Got = pooled
			}
		} else {
			chosen.Got = pooled
		}
	}
	r.Story = append(r.Story, fmt.Sprintf("heap weight: each long-lived object holding %d references pauses a full collection %.1f ms (traced %.1f; plain objects: %.1f ms, %d references: %.1f ms, here)",
		chosen.Refs, chosen.Got.Gen2Pause()/1e6, pause/1e6, p0/1e6, refs1, p1/1e6))
	return chosen, nil
}

// String says the garbage in words, for the story.
func (g Garbage) String() string {
	if g.Cycles == 0 {
		return "no garbage"
	}
	what := fmt.Sprintf("%d rings of %d objects", g.Cycles, g.Objects)
	if g.Objects == 1 {
		what = fmt.Sprintf("%d self-referencing objects", g.Cycles)
	}
	if g.Every > 1 {
		return fmt.Sprintf("%s on one step in %d", what, g.Every)
	}
	return what + " per step"
}

// Row is one figure of -check's side-by-side table: traced against
// reproduced, with its difference and whether it is within tolerance.
type Row struct {
	Name        string
	Traced, Got float64
	Unit        string
	Tolerance   float64 // relative; 0: shown, not judged
	// Slack is an absolute allowance on top of the tolerance: for a rate,
	// one collection in a run of the traced size (a periodic collection
	// falls floor or ceil times in a run, whatever its rate).
	Slack          float64
	Within, Judged bool
	RelativeChange float64
	// Undecided says why a row with a tolerance was not judged.
	Undecided string
}

// Compare lines up the figures -check prints. got is the fitted case run at
// the traced size (Result.Steps).
func Compare(traced, got Schedule) []Row {
	perK := 0.0
	if traced.StreamSteps > 0 {
		perK = 1000 / float64(traced.StreamSteps)
	}
	rows := []Row{
		{Name: "gen-2 period", Traced: traced.Period(), Got: got.Period(), Unit: "steps", Tolerance: PeriodTolerance},
		{Name: "gen-2 pause (median)", Traced: traced.Gen2Pause() / 1e6, Got: got.Gen2Pause() / 1e6, Unit: "ms", Tolerance: PauseTolerance},
		{Name: "gen-0 per 1000 steps", Traced: 1000 * traced.Rate(0), Got: 1000 * got.Rate(0), Tolerance: RateTolerance, Slack: perK},
		{Name: "gen-1 per 1000 steps", Traced: 1000 * traced.Rate(1), Got: 1000 * got.Rate(1), Tolerance: RateTolerance, Slack: perK},
		{Name: "gen-2 per 1000 steps", Traced: 1000 * traced.Rate(2), Got: 1000 * got.Rate(2), Tolerance: RateTolerance, Slack: perK},
		{Name: "p50 step", Traced: traced.P50 / 1e6, Got: got.P50 / 1e6, Unit: "ms"},
		{Name: "p99 step", Traced: traced.P99 / 1e6, Got: got.P99 / 1e6, Unit: "ms"},
	}
	for i := range rows {
		row := &rows[i]
		row.RelativeChange = relErr(row.Got, row.Traced)
		// A rate the trace never saw is judged too: collections the job
		// does not make are a failure to reproduce it.
		row.Judged = row.Tolerance > 0 && (row.Traced > 0 || (row.Slack > 0 && row.Got > 0))
		// The fitted knobs' own runs can disagree on the pause by more
		// than the tolerance (a heap of random references pauses 35-107
		// ms from one process to the next on a 2-core VM): then one
		// figure cannot decide whether it is reproduced.
		if row.Name == "gen-2 pause (median)" && len(got.RunPauses) > 1 {
			lo, hi := slices.Min(got.RunPauses), slices.Max(got.RunPauses)
			if lo > 0 && hi/lo > 1+2*row.Tolerance {
				row.Judged = false
				row.Undecided = fmt.Sprintf("undecided: the %d runs of the fitted case paused %.1f-%.1f ms, wider apart than ±%.0f%%", len(got.RunPauses), lo/1e6, hi/1e6, 100*row.Tolerance)
			}
		}
		row.Within = !row.Judged || math.Abs(row.Got-row.Traced) <= row.Tolerance*row.Traced+row.Slack
	}
	return rows
}

// Judgeable reports whether a check has anything to judge: the trace
// holds a collection. Without one every figure -check judges is 0 = 0.
func (s Schedule) Judgeable() bool { return s.Gen != [3]int{} }

// Variant is a policy the fitted case offers, and the evidence for it.
type Variant struct{ Policy, Why string }

// Variants are the fitted case's variants: default, which reproduces the
// trace, then only the policies the trace gives a reason to try.
func (r *Result) Variants() []Variant {
	t := r.Target
	vs := []Variant{{"default", "reproduces the traced GC schedule"}}
	if !t.Judgeable() {
		return vs
	}
	vs = append(vs, Variant{"disabled", "no collection at all: the most any policy can take off the step times"})
	if t.Gen[2] == 0 || t.Gen2Pause() == 0 {
		return vs
	}
	vs = append(vs, Variant{"threshold:700,10,1000", "a raised gen-2 threshold: fewer full collections"},
		Variant{"freeze", "the heap built before the loop moved out of the full collections' walk"})
	if p := t.Period(); p > 0 {
		n := max(10, int(math.Round(p/10))*10)
		vs = append(vs, Variant{fmt.Sprintf("manual:%d", n), fmt.Sprintf("a full collection every %d steps at a step boundary (the traced period, to the ten), none in between", n)})
	}
	return vs
}

// CaseYAML is the fitted case: its default variant reproduces the traced
// schedule; the others are the policies the trace supports trying.
func (r *Result) CaseYAML(name, source string) []byte {
	p, t := r.Best.Params, r.Target
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "description: |\n  Fitted by gcjitter fit from %s, on this host's interpreter (%s).\n", source, t.Python)
	fmt.Fprintf(&b, "  Traced: %d steps, gen-0 %.4f and gen-1 %.4f collections per step, %s,\n  p50 %.3f ms, p99 %.3f ms.\n",
		t.Steps, t.Rate(0), t.Rate(1), r.fullText(), t.P50/1e6, t.P99/1e6)
	fmt.Fprintf(&b, "  %s.\n", t.Tail)
	if !t.Tail.Explained() {
		b.WriteString("  This case reproduces the job's GC schedule, not its tail.\n")
	}
	for _, s := range r.Story {
		fmt.Fprintf(&b, "  - %s\n", s)
	}
	b.WriteString("  Variants:\n")
	for _, v := range r.Variants() {
		fmt.Fprintf(&b, "  - %s: %s\n", v.Policy, v.Why)
	}
	fmt.Fprintf(&b, "workload: {model: none, work: 1, device_wait_ms: %g}\n", p.WaitMS)
	pattern := "ring"
	if p.Cycles == 0 { // a case's 0 cycles would mean the worker's default
		pattern = "none"
	}
	fmt.Fprintf(&b, "garbage: {pattern: %s, cycles: %d, objects: %d, every: %d, long_lived: %d, long_lived_refs: %d, retain: %d}\n",
		pattern, p.Cycles, max(p.Objects, 1), max(p.Every, 1), p.LongLived, p.Refs, p.Retain)
	fmt.Fprintf(&b, "steps: %d\nwarmup: 5\nruns: %d\nvariants:\n", r.Steps, CheckRuns)
	for _, v := range r.Variants() {
		fmt.Fprintf(&b, "  - policy: %s\n", v.Policy)
	}
	return []byte(b.String())
}

// fullText says what the trace's full collections were, only what it saw.
func (r *Result) fullText() string {
	t := r.Target
	switch {
	case t.Gen[2] == 0:
		return "no full collection"
	case t.Period() == 0:
		return fmt.Sprintf("%d full collections (too few for a period) pausing %.1f ms", t.Gen[2], t.Gen2Pause()/1e6)
	}
	return fmt.Sprintf("a full collection every %.0f steps pausing %.1f ms", t.Period(), t.Gen2Pause()/1e6)
}
