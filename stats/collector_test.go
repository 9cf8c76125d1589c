package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// gcSim is CPython's generational collector (3.8-3.13) as far as the
// accounting goes: gen-0's count rises with every tracked allocation and
// triggers a collection past its threshold; the oldest generation over
// its threshold is collected, gen 2 only when long_lived_pending reaches a
// quarter of long_lived_total; survivors move up a generation. Each
// step's objects are cyclic garbage that dies retain steps later. It
// writes the records the worker would, with RSS from the live objects
// and a planted leak outside the collector.
type gcSim struct {
	th                   [3]int64
	enabled              bool
	manual               int // a gen-2 gc.collect every manual steps (0: none)
	perStep              int // tracked objects a step allocates
	retain               int
	count                [3]int64
	gens                 [3]map[int]int64 // per generation: objects by the step they die at
	pending, total       int64
	leakPerStep, objSize float64
	base                 float64
}

func newSim(th [3]int64, enabled bool, perStep, retain int, longLived int64) *gcSim {
	s := &gcSim{th: th, enabled: enabled, perStep: perStep, retain: retain, objSize: 1000, base: 300 << 20}
	for g := range s.gens {
		s.gens[g] = map[int]int64{}
	}
	s.gens[2][math.MaxInt] = longLived // alive for the whole run
	s.total = longLived
	return s
}

func (s *gcSim) live() (n int64) {
	for _, g := range s.gens {
		for _, k := range g {
			n += k
		}
	}
	return n
}

// collect collects generation gen at step now.
func (s *gcSim) collect(gen, now int, manual bool) bench.GCEvent {
	if gen < 2 {
		s.count[gen+1]++
	}
	for g := 0; g <= gen; g++ {
		s.count[g] = 0
	}
	var freed, survivors int64
	to := min(gen+1, 2)
	for g := 0; g <= gen; g++ {
		for death, k := range s.gens[g] {
			if death < now {
				freed += k
			} else {
				survivors += k
				if g != to {
					s.gens[to][death] += k
				}
			}
			if g != to {
				delete(s.gens[g], death)
			}
		}
		if g == to {
			for death := range s.gens[g] {
				if death < now {
					delete(s.gens[g], death)
				}
			}
		}
	}
	switch gen {
	case 1:
		s.pending += survivors
	case 2:
		s.pending, s.total = 0, survivors
	}
	return bench.GCEvent{Gen: gen, Collected: freed, InStep: true, Manual: manual}
}

// step runs step now and returns its record.
func (s *gcSim) step(now int) *bench.Step {
	st := &bench.Step{Index: now}
	for range s.perStep {
		s.gens[0][now+s.retain]++
		s.count[0]++
		if !s.enabled || s.count[0] <= s.th[0] {
			continue
		}
		for g := 2; g >= 0; g-- {
			if s.count[g] > s.th[g] {
				if g == 2 && s.pending < s.total/4 {
					continue
				}
				st.GC = append(st.GC, s.collect(g, now, false))
				break
			}
		}
	}
	if s.manual > 0 && (now+1)%s.manual == 0 {
		st.GC = append(st.GC, s.collect(2, now+1, true))
		st.Scheduled = true
	}
	st.Count = s.count
	rss := int64(s.base + s.objSize*float64(s.live()) + s.leakPerStep*float64(now))
	st.RSS = &rss
	return st
}

func (s *gcSim) stream(policy string, steps int) *bench.Stream {
	th := []int{int(s.th[0]), int(s.th[1]), int(s.th[2])}
	st := &bench.Stream{Meta: &bench.Meta{Python: bench.PythonInfo{Version: "3.11.2", Implementation: "CPython"}, Policy: policy,
		GC: bench.GCState{Enabled: s.enabled, Thresholds: th}}}
	for i := range steps {
		st.Steps = append(st.Steps, s.step(i))
	}
	return st
}

func firstFull(s *bench.Stream) int {
	for i, st := range s.Steps {
		for _, e := range st.GC {
			if e.Gen == 2 {
				return i + 1 // measured steps up to and with it
			}
		}
	}
	return 0
}

