package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
)

// Freeing is what the collector did with the cyclic garbage a run's steps
// made, from its own accounting: gc.get_count() after every step, and the
// generation and the objects freed of every collection. It is exact and
// does not depend on the host's speed, so it decides a run's memory class
// at any length where it is observed; RSS only gives the bytes.
type Freeing struct {
	// Class is the collector's side alone: grows (tracked objects
	// accumulate and nothing frees them, or not before NextFull), bounded
	// (full collections fire and free them), "" where the records cannot
	// tell (MemCollector says which).
	Class MemClass
	// Why says it in the collector's words.
	Why string
	// PerStep is the tracked objects a step adds that no collection in
	// the run freed (0 when they are freed).
	PerStep float64 `json:",omitempty"`
	// Fulls is the full (gen-2) collections of the measured steps, Every
	// the steps between them (0 with fewer than 2), Freed the objects
	// each freed (their mean).
	Fulls int     `json:",omitempty"`
	Every float64 `json:",omitempty"`
	Freed float64 `json:",omitempty"`
	// NextFull is, where no full collection ran, the measured step at
	// which the thresholds and the counts predict the first (a manual
	// policy: its first scheduled one); 0 when none is predicted.
	// PeakAtNext is the RSS that step reaches at the run's RSS growth.
	NextFull   int     `json:",omitempty"`
	PeakAtNext float64 `json:",omitempty"`
	// Deferred: the count rule for a full collection held but none ran:
	// CPython's 25% rule (long_lived_pending < long_lived_total/4) held
	// it back, and when it lets one through the counts do not say.
	Deferred bool `json:",omitempty"`
}

// minObjectBytes is the least memory a tracked object holds (a GC header
// and the smallest tracked object, 64-bit CPython): what objects that are
// never freed cost where RSS has not shown them yet.
const minObjectBytes = 56

// youngNoise is the share of the tracked objects a step makes that may
// seem to survive young collections without any accumulating: gen 0's
// count is rebuilt across its resets as threshold+1 a collection (3.12
// and later collect a little past it), and deallocations while it is 0
// go uncounted.
const youngNoise = 0.01

// fullTroughCap bounds the RSS samples kept at full collections; past
// it every other one is dropped, as memSeriesCap does.
const fullTroughCap = 512

// collectorTrack accumulates a run's collector accounting step by step.
type collectorTrack struct {
	steps                int
	first, last          [3]int64
	young, manualYoung   int   // automatic young collections; the policy's young ones
	youngFreed           int64 // objects the young collections (both) freed
	fulls                int
	firstFull, lastFull  int
	freedFull            int64
	deltas               []float64 // per step without a manual collection: tracked objects it added
	troughs, troughSteps []float64 // RSS after each full collection, and its step
	troughStride         int
	t0                   int64 // gen-0 threshold (set before the first step)
	inferred             bool  // some generation was not recorded
}

// add takes measured step i.
func (t *collectorTrack) add(i int, st *bench.Step) {
	if t.steps == 0 {
		t.first = st.Count
	}
	prev := t.last
	t.steps++
	t.last = st.Count
	auto, manual, full := 0, false, false
	for _, e := range st.GC {
		switch {
		case e.GenInferred:
			// An imported trace's generation is a convention, not a fact.
			t.inferred = true
		case e.Gen == 2:
			full = true
			t.freedFull += e.Collected
		case e.Manual:
			t.manualYoung++
			t.youngFreed += e.Collected
		default:
			t.young++
			t.youngFreed += e.Collected
		}
		if e.Manual {
			manual = true
		} else {
			auto++
		}
	}
	if full {
		if t.fulls == 0 {
			t.firstFull = i
		}
		t.fulls++
		t.lastFull = i
		if st.RSS != nil {
			t.addTrough(i, float64(*st.RSS))
		}
	}
	// gen-0's count is allocations less deallocations of tracked objects
	// since the last collection, which resets it: an automatic one fires
	// when it passes the threshold, so it had reached threshold+1.
	if i > 0 && !manual {
		t.deltas = append(t.deltas, float64(st.Count[0]-prev[0]+int64(auto)*(t.t0+1)))
	}
}

