package advise

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// kind is a synthetic policy of known truth: its tail (a full collection
// of spike times the 10 ms step every period steps, 0: none), its median
// (a factor on the step), and its memory: a collector's sawtooth of saw
// bytes over a floor that grows by leak bytes per step.
type kind struct {
	name             string
	period           int
	spike, median    float64
	saw, leak        float64
	calmer, leaks    bool // the truth: a calmer tail than default's; memory that runs out within the job
	slowerMedian     bool
	worseTailOrEqual bool
}

var kinds = []kind{
	{name: "default", period: 39, spike: 6, median: 1, saw: 30e6},
	{name: "calm-bounded", period: 39, spike: 1.5, median: 1, saw: 40e6, calmer: true},
	{name: "calm-slow-leak", period: 39, spike: 1.5, median: 1, saw: 30e6, calmer: true, leaks: true}, // leak set per trial
	{name: "calm-fast-leak", period: 0, median: 1, leak: 3 << 20, calmer: true, leaks: true},
	{name: "calm-slower-median", period: 39, spike: 1.5, median: 1.3, saw: 30e6, calmer: true, slowerMedian: true},
	{name: "worse-tail", period: 20, spike: 6, median: 1, saw: 15e6, worseTailOrEqual: true},
}

// synthRun is one run of k: steps measured steps after 20 of warm-up,
// RSS filling over the first 45 steps to 400 MB, then k's sawtooth (a
// full collection at each spike, or every 39 steps without spikes) with
// 0.5 MB of noise, one trough in three settling up by up to 8 MB once,
// and k's leak.
func synthRun(rng *rand.Rand, k kind, leak float64, steps int) stats.RunSummary {
	var sm stats.Summarizer
	period := k.period
	if period == 0 {
		period = 39
	}
	phase := rng.IntN(period)
	settleAt, settle := steps+20, 0.0
	if rng.IntN(3) == 0 {
		settleAt, settle = 20+rng.IntN(steps), 8e6*rng.Float64()
	}
	for i := range steps + 20 {
		d := 10e6 * k.median * (1 + 0.03*rng.NormFloat64())
		var gcs []bench.GCEvent
		if k.period > 0 && (i+phase)%k.period == 0 {
			pause := 10e6 * k.spike * (1 + 0.1*rng.NormFloat64())
			d += pause
			gcs = append(gcs, bench.GCEvent{Gen: 2, PauseNS: int64(pause), InStep: true})
		}
		rss := 300e6 + 100e6*min(float64(i), 45)/45 + k.saw*float64((i+phase)%period)/float64(period) + 0.5e6*rng.NormFloat64() + leak*float64(i)
		if i >= settleAt {
			rss += settle
		}
		v := int64(rss)
		sm.Add(&bench.Step{Index: i, Warmup: i < 20, DurationNS: int64(d), GC: gcs, RSS: &v})
	}
	return sm.Result(stats.DefaultSpikeRule)
}