// TestMemoryFromCollector: the memory class from the collector's own
// accounting, on records of known truth, at a run length RSS alone cannot
// decide (200 steps: RSS says undecided under 500).
func TestMemoryFromCollector(t *testing.T) {
	const steps = 200
	def := [3]int64{700, 10, 10}
	t.Run("disabled grows, exactly the objects a step", func(t *testing.T) {
		s := newSim(def, false, 2403, 8, 200_000)
		m := Summarize(s.stream("disabled", steps), DefaultSpikeRule).RSS
		if m.Class != MemGrows || m.Collector.PerStep != 2403 {
			t.Fatalf("class %s, %v objects a step; want grows, 2403", m.Class, m.Collector.PerStep)
		}
		if !strings.Contains(m.Reason(), "2,403 tracked objects a step never freed") {
			t.Errorf("reason %q", m.Reason())
		}
	})
	t.Run("default's full collections free it: bounded, a heap that fills once and plateaus", func(t *testing.T) {
		s := newSim(def, true, 2403, 8, 200_000)
		sum := Summarize(s.stream("default", steps), DefaultSpikeRule)
		m := sum.RSS
		if m.Class != MemBounded || m.RSSClass != MemUndecided {
			t.Fatalf("class %s (RSS alone %s); want bounded (RSS undecided at %d steps)", m.Class, m.RSSClass, steps)
		}
		if sum.Collections[2] < 3 || !strings.Contains(m.Reason(), "full collections every ~") {
			t.Errorf("%d full collections, reason %q", sum.Collections[2], m.Reason())
		}
	})
	t.Run("manual:50 bounded", func(t *testing.T) {
		s := newSim(def, false, 2403, 8, 200_000)
		s.manual = 50
		m := Summarize(s.stream("manual:50", steps), DefaultSpikeRule).RSS
		if m.Class != MemBounded || !strings.Contains(m.Reason(), "every ~50 steps") {
			t.Fatalf("class %s, reason %q", m.Class, m.Reason())
		}
	})
	t.Run("a leak outside the collector stays grows from RSS", func(t *testing.T) {
		s := newSim(def, true, 2403, 8, 200_000)
		s.leakPerStep = 1 << 20 // the worker's --leak-kib-per-step 1024
		m := Summarize(s.stream("default", steps), DefaultSpikeRule).RSS
		if m.Class != MemGrows || m.Collector.Class != MemBounded || !(m.Outside > 900<<20 && m.Outside < 1100<<20) {
			t.Fatalf("class %s (collector %s), outside %s per 1000 steps; want grows, collector bounded, ~1 GiB", m.Class, m.Collector.Class, Bytes(m.Outside))
		}
		if !strings.Contains(m.Reason(), "outside the collector's view") {
			t.Errorf("reason %q", m.Reason())
		}
	})
	t.Run("a gen-2 threshold that has not fired grows until the predicted step", func(t *testing.T) {
		s := newSim([3]int64{700, 10, 100}, true, 2403, 8, 200_000)
		long := s.stream("threshold:700,10,100", 1200)
		truth := firstFull(long)
		if truth < steps || truth > 1200 {
			t.Fatalf("the simulation's first full collection is at %d: the test needs one after %d", truth, steps)
		}
		short := &bench.Stream{Meta: long.Meta, Steps: long.Steps[:steps]}
		m := Summarize(short, DefaultSpikeRule).RSS
		f := m.Collector
		if m.Class != MemGrows || f.NextFull == 0 || f.Deferred {
			t.Fatalf("class %s, next full %d (deferred %v); want grows with a prediction", m.Class, f.NextFull, f.Deferred)
		}
		// The young-collection rate is an average over the run: a step
		// either side of the truth.
		if d := f.NextFull - truth; d < -2 || d > 2 {
			t.Errorf("predicted the first full collection at step %d, it came at %d", f.NextFull, truth)
		}
		peak := float64(*long.Steps[truth-2].RSS)
		if math.Abs(f.PeakAtNext-peak) > 0.05*peak {
			t.Errorf("predicted peak %s by then, the run reached %s", Bytes(f.PeakAtNext), Bytes(peak))
		}
	})
	t.Run("default on a run shorter than its first full collection: bounded at the predicted peak", func(t *testing.T) {
		// smoke's shape: few objects a step survive young collections, so
		// the first full collection comes after the run, the heap near its
		// peak by then.
		s := newSim(def, true, 400, 8, 200_000)
		long := s.stream("default", 1200)
		truth := firstFull(long)
		const short = 100
		if truth <= short {
			t.Fatalf("the simulation's first full collection is at %d: the test needs one after %d", truth, short)
		}
		m := Summarize(&bench.Stream{Meta: long.Meta, Steps: long.Steps[:short]}, DefaultSpikeRule).RSS
		f := m.Collector
		if m.Class != MemBounded || f.NextFull == 0 || f.PeakAtNext > (1+FillBound)*m.Peak {
			t.Fatalf("class %s, next full %d, peak by then %s (now %s); want bounded with a prediction", m.Class, f.NextFull, Bytes(f.PeakAtNext), Bytes(m.Peak))
		}
		// The prediction is gen 2's threshold's, the earliest a full
		// collection can come; CPython's 25% rule held this one back, and
		// the same rule bounds what piles up meanwhile.
		if f.NextFull > truth {
			t.Errorf("predicted the first full collection at step %d, after it came (%d)", f.NextFull, truth)
		}
		if at := float64(*long.Steps[truth-2].RSS); at > (1+FillBound)*m.Peak {
			t.Errorf("the heap reached %s before the full collection, over %s above the short run's peak %s", Bytes(at), Pct(FillBound), Bytes(m.Peak))
		}
		if !strings.Contains(m.Reason(), "predicted at step") || !strings.Contains(m.Reason(), "piles up no further") {
			t.Errorf("reason %q", m.Reason())
		}
	})
	t.Run("the 25% rule holding a full collection back", func(t *testing.T) {
		// A huge long-lived heap: gen 2's count passes its threshold long
		// before a quarter of the heap is pending.
		s := newSim(def, true, 2403, 8, 50_000_000)
		m := Summarize(s.stream("default", steps), DefaultSpikeRule).RSS
		if m.Class != MemGrows || !m.Collector.Deferred || !strings.Contains(m.Reason(), "25% rule") {
			t.Fatalf("class %s, deferred %v, reason %q", m.Class, m.Collector.Deferred, m.Reason())
		}
	})
	t.Run("no meta: RSS alone", func(t *testing.T) {
		s := newSim(def, false, 2403, 8, 200_000)
		st := s.stream("disabled", steps)
		st.Meta = nil
		m := Summarize(st, DefaultSpikeRule).RSS
		if m.Collector != nil || m.Class != MemUndecided {
			t.Fatalf("class %s, collector %+v; want RSS's undecided", m.Class, m.Collector)
		}
	})
}

