package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"
)

// Mem is what a run's memory did over its measured steps: host RSS or
// device memory, from the per-step samples the worker records.
type Mem struct {
	// Peak is the largest sample, in bytes.
	Peak float64
	// Growth is a robust slope in bytes per 1000 steps of what the
	// collections leave: the Theil-Sen slope (TheilSen) of the series' lower
	// envelope (a sliding minimum over a quarter of the run) in the second
	// half of the measured steps. The first half fills the heap to its
	// steady state: a case's warm-up is sized for its GC schedule, not its
	// memory. The envelope is the heap after each collection, which a leak
	// raises and a sawtooth does not: on ascend-gpt-periodic-gc's default
	// (RSS climbs 285 -> 400 MiB in 45 steps, then saws 390-425 MiB with
	// each full collection, every 39 steps) a slope of every step reads
	// 133 MiB per 1000 steps, of the second half 36, of its envelope 0 (at
	// -reduced, 270 steps: 0 B in 2 runs of 2026-12-05);
	// disabled reads 2.95 GiB either way. A median ignores the
	// sawtooth a collector makes and a lone jump (an arena, a page-in); a
	// least-squares line would follow them.
	Growth float64
	// Samples is how many measured steps had a sample; Growth needs 2.
	Samples int
	// GrowthLo and GrowthHi bound the growth (bytes per 1000 steps) with
	// 90% confidence: Sen's rank interval of the Theil-Sen slope of the
	// second half's block floors (memBlocks blocks, each its lowest
	// sample: the heap a collection left). A floor per block rather than
	// per step, because neighbouring steps of a sawtooth are not
	// independent and a per-step interval would be far too narrow.
	GrowthLo, GrowthHi float64 `json:",omitempty"`
	// Class says what the growth is, judged with the run's own noise
	// (MemClass); StepsNeeded, for an undecided one, is about how many
	// measured steps a run needs to decide it.
	Class       MemClass `json:",omitempty"`
	StepsNeeded int      `json:",omitempty"`
	// Resolution is the least growth (bytes per 1000 steps) the class
	// could see: the noise over a quarter of the run. A bounded heap is
	// bounded to within it; a slower leak would not show.
	Resolution float64 `json:",omitempty"`
	// Collector is the collector's accounting of the run (Freeing): where
	// present it decides Class, and RSSClass keeps what RSS alone said.
	// Outside is the growth (bytes per 1000 steps) of the heap the full
	// collections leave, where it climbs while they free the garbage:
	// memory outside the collector's view.
	Collector *Freeing `json:",omitempty"`
	RSSClass  MemClass `json:",omitempty"`
	Outside   float64  `json:",omitempty"`
	// Climbs: RSS's floor climbs through the run's second half as growth
	// does, at whatever length (the class waits for MinStepsGrowth, as a
	// heap still filling looks alike; where the collector shows its
	// garbage freed, a climb is memory outside its view). Kept in the
	// summary file, so a summary read back classes as the one written.
	Climbs bool `json:",omitempty"`
}

// memJSON is Mem as JSON holds it: a figure that could not be made (NaN:
// too few points for a slope or an interval) is null, as JSON has no NaN.
type memJSON struct {
	Peak               float64
	Growth             *float64
	Samples            int
	GrowthLo, GrowthHi *float64 `json:",omitempty"`
	Class              MemClass `json:",omitempty"`
	StepsNeeded        int      `json:",omitempty"`
	Resolution         float64  `json:",omitempty"`
	Collector          *Freeing `json:",omitempty"`
	RSSClass           MemClass `json:",omitempty"`
	Outside            float64  `json:",omitempty"`
	Climbs             bool     `json:",omitempty"`
}

