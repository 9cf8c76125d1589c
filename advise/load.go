package advise

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Options configure FromResults.
type Options struct {
	// Case is the case to advise on when the results hold several.
	Case string
	// Duration is the job's length (0: DefaultDuration). Limit is unused:
	// LimitOf gives the memory limit.
	Constraints
	// LimitOf is the memory limit that applies to results from a host,
	// and where it came from (results.MemLimitFlag.Limit: -mem-limit, else the
	// host's recorded limit); nil: the host's. The smallest over the
	// results' hosts applies.
	LimitOf func(results.Host) (int64, string)
}

// FromResults advises on results directories holding several policies of
// one case: a run of a case with variants, a fitted case, or several
// trace runs of one job. The reference is the variant default, else a
// traced run (the job as it runs now).
func FromResults(dirs []string, opt Options) (*Advice, error) {
	bad := func(format string, args ...any) error {
		return &results.InputError{Msgs: []string{fmt.Sprintf(format, args...)}}
	}
	if len(dirs) == 0 {
		return nil, bad("no results directory given")
	}
	var (
		datas   []*results.Data
		mans    []*results.Manifest
		entries []entry
	)
	for i, dir := range dirs {
		m, err := results.ReadManifest(dir)
		if err != nil {
			return nil, bad("%s: advise reads results directories (with %s): %v", dir, results.ManifestFile, err)
		}
		d, err := results.Load(dir, stats.SpikeRule{})
		if err != nil {
			return nil, err
		}
		policy := map[string]string{}
		for _, c := range m.Cases {
			for _, v := range c.Variants {
				policy[results.BenchName(c.Name, v.Name)] = v.Policy
			}
		}
		for _, b := range d.Benches {
			entries = append(entries, entry{dir: i, bench: b, caseName: results.CaseOf(b), variant: results.VariantOf(b), policy: policy[b]})
		}
		datas, mans = append(datas, d), append(mans, m)
	}
	caseName, err := pickCase(entries, opt.Case, dirs)
	if err != nil {
		return nil, err
	}
	named, err := nameVariants(entries, caseName, dirs)
	if err != nil {
		return nil, err
	}
	joined := results.Join(datas, func(i int, b string) string { return named[[2]any{i, b}] })
	variants := map[string]string{} // display name -> policy
	for _, e := range entries {
		if n := named[[2]any{e.dir, e.bench}]; n != "" {
			variants[results.VariantOf(n)] = e.policy
		}
	}
	ref := "default"
	if _, ok := variants[ref]; !ok {
		ref = cases.TraceVariant
	}
	if _, ok := variants[ref]; !ok {
		return nil, bad("%s: case %s has no variant default (nor a traced run) to judge the other policies against; its variants: %s", strings.Join(dirs, ", "), caseName, strings.Join(slices.Sorted(maps.Keys(variants)), ", "))
	}
	if len(variants) < 2 {
		return nil, bad("%s: case %s has one policy (%s): advise compares several; run the case with more variants, or trace the job under another -policy", strings.Join(dirs, ", "), caseName, ref)
	}
	cmp, err := results.CompareVariants(joined, ref, results.CompareOptions{})
	if err != nil {
		return nil, bad("%v", err)
	}
	verdicts := map[string]map[string]stats.Verdict{}
	runsNeeded := map[string]int{}
	for _, r := range cmp.Rows {
		if verdicts[r.Bench] == nil {
			verdicts[r.Bench] = map[string]stats.Verdict{}
		}
		verdicts[r.Bench][r.Metric] = r.Verdict
		if r.Verdict == stats.Unknown && slices.Contains(TailMetrics, r.Metric) && r.RunsNeeded < stats.MaxRunsNeeded {
			runsNeeded[r.Bench] = max(runsNeeded[r.Bench], r.RunsNeeded)
		}
	}
	means, err := meanSteps(dirs, named)
	if err != nil {
		return nil, err
	}
	var cands []Candidate
	for _, b := range joined.Benches {
		v := results.VariantOf(b)
		c := candidate(v, variants[v], joined.Runs[b], verdicts[b], means[b])
		c.RunsNeeded = runsNeeded[b]
		if v == ref && c.Policy == "" {
			c.Policy = "default"
		}
		cands = append(cands, c)
	}
	notes := medianFromSteps(cands, ref, joined, caseName)
	con := opt.Constraints
	if con.Duration == 0 {
		con.Duration = DefaultDuration
	}
	limit, from := limitOf(mans, opt.LimitOf)
	con.Limit = float64(limit)
	a, err := Decide(caseName, ref, cands, con)
	if err != nil {
		return nil, bad("%s: %v", strings.Join(dirs, ", "), err)
	}
	a.LimitFrom, a.Notes, a.cmp = from, append(notes, cmp.Notes...), cmp
	return a, nil
}