func TestYoungUntilFull(t *testing.T) {
	// From a fresh full collection, default's thresholds: gen 1 every 12
	// young collections (11 gen-0 ones take gen 1's count past 10), gen 2
	// after 11 gen-1 ones.
	k, ok := youngUntilFull([3]int64{0, 0, 0}, []int{700, 10, 10})
	if !ok || k != 11*12+1 {
		t.Fatalf("got %d %v, want %d", k, ok, 11*12+1)
	}
	if _, ok := youngUntilFull([3]int64{0, 0, 11}, []int{700, 10, 10}); ok {
		t.Fatal("past the threshold: the 25% rule decides, not the count")
	}
}

// TestMultiRankMemoryFromCollector: a multi-rank run's memory is its ranks'
// accounting, the worst of them: one rank's leak outside the collector
// makes the run grow though every rank's collector frees its garbage.
func TestMultiRankMemoryFromCollector(t *testing.T) {
	def := [3]int64{700, 10, 10}
	ranks := func(leak float64) []*bench.Stream {
		var out []*bench.Stream
		for r := range 2 {
			s := newSim(def, true, 2403, 8, 200_000)
			if r == 1 {
				s.leakPerStep = leak
			}
			out = append(out, s.stream("default", 200))
		}
		return out
	}
	sum, _ := MultiRank(ranks(0), DefaultSpikeRule)
	if sum.RSS.Class != MemBounded || sum.RSS.Collector == nil {
		t.Fatalf("no leak: class %s, collector %v; want bounded from the collector", sum.RSS.Class, sum.RSS.Collector)
	}
	sum, _ = MultiRank(ranks(1<<20), DefaultSpikeRule)
	if sum.RSS.Class != MemGrows || !strings.Contains(sum.RSS.Reason(), "outside the collector's view") {
		t.Fatalf("rank 1 leaks: class %s, reason %q", sum.RSS.Class, sum.RSS.Reason())
	}
}

