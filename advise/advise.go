package advise

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Candidate is one policy's evidence: what its runs measured and, against
// the reference (default), the comparison's verdicts.
type Candidate struct {
	Variant, Policy string
	Runs, Steps     int // runs, and the fewest measured steps of one
	// Medians over the runs: step-time quantiles and the gen-2 pause in ns,
	// spikes per 1000 steps. MeanStep is the pooled mean step in ns: the
	// job's throughput, what turns a duration into steps.
	P50, P99, SpikeRate, Gen2Pause, MeanStep float64
	// FullShare is the full collections per measured step (median over
	// the runs): at 0.01 or more the collector makes p99.
	FullShare float64
	// Memory: Mem pools the runs' growth (bytes per 1000 steps) with its
	// interval and class (stats.PoolMem); WorstPeak is the largest peak of
	// any run. HasMemory is false where the runs recorded no RSS.
	Mem       stats.MemPool
	WorstPeak float64
	HasMemory bool
	// Verdicts against the reference by metric name (p50, p99,
	// spike-rate, gen2-pause, rss-growth); a metric the comparison left out
	// (p99 of runs under 368 steps) is absent.
	Verdicts map[string]stats.Verdict
	// RunsNeeded is the most runs a side its unknown tail metrics would
	// likely need to be decided (stats.Row.RunsNeeded), 0 when none is.
	RunsNeeded int
	// MedianInDoubt: its p50 read regressed, but by more than twice what
	// its collections add to the median step (medianFromSteps): the
	// steps themselves moved between runs. Its median is then unknown,
	// and it is not picked until more runs decide it.
	MedianInDoubt string
}

// TailMetrics are the metrics that make a policy's tail, in the table's
// order; the first, p99, ranks the candidates.
var TailMetrics = []string{"p99", "spike-rate", "gen2-pause"}

// Constraints are the job's: its duration and its memory limit in bytes.
type Constraints struct {
	Duration time.Duration
	Limit    float64
}

// DefaultDuration is the job length advise assumes when -duration is not
// given: a day, the order of a large job's stretch between restarts.
const DefaultDuration = 24 * time.Hour

// Constraint names (Advice.Binding, Judged.Excluded).
const (
	Median = "median" // p50 regressed against the reference
	Memory = "memory" // memory reaches the limit before the job ends, or was not recorded
	Both   = "both"
	// Unseen: the job will have full collections the runs did not (a
	// gen-2 threshold whose first is predicted past the runs' end, a
	// manual:N longer than them): the tail measured is not the job's,
	// and the first one walks everything accumulated until then.
	Unseen = "unseen full collection"
)

// Fate is what a candidate's memory does in the job.
type Fate string

const (
	Lasts       Fate = "lasts"        // bounded, or grows too slowly to run out even at its interval's upper end
	RunsOut     Fate = "runs out"     // over the limit already, or grows and runs out even at its interval's lower end
	MemUnsure   Fate = "undecided"    // too few steps to tell, or the interval spans the job's end
	NotRecorded Fate = "not recorded" // the runs recorded no RSS
)

// Judged is a candidate with what the decision made of it.
type Judged struct {
	Candidate
	// Tail is the candidate's tail verdict against the reference (TailVerdict).
	Tail stats.Verdict
	// Fate is what its memory does in the job. LimitHours and SoonestHours
	// are the time to the limit at the growth interval's lower and upper
	// ends (+Inf: it does not grow; NaN: undecided), LimitSteps the steps
	// at the lower end; NeedBytes is the limit the job needs at the upper
	// end. StepsNeeded, for an undecided memory, is the measured steps a
	// run needs to decide it.
	Fate                                            Fate
	LimitSteps, LimitHours, SoonestHours, NeedBytes float64
	StepsNeeded                                     int
	// Excluded names the constraints it fails: Median, Memory, or both.
	Excluded []string
	// P99Larger: its tail improved in spikes or pauses, but its p99 reads
	// larger than the reference's, the comparison cannot yet say whether
	// it is (unknown), and the collector makes p99 in one of them (a full
	// collection in 1 step in 100 or more): calmer is not decided. Where
	// full collections are rarer, p99 is the other steps' noise and the
	// pauses are the collector's tail.
	P99Larger bool
}

