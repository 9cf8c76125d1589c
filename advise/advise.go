package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
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
	// Memory: Growth (bytes per 1000 steps) is the runs' median; WorstGrowth
	// and WorstPeak are the largest of any run, which the time to the limit
	// is taken from, so one leaking run is not averaged away. HasMemory is
	// false where the runs recorded no RSS.
	Growth, WorstGrowth, WorstPeak float64
	HasMemory                      bool
	// Verdicts against the reference by metric name (p50, p99,
	// spike-rate, gen2-pause, rss-growth); a metric the comparison left out
	// (p99 of runs under 368 steps) is absent.
	Verdicts map[string]stats.Verdict
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
)

// Judged is a candidate with what the decision made of it.
type Judged struct {
	Candidate
	// Tail is the candidate's tail verdict against the reference (TailVerdict).
	Tail stats.Verdict
	// LimitSteps and LimitHours are the time its worst run takes to reach
	// the limit (+Inf: memory does not grow); NeedBytes is the limit the
	// job's duration needs at that growth.
	LimitSteps, LimitHours, NeedBytes float64
	// Excluded names the constraints it fails: Median, Memory, or both.
	Excluded []string
}

// Qualifies reports whether the candidate meets every constraint.
func (j *Judged) Qualifies() bool { return len(j.Excluded) == 0 }

// Interval is the search over one family of manual:N variants (same
// generation, same other parts): the largest N whose memory lasts the job,
// and the N with the smallest mean step.
type Interval struct {
	Family  string // the policy with N written as N: manual:N, freeze+manual:N:1
	Ns      []int  // the intervals measured, ascending
	Largest int    // 0: none lasts the job
	Fastest int
}

// Advice is the decision for one case.
type Advice struct {
	Case, Reference string
	Constraints
	LimitFrom string // where the limit came from: -mem-limit, the cgroup, MemTotal
	// Candidates, the reference among them, calmest tail (p99) first.
	Candidates []*Judged
	// Pick is the recommended candidate, nil when none qualifies.
	Pick   *Judged
	Reason string
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
// When the reference itself does not qualify (its memory runs out), the
// calmest qualifying tail is picked whatever its verdict.
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
	slices.SortStableFunc(a.Candidates, func(x, y *Judged) int {
		if d := cmpFloat(x.P99, y.P99); d != 0 {
			return d
		}
		return cmpFloat(x.MeanStep, y.MeanStep)
	})
	calmer := func(j *Judged) bool { return j != refJ && j.Tail == stats.Improved }
	for _, j := range a.Candidates {
		if j.Qualifies() && calmer(j) {
			a.Pick = j
			break
		}
	}
	switch {
	case a.Pick != nil:
		a.Reason = fmt.Sprintf("the calmest tail that qualifies: p99 %s against %s's %s (tail %s), median %s, memory %s", stats.MS(a.Pick.P99), ref, stats.MS(refJ.P99), a.Pick.Tail, verdictOr(a.Pick.Verdicts["p50"]), lasts(a.Pick, c))
	case refJ.Qualifies():
		a.Pick = refJ
		a.Reason = fmt.Sprintf("keep %s: no policy that qualifies has a tail the comparison calls better than %s's", ref, ref)
	default:
		for _, j := range a.Candidates {
			if j.Qualifies() {
				a.Pick = j
				a.Reason = fmt.Sprintf("%s's own memory does not last the job (%s); %s is the calmest tail that does: p99 %s, median %s, memory %s", ref, lasts(refJ, c), j.Variant, stats.MS(j.P99), verdictOr(j.Verdicts["p50"]), lasts(j, c))
				break
			}
		}
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
	if a.Pick == nil {
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

func judge(cand Candidate, ref string, c Constraints) *Judged {
	j := &Judged{Candidate: cand, Tail: TailVerdict(cand.Verdicts)}
	if cand.Variant == ref {
		j.Tail = stats.Same
	}
	if cand.Variant != ref && cand.Verdicts["p50"] == stats.Regressed {
		j.Excluded = append(j.Excluded, Median)
	}
	j.LimitSteps, j.LimitHours = math.NaN(), math.NaN()
	if cand.HasMemory {
		j.LimitSteps, j.LimitHours = stats.TimeToLimit(cand.WorstGrowth, cand.WorstPeak, c.Limit, cand.MeanStep)
		if cand.WorstPeak >= c.Limit { // over the limit already, growing or not
			j.LimitSteps, j.LimitHours = 0, 0
		}
		j.NeedBytes = cand.WorstPeak + math.Max(0, cand.WorstGrowth)*jobSteps(cand, c)/1000
	}
	if !cand.HasMemory || j.LimitHours < c.Duration.Hours() {
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
	case !j.HasMemory:
		return "not recorded"
	case j.WorstPeak >= c.Limit:
		return fmt.Sprintf("peaks at %s, over %s already", stats.Bytes(j.WorstPeak), stats.Bytes(c.Limit))
	case math.IsInf(j.LimitHours, 1):
		return "does not grow"
	}
	return fmt.Sprintf("reaches %s in %s (job %s)", stats.Bytes(c.Limit), stats.Hours(j.LimitHours), hoursText(c.Duration))
}

func excludedText(j, ref *Judged, c Constraints) string {
	var why []string
	if slices.Contains(j.Excluded, Median) {
		why = append(why, "its median regressed ("+p50Change(j, ref)+")")
	}
	if slices.Contains(j.Excluded, Memory) {
		why = append(why, "its memory "+lasts(j, c))
	}
	return strings.Join(why, " and ")
}

// relax says what would let the blocked candidate in.
func relax(j, ref *Judged, c Constraints) []string {
	var out []string
	if slices.Contains(j.Excluded, Memory) {
		if !j.HasMemory {
			out = append(out, fmt.Sprintf("%s's runs recorded no RSS: run them with a worker that records it to judge its memory", j.Variant))
		} else if j.WorstPeak >= c.Limit {
			out = append(out, fmt.Sprintf("memory: %s peaks at %s in runs of %d steps, over the limit %s: -mem-limit must be above that (and above what its growth, %s per 1000 steps, adds over %s: %s)",
				j.Variant, stats.Bytes(j.WorstPeak), j.Steps, stats.Bytes(c.Limit), stats.Bytes(j.WorstGrowth), hoursText(c.Duration), stats.Bytes(j.NeedBytes)))
		} else {
			out = append(out, fmt.Sprintf("memory: %s needs %s for %s at %s per 1000 steps (-mem-limit %s), or a job of at most %s; a policy that frees garbage on a schedule (freeze, manual:N) bounds it",
				j.Variant, stats.Bytes(j.NeedBytes), hoursText(c.Duration), stats.Bytes(j.WorstGrowth), stats.Bytes(c.Limit), stats.Hours(j.LimitHours)))
		}
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

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

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
			if !slices.Contains(j.Excluded, Memory) && n > iv.Largest {
				iv.Largest = n
			}
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