// Finite is x, or nil for NaN and the infinities, which JSON cannot hold:
// the one home for a figure that may not have been made.
func Finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func nullNaN(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// MarshalJSON writes m with its NaN figures as null (memJSON).
func (m Mem) MarshalJSON() ([]byte, error) {
	return json.Marshal(memJSON{Peak: m.Peak, Growth: Finite(m.Growth), Samples: m.Samples, GrowthLo: Finite(m.GrowthLo), GrowthHi: Finite(m.GrowthHi),
		Class: m.Class, StepsNeeded: m.StepsNeeded, Resolution: m.Resolution, Collector: m.Collector, RSSClass: m.RSSClass, Outside: m.Outside, Climbs: m.Climbs})
}

// UnmarshalJSON reads what MarshalJSON wrote: null, or a figure absent
// (a summary made before it existed), is NaN.
func (m *Mem) UnmarshalJSON(data []byte) error {
	var j memJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*m = Mem{Peak: j.Peak, Growth: nullNaN(j.Growth), Samples: j.Samples, GrowthLo: nullNaN(j.GrowthLo), GrowthHi: nullNaN(j.GrowthHi),
		Class: j.Class, StepsNeeded: j.StepsNeeded, Resolution: j.Resolution, Collector: j.Collector, RSSClass: j.RSSClass, Outside: j.Outside, Climbs: j.Climbs}
	return nil
}

// MemClass is what a run's memory does, as far as its steps can tell.
type MemClass string

const (
	// MemGrows: the growth interval excludes 0, the last quarter's floor
	// is above the third's by more than the noise, and the floor climbs
	// through the last half rather than once: growth that persists.
	MemGrows MemClass = "grows"
	// MemBounded: the last quarter's floor is no higher than the third's,
	// within the noise: the heap stopped rising (a collector's sawtooth, a
	// frozen set that filled).
	MemBounded MemClass = "bounded"
	// MemUndecided: neither; the run is too short for its noise.
	MemUndecided MemClass = "undecided"
)

// memBlocks is how many blocks the second half is cut into for the growth
// interval: 8 floors give Sen's 90% interval 28 slopes, between the 7th
// and the 22nd, and each block still spans a full collection's sawtooth
// in a run of 800 steps (a period up to 50 steps).
const memBlocks = 8

// memNoiseFloor is the least rise between quarters that counts as growth
// (bytes): RSS moves by an allocator arena even on a heap that does not
// grow, and pymalloc's arenas are 1 MiB since CPython 3.10.
const memNoiseFloor = 1 << 20

// memSeriesCap bounds the points a run keeps for its slope: the series is
// thinned (every other point dropped, the stride doubled) when it reaches
// twice this, so a million-step run costs what a 400-step run does, and
// Theil-Sen's n^2/2 slopes stay under 80,000.
const memSeriesCap = 200

// memTrack accumulates one memory series, step by step.
type memTrack struct {
	peak    float64
	lastY   float64 // the last sample
	samples int
	stride  int
	x, y    []float64 // kept points: measured-step index, bytes
}

// add takes the sample of measured step i (nil: none recorded).
func (t *memTrack) add(i int, v *int64) {
	if v == nil {
		return
	}
	b := float64(*v)
	t.peak, t.lastY = math.Max(t.peak, b), b
	t.samples++
	if t.stride == 0 {
		t.stride = 1
	}
	if i%t.stride != 0 {
		return
	}
	t.x, t.y = append(t.x, float64(i)), append(t.y, b)
	if len(t.x) >= 2*memSeriesCap {
		t.stride *= 2
		keep := 0
		for j := range t.x {
			if int(t.x[j])%t.stride == 0 {
				t.x[keep], t.y[keep] = t.x[j], t.y[j]
				keep++
			}
		}
		t.x, t.y = t.x[:keep], t.y[:keep]
	}
}

// result is the series' summary; nil when no step had a sample (a run on
// a CPU has no device memory: the metric is not reported for it).
func (t *memTrack) result() *Mem {
	if t.samples == 0 {
		return nil
	}
	from, _ := slices.BinarySearch(t.x, t.x[len(t.x)-1]/2)
	x, y := lowerEnvelope(t.x[from:], t.y[from:])
	m := &Mem{Peak: t.peak, Growth: 1000 * TheilSen(x, y), Samples: t.samples}
	m.classify(t.x[from:], t.y[from:], x, y, t.x[len(t.x)-1]+1)
	return m
}

// classify sets the growth interval and the class of a run of steps
// measured steps, from its second half's points (x the measured step, y
// bytes) and their lower envelope (ex, ey: the floor of each window of a
// quarter of the run; the first window is the third quarter, the last
// the fourth).
func (m *Mem) classify(x, y, ex, ey []float64, steps float64) {
	m.Class, m.GrowthLo, m.GrowthHi = MemUndecided, math.NaN(), math.NaN()
	if len(x) < 2*memBlocks || len(ey) < 2 {
		// Too few points for a floor per block (a short or sparsely
		// sampled run).
		m.StepsNeeded = int(max(MinStepsGrowth, 2*steps))
		return
	}
	x0, span := x[0], x[len(x)-1]-x[0]+1
	bx, by := make([]float64, memBlocks), make([]float64, memBlocks)
	for k := range by {
		by[k] = math.Inf(1)
		bx[k] = x0 + span*(float64(k)+0.5)/memBlocks
	}
	for i := range x {
		k := min(memBlocks-1, int(float64(memBlocks)*(x[i]-x0)/span))
		by[k] = math.Min(by[k], y[i])
	}
	b, lo, hi := TheilSenInterval(bx, by, 0.90)
	// The point (the envelope's slope) and the interval (the block
	// floors') are two estimators: on a clean ramp the floors' interval
	// closes to a point beside the envelope's (344 MiB [353, 353] on a
	// Lightning loop with the collector off). The interval is widened to
	// hold the point, never narrowed: only more cautious.
	m.GrowthLo, m.GrowthHi = 1000*lo, 1000*hi
	if !math.IsNaN(m.Growth) {
		m.GrowthLo, m.GrowthHi = min(m.GrowthLo, m.Growth), max(m.GrowthHi, m.Growth)
	}
	// The noise of a quarter's floor: the envelope's scatter about its
	// own line (robustly: 1.4826 median absolute deviations), twice over.
	// The envelope moves only when a window gains or loses a trough, so
	// on a bounded heap this is the troughs' own spread, not the
	// sawtooth's height.
	eb := TheilSen(ex, ey)
	res := make([]float64, len(ey))
	for k := range ey {
		res[k] = ey[k] - eb*(ex[k]-ex[0])
	}
	slices.Sort(res)
	mid := Quantile(res, 0.5)
	for k := range res {
		res[k] = math.Abs(res[k] - mid)
	}
	slices.Sort(res)
	noise := math.Max(2*1.4826*Quantile(res, 0.5), memNoiseFloor)
	rise := ey[len(ey)-1] - ey[0]
	m.Resolution = 1000 * noise / (span / 2)
	// Growth persists when the floor climbs through the last half, not
	// at once: of its climb between the floors of the half's first and
	// last eighths, no one of the three steps between eighths makes more
	// than 60% (a steady climb makes about a third each). A trough that
	// settles up once (an arena kept, a cache filled) makes all of it at
	// one step.
	var climb, steepest float64
	for k := 2; k+1 < memBlocks; k += 2 {
		d := math.Min(by[k], by[k+1]) - math.Min(by[k-2], by[k-1])
		climb, steepest = climb+d, math.Max(steepest, d)
	}
	persists := climb > noise && steepest <= 0.6*climb
	m.Climbs = lo > 0 && rise > noise && persists
	switch {
	case steps < MinStepsGrowth:
		// Under a few collection periods a quarter's floor is not the
		// heap's: a slow leak and a heap still filling look alike.
		m.StepsNeeded = MinStepsGrowth
	case lo > 0 && rise > noise && persists:
		m.Class = MemGrows
	case rise <= noise:
		m.Class = MemBounded
	case b > 0:
		// The interval's half-width shrinks as 1/steps with the floors'
		// noise held: long enough when it no longer reaches 0.
		m.StepsNeeded = int(math.Ceil(1.2 * steps * math.Min(100, (b-lo)/b)))
	default:
		m.StepsNeeded = int(2 * steps)
	}
}

// TheilSenInterval is the Theil-Sen slope of (x, y) with Sen's
// distribution-free interval at confidence conf (two-sided): the slopes
// ranked (N - C)/2 and (N + C)/2 + 1 of the N pairwise slopes, where C is
// the normal quantile times the standard deviation of Kendall's S. NaN
// with fewer than two distinct x.
func TheilSenInterval(x, y []float64, conf float64) (slope, lo, hi float64) {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(slopes)
	n, big := float64(len(x)), float64(len(slopes))
	c := mstats.StdNormal.InvCDF(0.5+conf/2) * math.Sqrt(n*(n-1)*(2*n+5)/18)
	m1 := int(math.Round((big - c) / 2))
	m2 := int(math.Round((big + c) / 2))
	return Quantile(slopes, 0.5), slopes[max(0, m1-1)], slopes[min(len(slopes)-1, m2)]
}

// lowerEnvelope is the sliding minimum of y over half its points, at the
// x of each window's start (a shift that leaves a slope alone).
func lowerEnvelope(x, y []float64) (ex, ey []float64) {
	w := max(1, len(y)/2)
	for k := 0; k+w <= len(y); k++ {
		ex, ey = append(ex, x[k]), append(ey, slices.Min(y[k:k+w]))
	}
	return ex, ey
}

// TheilSen is the median of the slopes of every pair of points with
// distinct x; NaN with fewer than two such points. On a collector's
// sawtooth it leans up (every pair within a tooth climbs): Mem.Growth
// takes it of the sawtooth's lower envelope.
func TheilSen(x, y []float64) float64 {
	s, _, _ := TheilSenInterval(x, y, 0)
	return s
}

// memValue is a memory metric's value, NaN (not reported) where the run
// recorded no such memory.
func memValue(m *Mem, growth bool) float64 {
	switch {
	case m == nil:
		return math.NaN()
	case !growth:
		return m.Peak
	case m.Samples < 2:
		return math.NaN()
	}
	return m.Growth
}

// TimeToLimit is how long memory at peakBytes that grows by
// growthBytesPerKStep every 1000 steps takes to reach limitBytes: in steps,
// and in hours at stepNS per step. Both are +Inf when it does not grow (or
// the limit is unknown) and 0 when the peak is at the limit already.
func TimeToLimit(growthBytesPerKStep, peakBytes, limitBytes, stepNS float64) (steps, hours float64) {
	if !(growthBytesPerKStep > 0) || !(limitBytes > 0) {
		return math.Inf(1), math.Inf(1)
	}
	steps = math.Max(0, 1000*(limitBytes-peakBytes)/growthBytesPerKStep)
	return steps, steps * stepNS / 3.6e12
}

// Bytes prints a size in binary units ("2.9 GiB", "12 MiB", "-3.0 MiB"):
// the one format the tables and the summary lines share.
func Bytes(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return fmt.Sprint(b)
	}
	a := math.Abs(b)
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if a >= u.size {
			v := b / u.size
			if math.Abs(v) >= 100 || v == math.Trunc(v) {
				return fmt.Sprintf("%.0f %s", v, u.name)
			}
			return fmt.Sprintf("%.1f %s", v, u.name)
		}
	}
	return fmt.Sprintf("%.0f B", b)
}