// Qualifies reports whether the candidate meets every constraint.
func (j *Judged) Qualifies() bool { return len(j.Excluded) == 0 }

// Interval is the search over one family of manual:N variants (same
// generation, same other parts): the largest N whose memory lasts the job,
// and the N with the smallest mean step.
type Interval struct {
	Family  string // the policy with N written as N: manual:N, freeze+manual:N:1
	Ns      []int  // the intervals measured, ascending
	Largest int    // 0: none is known to last the job
	Fastest int
	Unsure  bool // some N's memory is undecided
}

// Advice is the decision for one case.
type Advice struct {
	Case, Reference string
	Constraints
	LimitFrom string // where the limit came from: -mem-limit, the cgroup, MemTotal
	// Candidates, the reference among them, calmest tail (p99) first.
	Candidates []*Judged
	// Pick is the recommended candidate, nil when none qualifies or the
	// evidence cannot decide (Undecided, with Settle saying what would).
	Pick   *Judged
	Reason string
	// Warning, with a pick, says what is worse about it than the
	// reference (its tail, when the reference's memory runs out): the
	// first line of the text and recommendation.warning in JSON.
	Warning   string
	Undecided bool
	Settle    []string
	// Open is, when Undecided, the candidate the decision waits on.
	Open *Judged
	// Binding is the constraint that kept a calmer tail out (Median,
	// Memory, Both), "" when none did; Blocked is that candidate and Relax
	// says what would let it in.
	Binding string
	Blocked *Judged
	Relax   []string
	// Intervals are the manual:N searches, one per family with 2 or more Ns.
	Intervals []Interval
	// Notes are the comparison's facts worth reading with the verdicts
	// (metrics left out, environment changes).
	Notes []string
	cmp   *results.Comparison // FromResults' comparison (Pending)
}

// TailVerdict is the tail's verdict from its metrics' verdicts: regressed
// when one regressed, else improved when one improved, same when every
// judged one is the same, else unknown.
func TailVerdict(v map[string]stats.Verdict) stats.Verdict {
	var seen []stats.Verdict
	for _, m := range TailMetrics {
		if x, ok := v[m]; ok && x != stats.Descriptive {
			seen = append(seen, x)
		}
	}
	switch {
	case slices.Contains(seen, stats.Regressed):
		return stats.Regressed
	case slices.Contains(seen, stats.Improved):
		return stats.Improved
	case len(seen) > 0 && !slices.Contains(seen, stats.Unknown):
		return stats.Same
	}
	return stats.Unknown
}