func (t *collectorTrack) addTrough(i int, rss float64) {
	if t.troughStride == 0 {
		t.troughStride = 1
	}
	if t.fulls%t.troughStride != 0 {
		return
	}
	t.troughs, t.troughSteps = append(t.troughs, rss), append(t.troughSteps, float64(i))
	if len(t.troughs) >= 2*fullTroughCap {
		t.troughStride *= 2
		for k := 0; 2*k < len(t.troughs); k++ {
			t.troughs[k], t.troughSteps[k] = t.troughs[2*k], t.troughSteps[2*k]
		}
		t.troughs, t.troughSteps = t.troughs[:(len(t.troughs)+1)/2], t.troughSteps[:(len(t.troughSteps)+1)/2]
	}
}

// generational reports whether meta's interpreter has the collector this
// accounting describes: CPython 3.8 to 3.13 with the GIL, three
// generations, gen-2 gated by its threshold and the 25% rule. 3.14's
// incremental collector and the free-threaded one count otherwise.
func generational(meta *bench.Meta) bool {
	if meta == nil || meta.Python.FreeThreaded || meta.Python.Implementation != "" && meta.Python.Implementation != "CPython" {
		return false
	}
	f := strings.SplitN(meta.Python.Version, ".", 3)
	if len(f) < 2 || f[0] != "3" {
		return false
	}
	minor, err := strconv.Atoi(f[1])
	return err == nil && minor >= 8 && minor <= 13
}