// medianFromSteps checks each median regression against the mechanism: a
// GC policy whose memory stays bounded changes its collections, not the
// work of a step, so a p50 slower than the reference's by more than twice
// what its collections add to the median step is the steps themselves
// moving between runs (on a shared VM the host's speed switched between
// about 20 and 27 ms a step from one run to the next, and two runs a
// policy fell on either side: ascend-gpt-periodic-gc's freeze read p50
// +30% regressed while its collections moved it by under 1%). Such a
// verdict becomes unknown and the candidate's median in doubt
// (Candidate.MedianInDoubt): not worse, not picked either, until more
// interleaved runs (advise's rounds) decide it. Policies that are more
// than collections (empty-cache-every-step) and memory that grows (a heap
// that slows the steps) keep the verdict.
func medianFromSteps(cands []Candidate, ref string, d *results.Data, caseName string) []string {
	var refRuns []stats.RunSummary
	refP50 := math.NaN()
	for _, c := range cands {
		if c.Variant == ref {
			refRuns, refP50 = d.Runs[results.BenchName(caseName, c.Variant)], c.P50
		}
	}
	var notes []string
	for i := range cands {
		c := &cands[i]
		if c.Variant == ref || c.Verdicts["p50"] != stats.Regressed || c.Mem.Class != stats.MemBounded || !(refP50 > 0) {
			continue
		}
		if p, err := bench.ParsePolicy(c.Policy); err != nil || p.EmptyCacheEveryStep {
			continue
		}
		runs := d.Runs[results.BenchName(caseName, c.Variant)]
		gcRef, gcCand := medianStepGC(refRuns), medianStepGC(runs)
		moved, byGC := c.P50-refP50, gcCand-gcRef
		if math.IsNaN(byGC) || moved <= 0 || byGC > moved/2 {
			continue
		}
		c.Verdicts["p50"] = stats.Unknown
		c.MedianInDoubt = fmt.Sprintf("p50 %s against %s's %s, %s, while its collections add %s to the median step against %s's %s: the steps themselves moved between runs, not its collections",
			stats.MS(c.P50), ref, stats.MS(refP50), stats.Pct(c.P50/refP50-1), stats.MS(gcCand), ref, stats.MS(gcRef))
		notes = append(notes, fmt.Sprintf("%s: median in doubt, not regressed: %s", c.Variant, c.MedianInDoubt))
	}
	return notes
}