// Decide recommends one candidate: the calmest tail (smallest p99) whose
// median is not worse than the reference's and whose memory lasts the
// job. A candidate beats the reference only with a tail the comparison
// calls improved: a p99 smaller by noise is no reason to change a setting.
// Where a calmer candidate's tail or memory is undecided, so is the
// recommendation (Undecided, with what would settle it): advise does not
// guess. When the reference's own memory runs out, the calmest candidate
// whose memory lasts is picked, and where its tail is worse than the
// reference's the Warning says so.
func Decide(caseName, ref string, cands []Candidate, c Constraints) (*Advice, error) {
	if !(c.Limit > 0) {
		return nil, fmt.Errorf("no memory limit: give -mem-limit SIZE (the results record none)")
	}
	if c.Duration <= 0 {
		return nil, fmt.Errorf("the job's duration must be > 0, got %v", c.Duration)
	}
	a := &Advice{Case: caseName, Reference: ref, Constraints: c}
	var refJ *Judged
	for _, cand := range cands {
		j := judge(cand, ref, c)
		if cand.Variant == ref {
			refJ = j
		}
		a.Candidates = append(a.Candidates, j)
	}
	if refJ == nil {
		return nil, fmt.Errorf("case %s has no variant %s to judge the others against", caseName, ref)
	}
	for _, j := range a.Candidates {
		j.P99Larger = j != refJ && j.Tail == stats.Improved && j.P99 > refJ.P99 && j.Verdicts["p99"] == stats.Unknown &&
			collectorMakesP99(j, refJ)
	}
	slices.SortStableFunc(a.Candidates, func(x, y *Judged) int {
		if d := cmp.Compare(x.P99, y.P99); d != 0 {
			return d
		}
		return cmp.Compare(x.MeanStep, y.MeanStep)
	})
	// open is the calmest candidate that might beat the pick but whose
	// tail or memory the evidence has not decided.
	var open *Judged
	for _, j := range a.Candidates {
		if j == refJ || !j.possible() {
			continue
		}
		if j.Tail == stats.Improved && !j.P99Larger && j.Fate == Lasts && j.MedianInDoubt == "" {
			a.Pick = j
			break
		}
		if (j.Tail == stats.Improved || j.Tail == stats.Unknown && j.P99 < refJ.P99) && (j.Fate == Lasts || j.Fate == MemUnsure) {
			open = j
			break
		}
	}
	refOut := slices.Contains(refJ.Excluded, Memory)
	switch {
	case a.Pick != nil:
		a.Reason = fmt.Sprintf("the calmest tail that qualifies: p99 %s against %s's %s (tail %s%s), median %s, memory %s", stats.MS(a.Pick.P99), ref, stats.MS(refJ.P99), a.Pick.Tail, improvedIn(a.Pick), verdictOr(a.Pick.Verdicts["p50"]), lasts(a.Pick, c))
		if a.Pick.P99 > refJ.P99 {
			// The tail verdict came from its spikes or pauses: say that its
			// p99 reads larger, so nobody takes the pick for a smaller one.
			a.Reason += fmt.Sprintf("; its p99 reads larger than %s's (p99 %s): calmer in %s, not in p99", ref, verdictOr(a.Pick.Verdicts["p99"]), strings.Join(improved(a.Pick), " and "))
			if !collectorMakesP99(a.Pick, refJ) {
				a.Reason += " (full collections in under 1 step in 100: p99 is the other steps')"
			}
		}
	case open != nil:
		a.undecided(open, refJ, c)
	case !refOut:
		a.Pick = refJ
		a.Reason = fmt.Sprintf("keep %s: no policy that qualifies has a tail the comparison calls better than %s's", ref, ref)
		if refJ.Fate == MemUnsure {
			a.Reason += fmt.Sprintf("; %s's own memory is undecided (%s), which is no reason to change it", ref, lasts(refJ, c))
		}
	default:
		for _, j := range a.Candidates {
			if j == refJ || !j.possible() {
				continue
			}
			if j.Fate == MemUnsure {
				a.undecided(j, refJ, c)
				break
			}
			a.Pick = j
			a.Reason = fmt.Sprintf("%s's own memory does not last the job (%s); %s is the calmest tail that does: p99 %s, median %s, memory %s", ref, lasts(refJ, c), j.Variant, stats.MS(j.P99), verdictOr(j.Verdicts["p50"]), lasts(j, c))
			break
		}
	}
	if p := a.Pick; p != nil && p != refJ && (p.Tail == stats.Regressed || refOut && p.P99 > refJ.P99) {
		a.Warning = fmt.Sprintf("its tail is worse than %s's (p99 %s against %s, tail %s): the price of memory that lasts, as %s's runs out (%s)", ref, stats.MS(p.P99), stats.MS(refJ.P99), p.Tail, ref, lasts(refJ, c))
	}
	// The constraint that binds is the one that kept out the smallest p99
	// below the pick's, shown better or not (the user asks why not that
	// one); with no pick, the reference's own.
	for _, j := range a.Candidates {
		if a.Pick == nil || !(j.P99 < a.Pick.P99) {
			break
		}
		if !j.Qualifies() {
			a.Blocked = j
			break
		}
	}
	if a.Pick == nil && !a.Undecided {
		a.Blocked = refJ
		a.Reason = fmt.Sprintf("no policy qualifies: each fails a constraint, and %s itself: %s", ref, excludedText(refJ, refJ, c))
		if least, longest := leastMemory(a.Candidates); least != nil && least != refJ {
			a.Reason += fmt.Sprintf("; of the policies whose median did not regress, %s needs the least memory for %s (%s) and %s lasts longest (%s)",
				least.Variant, hoursText(c.Duration), stats.Bytes(least.NeedBytes), longest.Variant, stats.Hours(longest.LimitHours))
		}
	}
	if a.Blocked != nil {
		a.Binding = a.Blocked.Excluded[0]
		if len(a.Blocked.Excluded) > 1 {
			a.Binding = Both
		}
		a.Relax = relax(a.Blocked, refJ, c)
		if a.Pick != nil && a.Pick != a.Blocked {
			a.Reason += fmt.Sprintf("; %s has a smaller p99 (%s, tail %s) but %s", a.Blocked.Variant, stats.MS(a.Blocked.P99), a.Blocked.Tail, excludedText(a.Blocked, refJ, c))
		}
	}
	a.Intervals = intervals(a.Candidates)
	return a, nil
}