// result is the run's Freeing; nil where the records do not show the
// mechanism (no meta, another collector, no counts, a traced run's
// inferred generations). rss is the run's RSS summary, for the bytes.
func (t *collectorTrack) result(meta *bench.Meta, rss *Mem, rssLast float64) *Freeing {
	if t.steps < 2 || t.inferred || !generational(meta) || len(meta.GC.Thresholds) < 3 || t.first == [3]int64{} && t.last == [3]int64{} {
		return nil
	}
	pol, _ := bench.ParsePolicy(meta.Policy)
	th := meta.GC.Thresholds
	perStep := math.NaN()
	if len(t.deltas) > 0 {
		d := slices.Clone(t.deltas)
		slices.Sort(d)
		perStep = Quantile(d, 0.5)
	}
	f := &Freeing{Fulls: t.fulls}
	if t.fulls > 0 {
		f.Freed = float64(t.freedFull) / float64(t.fulls)
	}
	if t.fulls >= 2 {
		f.Every = float64(t.lastFull-t.firstFull) / float64(t.fulls-1)
	}
	switch {
	case t.fulls > 0:
		// Full collections fire. They keep firing when the run's end is
		// within a few periods of the last one.
		if f.Every > 0 && float64(t.steps-1-t.lastFull) > 3*f.Every+1 {
			return nil
		}
		f.Class = MemBounded
		switch {
		case t.freedFull == 0:
			f.Why = fmt.Sprintf("%s ran with no cyclic garbage to free", fullsText(f))
		case f.Every > 0:
			f.Why = fmt.Sprintf("%s free %s objects each: the garbage does not accumulate", fullsText(f), objectCount(f.Freed))
		default:
			f.Why = fmt.Sprintf("its full collection (step %d) freed %s objects: the garbage does not outlive it", t.firstFull+1, objectCount(f.Freed))
		}
	case t.young == 0 && t.manualYoung == 0:
		// No collection at all: the collector is off (disabled, manual:N
		// before its first), or its gen-0 threshold was not reached.
		if math.IsNaN(perStep) || perStep <= 0.5 {
			f.Class, f.Why = MemBounded, "no collection ran and no tracked objects accumulate"
			break
		}
		f.Class, f.PerStep = MemGrows, perStep
		switch {
		case pol.ManualEvery > 0 && pol.ManualGen == 2:
			f.NextFull = pol.ManualEvery
			f.Why = fmt.Sprintf("%s tracked objects a step accumulate until its first scheduled full collection (step %d)", objectCount(perStep), pol.ManualEvery)
		case meta.GC.Enabled && th[0] > 0:
			f.Why = fmt.Sprintf("%s tracked objects a step, and the gen-0 threshold (%d) was never reached", objectCount(perStep), th[0])
		default:
			f.Why = fmt.Sprintf("%s tracked objects a step never freed: the collector is off", objectCount(perStep))
		}
	default:
		// Young collections only: what survives them is promoted and
		// waits for a full collection.
		acc := perStep - float64(t.youngFreed)/float64(t.steps)
		if math.IsNaN(acc) || acc <= 0.5 {
			f.Class, f.Why = MemBounded, "young collections free the cyclic garbage: no tracked objects accumulate"
			break
		}
		if acc <= youngNoise*perStep {
			// Within what rebuilding the count across collections can
			// tell: a frame or two a step, which the next full collection
			// frees whenever it comes.
			f.Class, f.Why = MemBounded, fmt.Sprintf("young collections free the cyclic garbage: all but about %s of the %s tracked objects a step makes", objectCount(acc), objectCount(perStep))
			break
		}
		f.Class, f.PerStep = MemGrows, acc
		if t.manualYoung > 0 && t.young == 0 {
			f.Why = fmt.Sprintf("about %s tracked objects a step survive its scheduled young collections and nothing collects gen 2: never freed", objectCount(acc))
			break
		}
		rate := float64(t.young) / float64(t.steps)
		k, ok := youngUntilFull(t.last, th)
		if !ok {
			f.Deferred = true
			f.Why = fmt.Sprintf("about %s tracked objects a step survive young collections; gen 2's count (%d) is past its threshold (%d) but no full collection ran: CPython's 25%% rule (long_lived_pending < long_lived_total/4) holds it back", objectCount(acc), t.last[2], th[2])
			break
		}
		f.NextFull = t.steps + int(math.Ceil(float64(k)/rate))
		f.Why = fmt.Sprintf("about %s tracked objects a step survive young collections and wait for a full collection, predicted at step %d by gen 2's threshold (its count %d of the %d needed, %.3g gen-1 collections a step; later if CPython's 25%% rule holds it back)",
			objectCount(acc), f.NextFull, t.last[2], th[2]+1, rate/float64(th[1]+2))
	}
	if f.NextFull > 0 && rss != nil {
		per := rssPerStep(rss, f.PerStep)
		f.PeakAtNext = math.Max(rss.Peak, rssLast+per*float64(f.NextFull-t.steps))
		f.Why += fmt.Sprintf(", by when RSS reaches %s", Bytes(f.PeakAtNext))
		if f.Class == MemGrows && rss.Peak > 0 && f.PeakAtNext <= (1+FillBound)*rss.Peak {
			// The full collection frees what accumulated before it, and
			// it comes soon enough that the heap stays near what the runs
			// measured: a sawtooth whose period the counts predict, not
			// growth (default on a run shorter than its first full
			// collection). A threshold that lets gigabytes pile up first
			// stays grows, with its step and peak.
			f.Class = MemBounded
			f.Why += fmt.Sprintf(", within %s of the runs' peak (%s): the garbage piles up no further before it is freed", strings.TrimPrefix(Pct(FillBound), "+"), Bytes(rss.Peak))
		}
	}
	return f
}

// FillBound is how far above the measured peak the heap may climb before
// a predicted full collection frees it, for memory to be bounded: CPython's
// own rule lets the long-lived heap grow by a quarter before a full
// collection (long_lived_pending > long_lived_total/4).
const FillBound = 0.25

// rssPerStep is the bytes a step adds while garbage accumulates: the run's
// RSS growth, or at least what the objects themselves hold.
func rssPerStep(rss *Mem, objects float64) float64 {
	per := rss.Growth / 1000
	if math.IsNaN(per) || per < objects*minObjectBytes {
		per = objects * minObjectBytes
	}
	return per
}

// youngUntilFull is how many more automatic collections fire until one is
// a full collection, from the counts c after the run's last step and the
// thresholds th, by CPython's rule (3.8-3.13, gc_collect_generations): at
// each trigger the oldest generation whose count exceeds its threshold is
// collected; a gen-N collection adds one to gen N+1's count and zeroes
// its own and the younger ones'. ok is false when gen 2's count already
// exceeds its threshold: the 25% rule is what holds it back.
func youngUntilFull(c [3]int64, th []int) (k int64, ok bool) {
	t1, t2 := int64(th[1]), int64(th[2])
	if c[2] > t2 {
		return 0, false
	}
	c1, c2 := c[1], c[2]
	for k = 1; ; k++ {
		switch {
		case c2 > t2:
			return k, true
		case c1 > t1:
			c1, c2 = 0, c2+1
		default:
			c1++
		}
	}
}