// TestAdviseKnownTruth runs advise end to end on synthetic results of
// known truth (the summaries, the comparison's verdicts, the memory
// classes, the decision) for an 8-hour job in 16 GiB at a 10 ms step
// (2.88 million steps: a leak over 5.4 MiB per 1000 steps runs out): at
// make run's sizes (2 runs of 150-300 steps) and at decisive ones (4 runs
// of 800-1500 steps), with default and two to four other policies drawn
// from kinds. It asserts what the issue asks, over every trial: no policy
// excluded on an undecided memory, no pick whose tail or median regressed
// or is truly worse, no slow leak that runs out picked, and at the decisive
// size every such leak excluded, no bounded heap excluded on memory.
func TestAdviseKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	job := Constraints{Duration: 8 * time.Hour, Limit: 16 << 30}
	const trials = 1000
	type tally struct {
		trials, picked, undecided, keep int
		calmDrawn, calmPicked           int // trials with calm-bounded, and those that picked it
		leaksExcluded, leaksSeen        int
		boundedExcluded, boundedSeen    int
	}
	var small, decisive tally
	for trial := range trials {
		short := trial%2 == 0
		runs, steps := 4, 800+rng.IntN(700)
		tl := &decisive
		if short {
			runs, steps, tl = 2, 150+rng.IntN(150), &small
		}
		tl.trials++
		set := []kind{kinds[0]}
		for _, i := range rng.Perm(len(kinds) - 1)[:2+rng.IntN(3)] {
			set = append(set, kinds[1+i])
		}
		summaries := map[string][]stats.RunSummary{}
		leakOf := map[string]float64{}
		for _, k := range set {
			leak := k.leak
			if k.name == "calm-slow-leak" {
				// 8-64 MiB per 1000 steps: out of 16 GiB in 0.7-5.7 h.
				leak = (8 + 56*rng.Float64()) * (1 << 20) / 1000
			}
			leakOf[k.name] = leak
			for range runs {
				summaries[k.name] = append(summaries[k.name], synthRun(rng, k, leak, steps))
			}
		}
		var cands []Candidate
		for _, k := range set {
			verdicts := map[string]stats.Verdict{}
			need := 0
			if k.name != "default" {
				for _, r := range stats.Compare(stats.MetricPairs(k.name, summaries["default"], summaries[k.name]), stats.Options{}) {
					verdicts[r.Metric] = r.Verdict
					if r.Verdict == stats.Unknown && slices.Contains(TailMetrics, r.Metric) && r.RunsNeeded < stats.MaxRunsNeeded {
						need = max(need, r.RunsNeeded)
					}
				}
			}
			// The slower median is a GC policy's (freeze), so the
			// mechanism's check (medianFromSteps) sees it: its steps, not
			// its collections, are slower, and it must not be picked.
			policy := k.name
			if k.slowerMedian {
				policy = "freeze"
			}
			c := candidate(k.name, policy, summaries[k.name], verdicts, 10e6*k.median)
			c.RunsNeeded = need
			cands = append(cands, c)
		}
		d := results.NewData("synthetic")
		for _, k := range set {
			for _, r := range summaries[k.name] {
				d.AddRun(results.BenchName("synthetic", k.name), r)
			}
		}
		medianFromSteps(cands, "default", d, "synthetic")
		a, err := Decide("synthetic", "default", cands, job)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]kind{}
		for _, k := range set {
			byName[k.name] = k
			if k.name == "calm-bounded" {
				tl.calmDrawn++
			}
		}
		for _, j := range a.Candidates {
			k := byName[j.Variant]
			if slices.Contains(j.Excluded, Memory) && j.Fate == MemUnsure {
				t.Fatalf("trial %d: %s excluded on an undecided memory", trial, j.Variant)
			}
			if k.leaks {
				tl.leaksSeen++
				switch {
				case j.Fate == RunsOut:
					tl.leaksExcluded++
				case j.Fate == Lasts:
					t.Errorf("trial %d (%d runs of %d steps): %s leaking %s per 1000 steps said to last the job: %s", trial, runs, steps, j.Variant, stats.Bytes(1000*leakOf[k.name]), lasts(j, job))
				case !short:
					t.Logf("trial %d: %s leaking %s per 1000 steps not excluded: memory %s", trial, j.Variant, stats.Bytes(1000*leakOf[k.name]), lasts(j, job))
				}
			} else {
				tl.boundedSeen++
				if slices.Contains(j.Excluded, Memory) {
					tl.boundedExcluded++
					t.Logf("trial %d (%d runs of %d steps): %s, a bounded heap, excluded on memory: %s", trial, runs, steps, j.Variant, lasts(j, job))
				}
			}
		}
		switch {
		case a.Undecided:
			tl.undecided++
			continue
		case a.Pick == nil:
			t.Fatalf("trial %d: no pick, not undecided, with default's bounded heap: %s", trial, a.Reason)
		case a.Pick.Variant == "default":
			tl.keep++
			continue
		}
		tl.picked++
		p, k := a.Pick, byName[a.Pick.Variant]
		if k.name == "calm-bounded" {
			tl.calmPicked++
		}
		switch {
		case k.leaks:
			t.Errorf("trial %d (%d runs of %d steps): picked %s, which leaks %s per 1000 steps: %s", trial, runs, steps, p.Variant, stats.Bytes(1000*leakOf[k.name]), lasts(p, job))
		case k.slowerMedian || k.worseTailOrEqual, p.Tail == stats.Regressed, p.Verdicts["p50"] == stats.Regressed:
			t.Errorf("trial %d: picked %s (tail %s, median %s): its tail or median is not better than default's", trial, p.Variant, p.Tail, p.Verdicts["p50"])
		}
	}
	for _, x := range []struct {
		name string
		tl   tally
	}{{"2 runs of 150-300 steps", small}, {"4 runs of 800-1500 steps", decisive}} {
		t.Logf("%s: %d trials: %d picked a calmer policy (calm-bounded in %d of the %d that drew it), %d kept default, %d undecided; leaks that run out excluded %d of %d (none picked), bounded heaps excluded %d of %d",
			x.name, x.tl.trials, x.tl.picked, x.tl.calmPicked, x.tl.calmDrawn, x.tl.keep, x.tl.undecided, x.tl.leaksExcluded, x.tl.leaksSeen, x.tl.boundedExcluded, x.tl.boundedSeen)
	}
	// At the decisive size a leak that runs out is excluded unless its
	// interval reaches past the job's end (then undecided, never picked:
	// asserted above); a bounded heap is excluded rarely, on a trough that
	// settled up in most of its runs.
	if decisive.leaksExcluded < decisive.leaksSeen*95/100 {
		t.Errorf("at the decisive size %d of %d leaks that run out within the job were excluded, want at least 95%%", decisive.leaksExcluded, decisive.leaksSeen)
	}
	if decisive.boundedExcluded > decisive.boundedSeen/100 {
		t.Errorf("at the decisive size %d of %d bounded heaps were excluded on memory, want at most 1%%", decisive.boundedExcluded, decisive.boundedSeen)
	}
	// The decisive size must decide: where a calmer bounded policy is
	// drawn, advise finds it in most trials.
	if decisive.calmPicked < decisive.calmDrawn/2 {
		t.Errorf("at the decisive size calm-bounded was picked in %d of the %d trials that drew it, want at least half", decisive.calmPicked, decisive.calmDrawn)
	}
}