// improved is j's tail metrics that the comparison calls improved.
func improved(j *Judged) []string {
	var out []string
	for _, m := range TailMetrics {
		if j.Verdicts[m] == stats.Improved {
			out = append(out, m)
		}
	}
	return out
}

// collectorMakesP99 reports whether full collections come in 1 step in
// 100 or more in either policy, so that p99 is the collector's.
func collectorMakesP99(a, b *Judged) bool { return max(a.FullShare, b.FullShare) >= 0.01 }

// improvedIn is " in M and N", the tail metrics behind an improved tail,
// for the reason's parenthesis; "" otherwise.
func improvedIn(j *Judged) string {
	if j.Tail != stats.Improved {
		return ""
	}
	return " in " + strings.Join(improved(j), " and ")
}

// possible reports whether nothing decided rules the candidate out: its
// median did not regress and its memory is not known to run out.
func (j *Judged) possible() bool {
	return !slices.Contains(j.Excluded, Median) && !slices.Contains(j.Excluded, Memory) && !slices.Contains(j.Excluded, Unseen)
}

// undecided makes the advice undecided on j: the calmest candidate that
// might be the pick, with what would settle its tail and its memory.
func (a *Advice) undecided(j, ref *Judged, c Constraints) {
	a.Undecided, a.Open = true, j
	var why []string
	if j.Tail != stats.Improved || j.P99Larger {
		more := "more runs"
		if n := j.RunsNeeded; n > j.Runs {
			more = fmt.Sprintf("about %d runs a policy (%d now)", n, j.Runs)
		}
		if j.P99Larger {
			why = append(why, fmt.Sprintf("its tail improved%s while its p99 reads larger than %s's (%s against %s, unknown)", improvedIn(j), ref.Variant, stats.MS(j.P99), stats.MS(ref.P99)))
		} else {
			why = append(why, fmt.Sprintf("its tail against %s's is %s (p99 %s against %s)", ref.Variant, j.Tail, stats.MS(j.P99), stats.MS(ref.P99)))
		}
		a.Settle = append(a.Settle, fmt.Sprintf("tail: %s of %s and %s decide whether %s's tail is calmer", more, j.Variant, ref.Variant, j.Variant))
	}
	if j.MedianInDoubt != "" {
		why = append(why, "its median is in doubt ("+j.MedianInDoubt+")")
		a.Settle = append(a.Settle, fmt.Sprintf("median: more interleaved runs of %s and %s decide whether its median is slower (the host's speed between runs averages out over more of them)", j.Variant, ref.Variant))
	}
	if j.Fate == MemUnsure {
		why = append(why, "its memory is undecided ("+lasts(j, c)+")")
		a.Settle = append(a.Settle, fmt.Sprintf("memory: runs of %s of about %d measured steps (%d now) decide whether it grows", j.Variant, j.StepsNeeded, j.Steps))
	}
	a.Reason = fmt.Sprintf("undecided: %s has the calmest tail that might qualify, but %s", j.Variant, strings.Join(why, " and "))
}