// medianStepGC is the collectors' time in a median step, the median over
// runs: the young collections' pauses per step, and the full ones' too
// where they come in most steps (collect-every-step); rarer full
// collections sit in the tail, not the median.
func medianStepGC(runs []stats.RunSummary) float64 {
	var xs []float64
	for _, r := range runs {
		if r.Steps <= 0 {
			continue
		}
		n := float64(r.Steps)
		gc := (r.PauseNS[0] + r.PauseNS[1]) / n
		if float64(r.Collections[2]) >= n/2 {
			gc += r.PauseNS[2] / n
		}
		xs = append(xs, gc)
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return stats.Quantile(xs, 0.5)
}

// Pending is what more runs of the same length would settle: the open
// candidate's tail rows the comparison left unknown, as a comparison
// (gate.Grow adds interleaved rounds while a tested row of it is
// unknown). Empty when the advice is settled, or only its memory is
// undecided: longer runs decide that, not more of them.
func (a *Advice) Pending() *results.Comparison {
	out := &results.Comparison{}
	if a.cmp == nil || !a.Undecided || a.Open == nil || !a.Open.waitsOnRuns() {
		return out
	}
	// A tail improved in spikes or pauses whose p99 reads larger waits on
	// p99 alone (TailOnly): rounds for it, not for the others.
	var wait []string
	switch {
	case a.Open.Tail != stats.Improved:
		wait = TailMetrics
	case a.Open.P99Larger:
		wait = []string{"p99"}
	}
	out.Alpha, out.Family = a.cmp.Alpha, a.cmp.Family
	for _, r := range a.cmp.Rows {
		if results.VariantOf(r.Bench) != a.Open.Variant {
			continue
		}
		switch {
		case slices.Contains(wait, r.Metric):
			out.Rows = append(out.Rows, r)
		case r.Metric == "p50" && a.Open.MedianInDoubt != "" && r.Tested():
			// Its regressed p50 is what the rounds settle: unknown until
			// more runs (twice these, at most doubling a round) decide.
			doubt := *r
			doubt.Verdict, doubt.RunsNeeded = stats.Unknown, 2*max(len(r.Old), len(r.New))
			out.Rows = append(out.Rows, &doubt)
		}
	}
	return out
}

type entry struct {
	dir                              int
	bench, caseName, variant, policy string
}

// pickCase is the case to advise on: the one named, else the only one.
func pickCase(entries []entry, want string, dirs []string) (string, error) {
	set := map[string]bool{}
	for _, e := range entries {
		set[e.caseName] = true
	}
	names := slices.Sorted(maps.Keys(set))
	switch {
	case want != "" && !set[want]:
		return "", &results.InputError{Msgs: []string{fmt.Sprintf("%s: no case %s (cases: %s)", strings.Join(dirs, ", "), want, strings.Join(names, ", "))}}
	case want != "":
		return want, nil
	case len(names) > 1:
		return "", &results.InputError{Msgs: []string{fmt.Sprintf("%s: the results hold cases %s: name the one to advise on with -case", strings.Join(dirs, ", "), strings.Join(names, ", "))}}
	}
	return names[0], nil
}

// nameVariants names each benchmark of the case in the joined side, by
// directory and benchmark: its variant, unless another directory holds a
// variant of that name under another policy (trace runs of one job under
// two policies), when each is named by its policy.
func nameVariants(entries []entry, caseName string, dirs []string) (map[[2]any]string, error) {
	policies := map[string]map[string]bool{}
	for _, e := range entries {
		if e.caseName != caseName {
			continue
		}
		if policies[e.variant] == nil {
			policies[e.variant] = map[string]bool{}
		}
		policies[e.variant][e.policy] = true
	}
	out := map[[2]any]string{}
	owner := map[string]entry{}
	for _, e := range entries {
		if e.caseName != caseName {
			continue
		}
		name := e.variant
		if len(policies[e.variant]) > 1 {
			name = e.policy
		}
		if o, ok := owner[name]; ok && (name == "" || o.policy != e.policy) {
			return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s and %s: case %s has variant %s under policies %q and %q: give each policy its own variant name", dirs[o.dir], dirs[e.dir], caseName, e.variant, o.policy, e.policy)}}
		}
		owner[name] = e
		out[[2]any{e.dir, e.bench}] = results.BenchName(caseName, name)
	}
	return out, nil
}

// meanSteps is each joined benchmark's mean measured step in ns, pooled
// over its runs: the throughput that turns the job's duration into steps.
func meanSteps(dirs []string, named map[[2]any]string) (map[string]float64, error) {
	sum, n := map[string]float64{}, map[string]float64{}
	for i, dir := range dirs {
		steps, err := results.LoadSteps(dir)
		if err != nil {
			return nil, err
		}
		for b, s := range steps {
			nb := named[[2]any{i, b}]
			if nb == "" {
				continue
			}
			for _, run := range s.Runs {
				for _, d := range run {
					sum[nb] += d
					n[nb]++
				}
			}
		}
	}
	out := map[string]float64{}
	for b := range sum {
		out[b] = sum[b] / n[b]
	}
	return out, nil
}

// candidate summarises one policy's runs with the catalogue's metrics.
func candidate(variant, policy string, runs []stats.RunSummary, verdicts map[string]stats.Verdict, mean float64) Candidate {
	c := Candidate{Variant: variant, Policy: policy, Runs: len(runs), Verdicts: verdicts, MeanStep: mean}
	if c.Verdicts == nil {
		c.Verdicts = map[string]stats.Verdict{}
	}
	c.Steps = math.MaxInt
	for _, r := range runs {
		c.Steps = min(c.Steps, r.Steps)
	}
	med := func(name string) (median, worst float64, ok bool) {
		m, _ := stats.MetricByName(name)
		var xs []float64
		for _, r := range runs {
			if v, ok := m.Measured(r); ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			return math.NaN(), math.NaN(), false
		}
		slices.Sort(xs)
		return stats.Quantile(xs, 0.5), xs[len(xs)-1], true
	}
	c.P50, _, _ = med("p50")
	c.P99, _, _ = med("p99")
	c.SpikeRate, _, _ = med("spike-rate")
	c.Gen2Pause, _, _ = med("gen2-pause")
	if perK, _, ok := med("gen2-collections"); ok {
		c.FullShare = perK / 1000
	}
	var okP bool
	_, c.WorstPeak, okP = med("rss-peak")
	var mems []*stats.Mem
	for _, r := range runs {
		mems = append(mems, r.RSS)
	}
	c.Mem = stats.PoolMem(mems, c.Steps)
	c.HasMemory = okP && c.Mem.Runs > 0
	return c
}

// limitOf is the smallest memory limit that applies to the results'
// hosts, and where it came from; 0 when none is known.
func limitOf(mans []*results.Manifest, of func(results.Host) (int64, string)) (limit int64, from string) {
	if of == nil {
		of = func(h results.Host) (int64, string) { return h.MemLimit, h.MemLimitFrom }
	}
	for _, m := range mans {
		if l, f := of(m.Host); l > 0 && (limit == 0 || l < limit) {
			limit, from = l, f
		}
	}
	return limit, from
}