// fullsText says how often the full collections came.
func fullsText(f *Freeing) string {
	if f.Every > 0 {
		return fmt.Sprintf("full collections every ~%.0f steps", f.Every)
	}
	return "its full collection"
}

// objectCount prints an object count: "2,403", "85,917".
func objectCount(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// outsideGrowth is, for a run whose collector frees its garbage, how fast
// the heap its full collections leave climbs (bytes per 1000 steps): RSS
// at each full collection rising steadily, by more than an arena each
// time, is memory the collector does not see (a leak of untracked
// objects, or an allocator keeping what was freed). 0 when it holds.
func (t *collectorTrack) outsideGrowth() float64 {
	if len(t.troughs) < 3 {
		return 0
	}
	var rises []float64
	for k := 1; k < len(t.troughs); k++ {
		rises = append(rises, (t.troughs[k]-t.troughs[k-1])/(t.troughSteps[k]-t.troughSteps[k-1]))
	}
	slices.Sort(rises)
	lo, hi := rises[0], rises[len(rises)-1]
	gap := (t.troughSteps[len(t.troughSteps)-1] - t.troughSteps[0]) / float64(len(rises))
	// Every rise is over an arena, and the least is not a small part of
	// the most: a climb that persists, not a heap that settled once.
	if lo*gap <= memNoiseFloor || lo < 0.25*hi {
		return 0
	}
	return 1000 * Quantile(rises, 0.5)
}

// decide makes the collector's accounting f the run's memory class, with
// RSS as the cross-check: garbage that accumulates grows whatever RSS
// says (it is exact); where the collector frees it, memory still grows
// when RSS does (RSS's own class, or the heap full collections leave
// climbing at outside bytes per 1000 steps): a leak the collector cannot
// see stays grows.
func (m *Mem) decide(f *Freeing, outside float64) {
	if f == nil || f.Class == "" {
		return
	}
	m.Collector, m.RSSClass = f, m.Class
	switch {
	case f.Class == MemGrows:
		m.Class, m.StepsNeeded = MemGrows, 0
		if !(m.GrowthLo > 0) {
			// RSS has not shown it yet (arenas still had room): the
			// objects themselves are the least it costs.
			b := 1000 * f.PerStep * minObjectBytes
			m.GrowthLo, m.GrowthHi = b, math.Max(b, nanTo(m.GrowthHi, b))
		}
	case m.RSSClass == MemGrows || outside > 0 || m.Climbs && f.Fulls == 0:
		// A climb of RSS is memory outside the collector's view only
		// where no garbage waits for a full collection: with one or two
		// full collections in the run, the garbage between them climbs
		// too (the troughs, outside, judge three or more).
		if outside == 0 && m.RSSClass != MemGrows {
			outside = m.Growth
		}
		m.Class, m.StepsNeeded, m.Outside = MemGrows, 0, outside
		if outside > 0 && !(m.GrowthLo > 0) {
			m.GrowthLo, m.GrowthHi = outside, math.Max(outside, nanTo(m.GrowthHi, outside))
		}
	default:
		m.Class, m.StepsNeeded = MemBounded, 0
	}
}

func nanTo(x, y float64) float64 {
	if math.IsNaN(x) {
		return y
	}
	return x
}

// Reason says what the run's memory does and why: the collector's words,
// and RSS where it disagrees. "" where the collector's accounting was not
// observed.
func (m *Mem) Reason() string {
	f := m.Collector
	if f == nil {
		return ""
	}
	why := f.Why
	switch {
	case f.Class == MemBounded && m.Class == MemGrows:
		g := m.Outside
		if !(g > 0) {
			g = m.Growth
		}
		why += fmt.Sprintf("; but RSS grows %s per 1000 steps: memory outside the collector's view (untracked objects kept, or an allocator keeping what was freed)", Bytes(g))
	case f.Class == MemGrows && m.RSSClass == MemBounded:
		why += "; RSS has not shown it yet (bounded over the run)"
	}
	return why
}