// TestManualYoungOnly: manual:N:1 (torchtitan's gc_freq) collects gen 1 on
// schedule with automatic GC off: what is alive at a collection (the last
// retain steps' garbage) is promoted to gen 2, which nothing collects.
func TestManualYoungOnly(t *testing.T) {
	s := newSim([3]int64{700, 10, 10}, false, 1000, 4, 50_000)
	st := &bench.Stream{Meta: &bench.Meta{Python: bench.PythonInfo{Version: "3.11.2", Implementation: "CPython"}, Policy: "manual:50:1",
		GC: bench.GCState{Enabled: false, Thresholds: []int{700, 10, 10}}}}
	for i := range 150 {
		x := s.step(i)
		if (i+1)%50 == 0 {
			x.GC = append(x.GC, s.collect(1, i+1, true))
			x.Scheduled = true
			x.Count = s.count
		}
		st.Steps = append(st.Steps, x)
	}
	m := Summarize(st, DefaultSpikeRule).RSS
	f := m.Collector
	// 4 steps' garbage of every 50 survives: 80 objects a step.
	if m.Class != MemGrows || f == nil || f.PerStep < 60 || f.PerStep > 100 || !strings.Contains(m.Reason(), "nothing collects gen 2") {
		t.Fatalf("class %s, %+v", m.Class, f)
	}
}

// TestYoungCollectionsFreeIt: garbage that dies within the step is freed
// by young collections; a stray object a step seeming to survive (the
// count rebuilt across resets) is not growth.
func TestYoungCollectionsFreeIt(t *testing.T) {
	// retain -1: each object is garbage the moment it is made.
	s := newSim([3]int64{700, 10, 10}, true, 1600, -1, 5_000_000)
	st := s.stream("default", 60)
	for _, x := range st.Steps[1:] {
		x.Count[0]++ // one uncounted object a step
	}
	m := Summarize(st, DefaultSpikeRule).RSS
	if m.Class != MemBounded || !strings.Contains(m.Reason(), "young collections free the cyclic garbage") {
		t.Fatalf("class %s, reason %q", m.Class, m.Reason())
	}
}

// TestLeakBesideYoungCollections: garbage the young collections free, and
// a leak the collector cannot see (the worker's --leak-kib-per-step): no
// full collection leaves a trough to compare, so RSS's own climb through
// the run says it, at a length where RSS alone would not decide.
func TestLeakBesideYoungCollections(t *testing.T) {
	s := newSim([3]int64{700, 10, 10}, true, 1600, -1, 5_000_000)
	s.leakPerStep = 512 << 10
	m := Summarize(s.stream("default", 200), DefaultSpikeRule).RSS
	if m.Class != MemGrows || m.Collector.Class != MemBounded || m.RSSClass != MemUndecided || !strings.Contains(m.Reason(), "outside the collector's view") {
		t.Fatalf("class %s (collector %s, RSS alone %s), reason %q", m.Class, m.Collector.Class, m.RSSClass, m.Reason())
	}
}

// Runs that split only on how far the heap climbs by a predicted full
// collection (one short run's RSS slope is noisy) are pooled on their
// medians, not left undecided.
func TestPoolMemFillBoundTogether(t *testing.T) {
	run := func(peak, atNext float64) *Mem {
		f := &Freeing{Class: MemGrows, NextFull: 159, PeakAtNext: atNext, PerStep: 246, Why: "grows"}
		if atNext <= (1+FillBound)*peak {
			f.Class, f.Why = MemBounded, "bounded"
		}
		return &Mem{Peak: peak, Class: f.Class, Collector: f}
	}
	const mib = 1 << 20
	if p := PoolMem([]*Mem{run(400*mib, 450*mib), run(400*mib, 520*mib)}, 40); p.Class != MemBounded || p.Why != "bounded" {
		t.Errorf("medians 485 MiB by then against 400 MiB: class %s (%q), want bounded", p.Class, p.Why)
	}
	if p := PoolMem([]*Mem{run(400*mib, 490*mib), run(400*mib, 900*mib)}, 40); p.Class != MemGrows || p.Why != "grows" {
		t.Errorf("medians 695 MiB by then against 400 MiB: class %s (%q), want grows", p.Class, p.Why)
	}
}
