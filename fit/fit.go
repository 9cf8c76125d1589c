package fit

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Params are the worker's knobs a fit sets (model none, ring garbage of
// Objects nodes per cycle): Cycles of garbage per step set the young
// collections; Retain (steps the garbage stays referenced) the survivors
// promoted to the old generation; LongLived the heap a full collection
// walks, which sets its pause and, through CPython's 25% rule, its period;
// WaitMS the step's own time (a GIL-free wait, as for compute).
type Params struct {
	Cycles, Retain, LongLived int
	// Refs makes each long-lived object a list of that many references: a
	// longer pause per object, the 25% rule's count unchanged.
	Refs   int
	WaitMS float64
}

// Objects per garbage cycle in fitted cases.
const Objects = 4

// Tolerances are what a reproduction must meet (fit -check, and the
// issue's acceptance): full-collection period and young-collection rates
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
	// Steps is the fitted case's run length: as long as the trace, and
	// enough full collections to see their period; TrialSteps the search's.
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
	// the trace, or that.
	r.TrialSteps = 500
	if period > 0 {
		r.TrialSteps = max(r.TrialSteps, int(math.Ceil(4*period)))
	}
	r.Steps = max(r.TrialSteps, target.Steps)
	try := func(p Params, steps int) (Trial, error) {
		got, err := run(ctx, p, steps)
		t := Trial{Params: p, Steps: steps, Got: got}
		if err != nil {
			return t, err
		}
		r.Trials = append(r.Trials, t)
		logf("fit: cycles %d retain %d long-lived %d x %d refs: gen0 %.3f/step, gen2 period %.0f steps, pause %.1f ms",
			p.Cycles, p.Retain, p.LongLived, p.Refs, got.Rate(0), got.Period(), got.Gen2Pause()/1e6)
		return t, nil
	}

	// 1. Young collections: net tracked allocations per step, linear in the
	// cycles; one calibration run and one refinement.
	const calCycles = 200
	cal, err := try(Params{Cycles: calCycles}, 400)
	if err != nil {
		return nil, err
	}
	cycles, quiet := 0, cal.Got.NoGCP50
	if target.Rate(0) > 0 && cal.Got.Rate(0) > 0 {
		cycles = max(1, int(math.Round(calCycles*target.Rate(0)/cal.Got.Rate(0))))
		if again, err := try(Params{Cycles: cycles}, 400); err == nil && again.Got.Rate(0) > 0 {
			cycles = max(1, int(math.Round(float64(cycles)*target.Rate(0)/again.Got.Rate(0))))
			quiet = again.Got.NoGCP50
		}
	}
	r.Story = append(r.Story, fmt.Sprintf("garbage: %d rings of %d objects per step give the traced %.3f gen-0 collections per step (calibrated: %d rings gave %.3f)",
		cycles, Objects, target.Rate(0), calCycles, cal.Got.Rate(0)))

	// 2. The step's own time: what the traced steps without a collection
	// took beyond the worker's garbage-making, as a GIL-free wait. Every
	// later trial waits too: a host that idles between bursts of work
	// pauses longer in a collection (measured: +25% for 0.3 ms), so the
	// pause is matched with it.
	wait := math.Round(math.Max(0, (target.NoGCP50-quiet)/1e6)*1000) / 1000
	r.Story = append(r.Story, fmt.Sprintf("step time: a %.3f ms GIL-free wait per step (the traced steps without a collection take %.3f ms at the median; the garbage alone %.3f ms here)",
		wait, target.NoGCP50/1e6, quiet/1e6))

	best := Trial{Params: Params{Cycles: cycles, WaitMS: wait}}
	if period == 0 || target.Gen2Pause() == 0 {
		// No period to match: keep the heap the trace saw, and survivors
		// only if it had full collections at all.
		best.LongLived = int(target.Heap2)
		if target.Gen[2] > 0 {
			best.Retain = 4
		}
		r.Story = append(r.Story, fmt.Sprintf("heap: %d long-lived objects, the traced gen-2 heap; the trace has %d full collections, too few for a period", best.LongLived, target.Gen[2]))
		t, err := try(best.Params, r.TrialSteps)
		if err != nil {
			return nil, err
		}
		best = t
	} else {
		best, err = fitHeap(r, target, cycles, wait, try)
		if err != nil {
			return nil, err
		}
	}

	// The wait, corrected by what the final knobs' steps took (their
	// retained garbage and heap cost time too); the schedule does not
	// depend on it.
	if best.Got.NoGCP50 > 0 {
		best.WaitMS = math.Round(math.Max(0, best.WaitMS+(target.NoGCP50-best.Got.NoGCP50)/1e6)*1000) / 1000
	}
	r.Best = best
	return r, nil
}