func judge(cand Candidate, ref string, c Constraints) *Judged {
	j := &Judged{Candidate: cand, Tail: TailVerdict(cand.Verdicts)}
	if cand.Variant == ref {
		j.Tail = stats.Same
	}
	if cand.Variant != ref && cand.Verdicts["p50"] == stats.Regressed {
		j.Excluded = append(j.Excluded, Median)
	}
	j.LimitSteps, j.LimitHours, j.SoonestHours, j.NeedBytes = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	m := cand.Mem
	switch {
	case !cand.HasMemory || m.Class == "":
		j.Fate = NotRecorded
	case cand.WorstPeak >= c.Limit: // over the limit already, growing or not
		j.Fate, j.LimitSteps, j.LimitHours, j.SoonestHours, j.NeedBytes = RunsOut, 0, 0, 0, cand.WorstPeak
	case m.Class == stats.MemBounded && m.Collector:
		// The collector frees the garbage every period the runs saw (or at
		// a full collection the counts predict, the heap near its peak by
		// then), and RSS did not grow beside it: the peak holds, however
		// long the job.
		j.LimitSteps, j.LimitHours, j.SoonestHours = math.Inf(1), math.Inf(1), math.Inf(1)
		j.NeedBytes, j.Fate = math.Max(cand.WorstPeak, m.PeakAtNext), Lasts
		if m.NextFull > cand.Steps && float64(m.NextFull) < jobSteps(cand, c) {
			j.Excluded = append(j.Excluded, Unseen)
		}
	case m.Class == stats.MemGrows && m.NextFull > 0 && float64(m.NextFull) < jobSteps(cand, c):
		// Garbage accumulates until the first full collection, predicted
		// from the thresholds and the counts: memory peaks there, not on
		// a straight line through the job.
		peak := math.Max(cand.WorstPeak, m.PeakAtNext)
		j.NeedBytes = peak
		if peak >= c.Limit {
			j.LimitSteps, j.LimitHours = stats.TimeToLimit(m.Lo, cand.WorstPeak, c.Limit, cand.MeanStep)
			_, j.SoonestHours = stats.TimeToLimit(m.Hi, cand.WorstPeak, c.Limit, cand.MeanStep)
			j.Fate = RunsOut
			break
		}
		j.LimitSteps, j.LimitHours, j.SoonestHours, j.Fate = math.Inf(1), math.Inf(1), math.Inf(1), Lasts
		if m.NextFull > cand.Steps {
			j.Excluded = append(j.Excluded, Unseen)
		}
	case m.Class == stats.MemGrows && m.Deferred && m.NextFull == 0:
		// CPython's 25% rule will let a full collection through, at a
		// step the counts do not show: how high memory climbs first is
		// not known, nor is the tail then.
		j.Fate, j.StepsNeeded = MemUnsure, 2*cand.Steps
	case m.Class == stats.MemBounded:
		// Bounded to within the runs' resolution: a leak slower than it
		// would not have shown, so the job must survive one that fast.
		j.LimitSteps, j.LimitHours, j.SoonestHours = math.Inf(1), math.Inf(1), math.Inf(1)
		j.NeedBytes = cand.WorstPeak + m.Resolution*jobSteps(cand, c)/1000
		j.Fate = Lasts
		if j.NeedBytes > c.Limit {
			allowed := 1000 * (c.Limit - cand.WorstPeak) / jobSteps(cand, c)
			j.Fate, j.StepsNeeded = MemUnsure, int(math.Ceil(1.2*float64(cand.Steps)*m.Resolution/allowed))
		}
	case m.Class == stats.MemGrows:
		j.LimitSteps, j.LimitHours = stats.TimeToLimit(m.Lo, cand.WorstPeak, c.Limit, cand.MeanStep)
		_, j.SoonestHours = stats.TimeToLimit(m.Hi, cand.WorstPeak, c.Limit, cand.MeanStep)
		j.NeedBytes = cand.WorstPeak + math.Max(0, m.Hi)*jobSteps(cand, c)/1000
		switch {
		case j.LimitHours < c.Duration.Hours():
			j.Fate = RunsOut
		case j.SoonestHours >= c.Duration.Hours():
			j.Fate = Lasts
		default:
			// Narrowing the interval to one side of the job's end: the
			// interval's width goes as 1/steps.
			j.Fate, j.StepsNeeded = MemUnsure, 2*cand.Steps
		}
	default:
		j.Fate, j.StepsNeeded = MemUnsure, m.StepsNeeded
	}
	if j.Fate == RunsOut || j.Fate == NotRecorded {
		j.Excluded = append(j.Excluded, Memory)
	}
	return j
}