// Hours prints a duration in hours, days past 48 h, "never" for +Inf: the
// time-to-limit column.
func Hours(h float64) string {
	switch {
	case math.IsInf(h, 1) || math.IsNaN(h):
		return "never"
	case h >= 48:
		return fmt.Sprintf("%.1f d", h/24)
	case h >= 1:
		return fmt.Sprintf("%.1f h", h)
	}
	return fmt.Sprintf("%.0f min", h*60)
}

// MemPool is the memory of a policy's runs taken together.
type MemPool struct {
	// Class is grows when more than half the runs grow, bounded when none
	// grows and at least half are bounded (the others undecided: a trough
	// that settled up once looks like that), else undecided ("" when no run
	// has a class: summaries made before classes were).
	Class MemClass
	// Growth is the runs' median growth; Lo and Hi the medians of the
	// interval ends of the runs that decide the class (the growing ones
	// for grows, every run else), bytes per 1000 steps.
	Growth, Lo, Hi float64
	// StepsNeeded, when undecided, is the measured steps a run needs to
	// decide it: the most any undecided run needs, or twice the runs'
	// steps when the runs disagree.
	StepsNeeded int
	// Resolution is the runs' median Mem.Resolution: a bounded pool is
	// bounded to within it.
	Resolution float64
	// Runs, Grows and Bounded count the classified runs.
	Runs, Grows, Bounded int
	// Collector: every classified run's class came from the collector's
	// accounting (Mem.Collector), and Why is the first such run's reason
	// (Mem.Reason; the runs of a policy share a schedule). NextFull is the
	// runs' median predicted step of the first full collection and
	// PeakAtNext the largest RSS predicted by then (0: none predicted);
	// Outside, the median growth outside the collector's view of the runs
	// that showed one.
	Collector  bool
	Deferred   bool // some run's full collection was held back by the 25% rule (Freeing.Deferred)
	Why        string
	NextFull   int
	PeakAtNext float64
	Outside    float64
}