// fitHeap finds the heap: its size (the objects CPython's 25% rule counts)
// sets the period of the full collections once enough garbage survives to
// the old generation; the weight of each object (references walked) then
// sets their pause without moving the period.
func fitHeap(r *Result, target Schedule, cycles int, wait float64, try func(Params, int) (Trial, error)) (Trial, error) {
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
		t, err := try(Params{Cycles: cycles, Retain: retain, WaitMS: wait, LongLived: heap}, steps)
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
		return Trial{}, fmt.Errorf("no heap gave a full-collection period: the traced %.0f steps cannot be reproduced with %d rings per step", period, cycles)
	}
	r.Story = append(r.Story, fmt.Sprintf("heap size: %d long-lived objects, with every step's garbage kept %d steps so it survives to the old generation, give a full collection every %.0f steps (traced %.0f; the traced job's own heap was %d objects)",
		best.LongLived, retain, best.Got.Period(), period, target.Heap2))

	// The pause, by each object's weight: linear in the references walked.
	base := best
	const refs1 = 32
	heavy, err := try(Params{Cycles: cycles, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: refs1}, steps)
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
		t, err := try(Params{Cycles: cycles, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: int(hi.refs * 4)}, steps)
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
		t, err := try(Params{Cycles: cycles, Retain: retain, WaitMS: wait, LongLived: base.LongLived, Refs: refs}, steps)
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

// Compare is the side-by-side table of -check: traced against reproduced,
// each figure with its difference and whether it is within tolerance.
type Row struct {
	Name           string
	Traced, Got    float64
	Unit           string
	Tolerance      float64 // 0: shown, not judged
	Within, Judged bool
	RelativeChange float64
}

// Compare lines up the figures -check prints.
func Compare(traced, got Schedule) []Row {
	rows := []Row{
		{Name: "gen-2 period", Traced: traced.Period(), Got: got.Period(), Unit: "steps", Tolerance: PeriodTolerance},
		{Name: "gen-2 pause (mean)", Traced: traced.Gen2Pause() / 1e6, Got: got.Gen2Pause() / 1e6, Unit: "ms", Tolerance: PauseTolerance},
		{Name: "gen-0 per 1000 steps", Traced: 1000 * traced.Rate(0), Got: 1000 * got.Rate(0), Tolerance: RateTolerance},
		{Name: "gen-1 per 1000 steps", Traced: 1000 * traced.Rate(1), Got: 1000 * got.Rate(1), Tolerance: RateTolerance},
		{Name: "p50 step", Traced: traced.P50 / 1e6, Got: got.P50 / 1e6, Unit: "ms"},
		{Name: "p99 step", Traced: traced.P99 / 1e6, Got: got.P99 / 1e6, Unit: "ms"},
	}
	for i := range rows {
		row := &rows[i]
		row.RelativeChange = relErr(row.Got, row.Traced)
		row.Judged = row.Tolerance > 0 && row.Traced > 0
		row.Within = !row.Judged || math.Abs(row.RelativeChange) <= row.Tolerance
	}
	return rows
}

// CaseYAML is the fitted case: its default variant reproduces the traced
// schedule; the policy variants are the ones worth trying on it.
func (r *Result) CaseYAML(name, source string) []byte {
	p := r.Best.Params
	period := r.Target.Period()
	manual := 50
	if period > 0 {
		manual = max(10, int(math.Round(period/10))*10)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "description: |\n  Fitted by gcjitter fit from %s, on this host's interpreter (%s).\n", source, r.Target.Python)
	fmt.Fprintf(&b, "  Traced: %d steps, gen-0 %.3f and gen-1 %.4f collections per step, a full\n  collection every %.0f steps pausing %.1f ms, p50 %.3f ms, p99 %.3f ms.\n",
		r.Target.Steps, r.Target.Rate(0), r.Target.Rate(1), period, r.Target.Gen2Pause()/1e6, r.Target.P50/1e6, r.Target.P99/1e6)
	for _, s := range r.Story {
		fmt.Fprintf(&b, "  - %s\n", s)
	}
	fmt.Fprintf(&b, "  Variants: default reproduces the trace; disabled, a raised gen-2\n  threshold, freeze and manual:%d (a full collection every %d steps) are\n  the policies worth trying on it.\n", manual, manual)
	fmt.Fprintf(&b, "workload: {model: none, work: 1, device_wait_ms: %g}\n", p.WaitMS)
	fmt.Fprintf(&b, "garbage: {pattern: ring, cycles: %d, objects: %d, long_lived: %d, long_lived_refs: %d, retain: %d}\n", p.Cycles, Objects, p.LongLived, p.Refs, p.Retain)
	fmt.Fprintf(&b, "steps: %d\nwarmup: 5\nruns: 3\n", r.Steps)
	fmt.Fprintf(&b, "variants:\n  - policy: default\n  - policy: disabled\n  - policy: threshold:700,10,1000\n  - policy: freeze\n  - policy: manual:%d\n", manual)
	return []byte(b.String())
}