// jobSteps is how many steps the job takes at the candidate's mean step.
func jobSteps(cand Candidate, c Constraints) float64 {
	if !(cand.MeanStep > 0) {
		return math.Inf(1)
	}
	return float64(c.Duration.Nanoseconds()) / cand.MeanStep
}

// lasts says how long the candidate's memory lasts against the job.
func lasts(j *Judged, c Constraints) string {
	switch {
	case j.Fate == NotRecorded:
		return "not recorded"
	case j.WorstPeak >= c.Limit:
		return fmt.Sprintf("peaks at %s, over %s already", stats.Bytes(j.WorstPeak), stats.Bytes(c.Limit))
	case j.Mem.Collector && j.Mem.Class == stats.MemBounded:
		return fmt.Sprintf("bounded (%d of %d runs): %s; peak %s", j.Mem.Bounded, j.Mem.Runs, j.Mem.Why, stats.Bytes(j.WorstPeak))
	case j.Mem.Collector && j.Mem.Class == stats.MemGrows && j.Fate == MemUnsure:
		return fmt.Sprintf("grows until CPython's 25%% rule lets a full collection through (%s); runs of about %d steps would see it", j.Mem.Why, j.StepsNeeded)
	case j.Mem.Collector && j.Mem.Class == stats.MemGrows && j.Fate == Lasts:
		return fmt.Sprintf("grows until its first full collection (%s): peaks at %s, within %s", j.Mem.Why, stats.Bytes(j.NeedBytes), stats.Bytes(c.Limit))
	case j.Mem.Collector && j.Mem.Class == stats.MemGrows:
		return fmt.Sprintf("grows %s-%s per 1000 steps (%s): reaches %s in %s (job %s)", stats.Bytes(j.Mem.Lo), stats.Bytes(j.Mem.Hi), j.Mem.Why, stats.Bytes(c.Limit), stats.HoursRange(j.SoonestHours, j.LimitHours), hoursText(c.Duration))
	case j.Mem.Class == stats.MemBounded && j.Fate == MemUnsure:
		return fmt.Sprintf("bounded over %d steps to within %s per 1000 steps, which over the job could reach %s; runs of about %d steps would bound it closer", j.Steps, stats.Bytes(j.Mem.Resolution), stats.Bytes(j.NeedBytes), j.StepsNeeded)
	case j.Mem.Class == stats.MemBounded:
		return fmt.Sprintf("bounded (%d of %d runs; to within %s per 1000 steps)", j.Mem.Bounded, j.Mem.Runs, stats.Bytes(j.Mem.Resolution))
	case j.Mem.Class == stats.MemGrows:
		return fmt.Sprintf("grows %s-%s per 1000 steps: reaches %s in %s (job %s)", stats.Bytes(j.Mem.Lo), stats.Bytes(j.Mem.Hi), stats.Bytes(c.Limit), stats.HoursRange(j.SoonestHours, j.LimitHours), hoursText(c.Duration))
	}
	return fmt.Sprintf("undecided over %d steps: %d of %d runs grow, %d bounded; runs of about %d steps would decide it", j.Steps, j.Mem.Grows, j.Mem.Runs, j.Mem.Bounded, j.StepsNeeded)
}

func excludedText(j, ref *Judged, c Constraints) string {
	var why []string
	if slices.Contains(j.Excluded, Median) {
		why = append(why, "its median regressed ("+p50Change(j, ref)+")")
	}
	if slices.Contains(j.Excluded, Memory) {
		why = append(why, "its memory "+lasts(j, c))
	}
	if slices.Contains(j.Excluded, Unseen) {
		why = append(why, unseenText(j))
	}
	return strings.Join(why, " and ")
}

// unseenText says why a candidate's measured tail is not the job's.
func unseenText(j *Judged) string {
	return fmt.Sprintf("its runs (%d steps) saw none of its full collections, the first predicted at step %d: its tail there walks all it kept (%s of RSS by then)", j.Steps, j.Mem.NextFull, stats.Bytes(j.NeedBytes))
}