// PoolMem pools the memory of runs of steps measured steps each (the
// longest); nil entries (runs without the memory) are skipped.
func PoolMem(ms []*Mem, steps int) MemPool {
	var p MemPool
	var growth, lo, hi, glo, ghi, res, next, outside, peaks, atNext []float64
	collector, filling := 0, 0 // filling: runs classed by FillBound alone
	whyOf := map[MemClass]string{}
	for _, m := range ms {
		if m == nil || m.Class == "" {
			continue
		}
		p.Runs++
		if f := m.Collector; f != nil {
			collector++
			if p.Why == "" {
				p.Why = m.Reason()
			}
			p.Deferred = p.Deferred || f.Deferred
			if f.NextFull > 0 {
				next = append(next, float64(f.NextFull))
				p.PeakAtNext = math.Max(p.PeakAtNext, f.PeakAtNext)
				if f.Fulls == 0 && f.PerStep > 0 && m.Outside == 0 && m.Class == f.Class {
					filling++
					peaks, atNext = append(peaks, m.Peak), append(atNext, f.PeakAtNext)
					if _, ok := whyOf[m.Class]; !ok {
						whyOf[m.Class] = m.Reason()
					}
				}
			}
		}
		if m.Outside > 0 {
			outside = append(outside, m.Outside)
		}
		growth, lo, hi = append(growth, m.Growth), append(lo, m.GrowthLo), append(hi, m.GrowthHi)
		res = append(res, m.Resolution)
		switch m.Class {
		case MemGrows:
			p.Grows++
			glo, ghi = append(glo, m.GrowthLo), append(ghi, m.GrowthHi)
		case MemBounded:
			p.Bounded++
		case MemUndecided:
			p.StepsNeeded = max(p.StepsNeeded, m.StepsNeeded)
		}
	}
	med := func(xs []float64) float64 {
		xs = slices.DeleteFunc(xs, math.IsNaN)
		if len(xs) == 0 {
			return math.NaN()
		}
		slices.Sort(xs)
		return Quantile(xs, 0.5)
	}
	p.Growth, p.Lo, p.Hi, p.Resolution = med(growth), med(lo), med(hi), med(res)
	p.Collector = p.Runs > 0 && collector == p.Runs
	if len(next) > 0 {
		p.NextFull = int(med(next))
	}
	if len(outside) > 0 {
		p.Outside = med(outside)
	}
	if filling == p.Runs && p.Grows > 0 && p.Bounded > 0 {
		// The runs split only on how far the heap climbs by the predicted
		// full collection (FillBound), which one short run's RSS slope
		// reads noisily: the runs' medians decide it together.
		if med(atNext) <= (1+FillBound)*med(peaks) {
			p.Grows, p.Bounded, p.Why = 0, p.Runs, whyOf[MemBounded]
		} else {
			p.Grows, p.Bounded, p.Why = p.Runs, 0, whyOf[MemGrows]
		}
	}
	switch {
	case p.Runs == 0:
		return p
	case 2*p.Grows > p.Runs:
		p.Class, p.Lo, p.Hi, p.StepsNeeded = MemGrows, med(glo), med(ghi), 0
	case p.Grows == 0 && 2*p.Bounded >= p.Runs:
		p.Class, p.StepsNeeded = MemBounded, 0
	default:
		p.Class = MemUndecided
		if p.Grows > 0 || p.StepsNeeded == 0 {
			p.StepsNeeded = max(p.StepsNeeded, 2*steps)
		}
	}
	return p
}

// HoursRange prints a time to the limit between its soonest and latest
// (the growth interval's ends), one figure when both print alike.
func HoursRange(soonest, latest float64) string {
	a, b := Hours(soonest), Hours(latest)
	if a == b {
		return a
	}
	return a + " to " + b
}

// Describe says the pool's class in words: "bounded (4 of 4 runs)",
// "grows 2.8 GiB-2.9 GiB per 1000 steps", "undecided (runs of about 500
// steps would tell)".
func (p MemPool) Describe() string {
	if p.Collector && p.Class != MemUndecided {
		return fmt.Sprintf("%s (%d of %d runs): %s", p.Class, max(p.Grows, p.Bounded), p.Runs, p.Why)
	}
	switch p.Class {
	case MemGrows:
		return fmt.Sprintf("grows %s-%s per 1000 steps (%d of %d runs)", Bytes(p.Lo), Bytes(p.Hi), p.Grows, p.Runs)
	case MemBounded:
		return fmt.Sprintf("bounded (%d of %d runs)", p.Bounded, p.Runs)
	}
	return fmt.Sprintf("undecided (%d of %d runs grow, %d bounded; runs of about %d steps would tell)", p.Grows, p.Runs, p.Bounded, p.StepsNeeded)
}
