package stats

import (
	"fmt"
	"math"
	"slices"
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
	// 133 MiB per 1000 steps, of the second half 36, of its envelope 0.6;
	// disabled reads 2.95 GiB either way. A median ignores the
	// sawtooth a collector makes and a lone jump (an arena, a page-in); a
	// least-squares line would follow them.
	Growth float64
	// Samples is how many measured steps had a sample; Growth needs 2.
	Samples int
}

// memSeriesCap bounds the points a run keeps for its slope: the series is
// thinned (every other point dropped, the stride doubled) when it reaches
// twice this, so a million-step run costs what a 400-step run does, and
// Theil-Sen's n^2/2 slopes stay under 80,000.
const memSeriesCap = 200

// memTrack accumulates one memory series, step by step.
type memTrack struct {
	peak    float64
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
	t.peak = math.Max(t.peak, b)
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
	return &Mem{Peak: t.peak, Growth: 1000 * TheilSen(x, y), Samples: t.samples}
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
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return math.NaN()
	}
	slices.Sort(slopes)
	return Quantile(slopes, 0.5)
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