// relax says what would let the blocked candidate in.
func relax(j, ref *Judged, c Constraints) []string {
	var out []string
	if slices.Contains(j.Excluded, Memory) {
		if j.Fate == NotRecorded {
			out = append(out, fmt.Sprintf("%s's runs recorded no RSS: run them with a worker that records it to judge its memory", j.Variant))
		} else if j.WorstPeak >= c.Limit {
			out = append(out, fmt.Sprintf("memory: %s peaks at %s in runs of %d steps, over the limit %s: -mem-limit must be above that",
				j.Variant, stats.Bytes(j.WorstPeak), j.Steps, stats.Bytes(c.Limit)))
		} else {
			out = append(out, fmt.Sprintf("memory: %s needs %s for %s at up to %s per 1000 steps (-mem-limit %s), or a job of at most %s; a policy that frees garbage on a schedule (freeze, manual:N) bounds it",
				j.Variant, stats.Bytes(j.NeedBytes), hoursText(c.Duration), stats.Bytes(j.Mem.Hi), stats.Bytes(c.Limit), stats.Hours(j.SoonestHours)))
		}
	}
	if slices.Contains(j.Excluded, Unseen) {
		out = append(out, fmt.Sprintf("tail: runs of %s of more than %d measured steps (%d now) would measure its full collections; or a job that ends before one", j.Variant, j.Mem.NextFull, j.Steps))
	}
	if slices.Contains(j.Excluded, Median) {
		out = append(out, fmt.Sprintf("median: %s's p50 is %s against %s's %s (%s); it qualifies only if that slower median is acceptable", j.Variant, stats.MS(j.P50), ref.Variant, stats.MS(ref.P50), p50Change(j, ref)))
	}
	return out
}

// p50Change is j's median against the reference's, in percent.
func p50Change(j, ref *Judged) string {
	if !(ref.P50 > 0) {
		return "regressed"
	}
	return stats.Pct(j.P50/ref.P50-1) + ", regressed"
}

func verdictOr(v stats.Verdict) string {
	if v == "" {
		return "not judged"
	}
	return string(v)
}

func hoursText(d time.Duration) string { return stats.Hours(d.Hours()) }

// intervals searches each family of manual:N variants present.
func intervals(js []*Judged) []Interval {
	by := map[string][]*Judged{}
	var order []string
	for _, j := range js {
		fam, n := manualFamily(j.Policy)
		if n == 0 {
			continue
		}
		if by[fam] == nil {
			order = append(order, fam)
		}
		by[fam] = append(by[fam], j)
	}
	slices.Sort(order)
	var out []Interval
	for _, fam := range order {
		members := by[fam]
		if len(members) < 2 {
			continue
		}
		iv := Interval{Family: fam}
		best := math.Inf(1)
		for _, j := range members {
			_, n := manualFamily(j.Policy)
			iv.Ns = append(iv.Ns, n)
			if j.Fate == Lasts && n > iv.Largest {
				iv.Largest = n
			}
			iv.Unsure = iv.Unsure || j.Fate == MemUnsure
			if j.MeanStep < best {
				best, iv.Fastest = j.MeanStep, n
			}
		}
		slices.Sort(iv.Ns)
		out = append(out, iv)
	}
	return out
}

// manualFamily is a manual policy with its interval written N, and the
// interval; n is 0 for a policy without manual:N.
func manualFamily(policy string) (family string, n int) {
	p, err := bench.ParsePolicy(policy)
	if err != nil || p.ManualEvery == 0 {
		return "", 0
	}
	parts := strings.Split(policy, "+")
	for i, part := range parts {
		if f := strings.Split(part, ":"); f[0] == "manual" {
			f[1] = "N"
			parts[i] = strings.Join(f, ":")
		}
	}
	return strings.Join(parts, "+"), p.ManualEvery
}

// leastMemory are, among the candidates whose median did not regress, the
// one that needs the smallest limit for the job and the one that lasts the
// longest within it: with no pick, what relaxing memory would admit first.
func leastMemory(js []*Judged) (least, longest *Judged) {
	for _, j := range js {
		if !j.HasMemory || slices.Contains(j.Excluded, Median) {
			continue
		}
		if least == nil || j.NeedBytes < least.NeedBytes {
			least = j
		}
		if longest == nil || j.LimitHours > longest.LimitHours {
			longest = j
		}
	}
	return least, longest
}
