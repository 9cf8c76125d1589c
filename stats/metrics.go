package stats

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchunit"
)

// A Metric is one per-run quantity that comparisons and gates judge. Its
// name is what a case's gate.floors uses; its unit is how results.bench
// carries it (benchstat tidies "ns" to "sec", so both spellings are known).
type Metric struct {
	Name  string
	Unit  string // as written to results.bench
	Exact bool   // a count of a deterministic schedule: no noise to test
	// MinSteps is the number of steps a run needs for the metric to mean
	// anything (the 99.9th percentile of 100 steps is just the maximum).
	MinSteps int
	// EqualLengthsFree: MinSteps binds only runs of different lengths. A
	// tail quantile's floor is for an interval within one run; a test
	// between runs of one length compares per-run values whatever their
	// size, as it does the maxima (max, gen2-pause), whose spread between
	// runs is what the test needs. Across lengths the quantile of a short
	// run is nearer its maximum and biased with the length, so the floor
	// holds there.
	EqualLengthsFree bool
	// LengthBiased: a maximum over the run, which grows with the run's
	// length, so runs of different lengths are not tested against each
	// other.
	LengthBiased bool
	// PerKStep: a count per 1000 steps, so a run of n steps can only take
	// multiples of 1000/n (the quantum).
	PerKStep bool
	// Floor is the default floor: the smallest relative change worth a
	// verdict where a case's gate names none (DefaultFloors).
	Floor float64
	// FloorAbs, for a slope that sits near zero when nothing is wrong (a
	// memory growth), is the absolute floor: values below it count as it in
	// a comparison, since a change relative to a near-zero slope has no
	// size. Floor is then relative to that.
	FloorAbs float64
	// Memory: a memory figure, not a time. The host's speed and load do
	// not move it, so a gate judges it even where it only reports timings
	// (a baseline of another CPU model).
	Memory bool
	// Primary: tested by default (DefaultPrimary); the others are reported
	// with their change, not tested.
	Primary bool
	// Drift is the default session drift (Options.Drift): how much the
	// metric's session mean moves between sessions on one host (other
	// neighbours, another boot, another thermal state), as a standard
	// deviation of about relative size. Times move with the host; exact
	// counts and the spike rate (a rule against the run's own noise) do
	// not. docs/compare.md gives the measurement behind the figure.
	Drift float64
	// SpeedFree: a uniformly faster or slower host cancels in it (a ratio
	// of the run's own times, a size), so its session drift is small. A
	// throttled or shared host does not slow collections and steps alike
	// (a cache-resident heap suffers more): at another speed a gate calls
	// its regression undecided (gate.Outcome.settle); memory gates anyway.
	SpeedFree bool
	// HigherBetter: a larger value is the better one (the device's
	// utilisation); every other metric is better lower.
	HigherBetter bool
	// Value is the run's value; NaN where the run did not measure it
	// (memory a run did not record): not reported, not judged.
	Value func(RunSummary) float64
}

// Judged says whether m is compared between runs whose shortest has
// minSteps steps; equal says every run has the same length.
func (m Metric) Judged(minSteps int, equal bool) bool {
	return minSteps >= m.MinSteps || (equal && m.EqualLengthsFree)
}

// Measured is the run's value of m and whether the run has one.
func (m Metric) Measured(r RunSummary) (float64, bool) {
	v := m.Value(r)
	return v, !math.IsNaN(v)
}

// MinStepsP999 is the smallest run whose 99.9th percentile has a finite
// distribution-free 95% confidence interval: 0.999^n <= 0.025.
const MinStepsP999 = 3688

// MinStepsP99 is the same for the 99th percentile: 0.99^n <= 0.025. In a
// shorter run p99 is one of its two or three largest steps, a maximum in
// all but name.
const MinStepsP99 = 368

// MinStepsGrowth is the shortest run whose memory growth is compared: the
// slope is of the RSS's lower envelope over the run's second half, which
// needs the heap to have settled and a few collection periods to have an
// envelope. Shorter runs' growth is noise: the quick suite's 15-step resnet
// runs read -250 to +250 MiB per 1000 steps for a policy that frees every
// step, and ascend-gpt-periodic-gc's default read 0 in one 270-step run and
// 81-90 MiB in others, its heap still settling; clean CI runs' gates called
// both a leak. At 500 steps a planted leak was regressed in 19 of 20 real
// trials and an A/A in none (docs/compare.md).
const MinStepsGrowth = 500

// Metrics are gcjitter's metrics, in report order. All are better lower.
var Metrics = []Metric{
	{Name: "p50", Unit: "p50-ns/step", Floor: 0.02, Primary: true, Drift: P50Drift, Value: func(r RunSummary) float64 { return r.P50 }},
	{Name: "p90", Unit: "p90-ns/step", Floor: 0.03, Drift: HostDrift, Value: func(r RunSummary) float64 { return r.P90 }},
	{Name: "p99", Unit: "p99-ns/step", MinSteps: MinStepsP99, EqualLengthsFree: true, Floor: 0.03, Primary: true, Drift: P99Drift, Value: func(r RunSummary) float64 { return r.P99 }},
	// The steps without a full collection keep their own tail: a stall
	// that is not the collector's (a slow hook, a data loader) hides under
	// p99 wherever full collections make the slowest 1%. NaN where a run
	// has no full collection (p99 is then the same thing).
	{Name: "p99-no-gen2", Unit: "p99-no-gen2-ns/step", MinSteps: MinStepsP99, EqualLengthsFree: true, Floor: 0.03, Primary: true, Drift: P99Drift, Value: func(r RunSummary) float64 { return orNaN(r.P99NoGen2) }},
	// The tail in the run's own typical steps (RelTail): what p99 measures
	// with the host's speed taken out, so a slower collector or a stall
	// stands out of a shared host's run-to-run speed, which moves p99
	// itself by 7-15% between runs. A uniformly slower step is p50's to
	// see, not this one's.
	{Name: "p99-rel", Unit: "p99-rel-steps", MinSteps: MinStepsP99, EqualLengthsFree: true, Floor: 0.03, Primary: true, SpeedFree: true, Drift: P99RelDrift, Value: func(r RunSummary) float64 { return orNaN(r.P99Rel) }},
	{Name: "p99.9", Unit: "p99.9-ns/step", MinSteps: MinStepsP999, Floor: 0.05, Drift: HostDrift, Value: func(r RunSummary) float64 { return r.P999 }},
	// The mean step: what a CPU taken by another process moves when p50
	// does not (a short step runs inside one time slice or waits a whole
	// one), and throughput's inverse. NaN in summaries from before it.
	{Name: "mean", Unit: "mean-ns/step", Floor: 0.02, Drift: HostDrift, Value: func(r RunSummary) float64 { return orNaN(r.Mean) }},
	{Name: "max", Unit: "max-ns/step", LengthBiased: true, Floor: 0.10, Drift: PauseDrift, Value: func(r RunSummary) float64 { return r.Max }},
	{Name: "spike-rate", Unit: "spikes/kstep", PerKStep: true, Floor: 0.10, Primary: true, Value: func(r RunSummary) float64 { return perK(r.Spikes, r.Steps) }},
	{Name: "gc-share", Unit: "gc-share", Floor: 0.05, Primary: true, SpeedFree: true, Drift: GCShareDrift, Value: func(r RunSummary) float64 { return r.GCShare }},
	{Name: "gen0-collections", Unit: "gen0-collections/kstep", Exact: true, PerKStep: true, Value: func(r RunSummary) float64 { return perK(r.Collections[0], r.Steps) }},
	{Name: "gen1-collections", Unit: "gen1-collections/kstep", Exact: true, PerKStep: true, Value: func(r RunSummary) float64 { return perK(r.Collections[1], r.Steps) }},
	{Name: "gen2-collections", Unit: "gen2-collections/kstep", Exact: true, PerKStep: true, Value: func(r RunSummary) float64 { return perK(r.Collections[2], r.Steps) }},
	{Name: "gen0-pause", Unit: "gen0-max-pause-ns", LengthBiased: true, Floor: 0.05, Drift: PauseDrift, Value: func(r RunSummary) float64 { return r.MaxPauseNS[0] }},
	{Name: "gen1-pause", Unit: "gen1-max-pause-ns", LengthBiased: true, Floor: 0.05, Drift: PauseDrift, Value: func(r RunSummary) float64 { return r.MaxPauseNS[1] }},
	{Name: "gen2-pause", Unit: "gen2-max-pause-ns", LengthBiased: true, Floor: 0.03, Primary: true, Drift: PauseDrift, Value: func(r RunSummary) float64 { return r.MaxPauseNS[2] }},
	// The GC cost: what a full collection costs per object it walks, in
	// the run's own typical steps, so a slower collector moves it and a
	// slower or faster host does not (both slow alike); a heavier heap
	// does not either (the census says that). Where a session has a
	// census.
	{Name: "gc-cost", Unit: GCCostUnit, Floor: 0.05, Primary: true, SpeedFree: true, Drift: GCCostDrift, Value: GCCost},
	// Memory, the price of a calm tail: a policy that collects less keeps
	// cyclic garbage alive. The peak grows with the run's length.
	{Name: "rss-peak", Memory: true, SpeedFree: true, Unit: "rss-peak-bytes", LengthBiased: true, Floor: 0.10, Value: func(r RunSummary) float64 { return memValue(r.RSS, false) }},
	{Name: "rss-growth", Memory: true, SpeedFree: true, Unit: RSSGrowthUnit, MinSteps: MinStepsGrowth, Floor: RSSGrowthFloor, FloorAbs: RSSGrowthFloorAbs, Primary: true, Value: func(r RunSummary) float64 { return memValue(r.RSS, true) }},
	{Name: "dev-mem-peak", Memory: true, SpeedFree: true, Unit: "dev-mem-peak-bytes", LengthBiased: true, Floor: 0.10, Value: func(r RunSummary) float64 { return memValue(r.DevMem, false) }},
	// The asynchronous device (emulated, or a real one's events): its busy
	// share of the step, the share of its idle time that host collections
	// caused, and the host's lead at the step's sync (the room a pause
	// hides in). Reported, not tested: they move with the host's speed as
	// times do. NaN without device timing.
	{Name: "device-util", Unit: DeviceUtilUnit, Floor: 0.03, HigherBetter: true, Drift: HostDrift, Value: func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.Util }) }},
	{Name: "device-idle-gc", Unit: "device-idle-gc", Floor: 0.05, Drift: HostDrift, Value: func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.IdleGC }) }},
	{Name: "dev-slack", Unit: "dev-slack-ns", Floor: 0.05, HigherBetter: true, Drift: HostDrift, Value: func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.SlackNS }) }},
	{Name: "dev-mem-growth", Memory: true, SpeedFree: true, Unit: "dev-mem-growth-bytes/kstep", MinSteps: MinStepsGrowth, Floor: RSSGrowthFloor, FloorAbs: RSSGrowthFloorAbs, Value: func(r RunSummary) float64 { return memValue(r.DevMem, true) }},
}

// Better is Pair.Better for m: 1 when higher values are better, else -1.
func (m Metric) Better() int {
	if m.HigherBetter {
		return 1
	}
	return -1
}

// BetterWord is how results.bench says it: a Unit line's better=... value.
func (m Metric) BetterWord() string {
	if m.HigherBetter {
		return "higher"
	}
	return "lower"
}

// GCCostUnit is the unit of the GC cost in results.bench: the run's
// typical steps per million objects a full collection walks.
const GCCostUnit = "gc-cost-steps/Mobj"

// GCCost is a run's GC cost: its full collections' mean pause per object
// they walk (the census), over the run's step without its full
// collection's pause (RunSummary.Yardstick; Typical in older summaries),
// per million objects. The yardstick is the
// run's own step, not the session's calibration: both follow the host's
// speed, but the step shares the run's process, memory and minute, and
// left a third of the calibration's session drift (BENCHMARKS.md, "A
// slower collector"). A step made faster (an upgrade of torch) raises it,
// as it raises the GC share; a comparison that has both sides' runs does
// not call that a regression (results' fasterSteps). NaN without full
// collections or a census.
func GCCost(r RunSummary) float64 {
	yard := r.Yardstick
	if yard <= 0 {
		yard = r.Typical
	}
	if r.Collections[2] == 0 || r.FullWalk <= 0 || yard <= 0 {
		return math.NaN()
	}
	return 1e6 * PausePerObject(r) / yard
}

// PausePerObject is a run's full collections' mean pause per object they
// walk, in nanoseconds: the GC cost in absolute time, which the host's
// speed moves and a faster step does not. NaN without full collections
// or a census.
func PausePerObject(r RunSummary) float64 {
	if r.Collections[2] == 0 || r.FullWalk <= 0 {
		return math.NaN()
	}
	return r.PauseNS[2] / float64(r.Collections[2]) / r.FullWalk
}

// DeviceUtilUnit is the unit of the device's busy share in results.bench.
const DeviceUtilUnit = "device-util"

// devValue is f of the run's device summary, NaN without one.
func devValue(r RunSummary, f func(*DeviceSummary) float64) float64 {
	if r.Device == nil {
		return math.NaN()
	}
	return f(r.Device)
}

// RSSGrowthUnit is the unit of the host memory growth in results.bench.
const RSSGrowthUnit = "rss-growth-bytes/kstep"

// The floors of memory growth: growth under 16 MiB per 1000 steps counts
// as none (a 16 GiB host lasts a million steps at it), and above that a
// change must exceed 25%. docs/compare.md gives the A/A and planted-leak
// measurements behind them.
const (
	RSSGrowthFloorAbs = 16 << 20
	RSSGrowthFloor    = 0.25
)

func perK(n, steps int) float64 {
	if steps == 0 {
		return 0
	}
	return 1000 * float64(n) / float64(steps)
}

// MetricByUnit finds one of gcjitter's metrics by its unit, as written or
// as benchstat tidies it ("p99-sec/step").
func MetricByUnit(unit string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Unit == unit || tidy(m.Unit) == unit {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricByName finds one of gcjitter's metrics by its gate name.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Defaults of a comparison, used where a case's gate says nothing.
const (
	DefaultAlpha = 0.05
)

// Session drifts of the catalogue (Metric.Drift): the standard deviation
// of the difference between two sessions' levels on one host, set at the
// largest 90% upper bound measured for the metric (MeasuredDrift, where
// each figure's source is named; a point estimate where no bound was
// recorded), so that an unchanged tree against a baseline of another
// session is not a false alarm at a drift the host was seen to have. A
// dedicated host drifts less: a case's gate.drift or gate -drift sets it.
const (
	// P50Drift: resnet-gc-collect-every-step's collect-every-step
	// variant drifted 7.5% over 13 sessions (above the 5.4% and 6.7%
	// bounds of ascend's 21 and 7).
	P50Drift = 0.075
	// P99Drift: the bound of 7 quiet sessions (8.0% over 21).
	P99Drift = 0.086
	// PauseDrift: gen2-pause's bound over 7 quiet sessions (7.9% over
	// 21); the other pauses and the run's maximum, maxima too, take it.
	PauseDrift = 0.123
	// HostDrift is the drift of the step times not measured apart (p90,
	// p99.9, the mean, the device figures): p99's, the widest step-time
	// quantile measured.
	HostDrift = P99Drift
)

// The session drifts of the metrics in which the host's speed cancels
// (a faster or slower session moves the collections and the steps
// alike): their largest measured bounds, 7 quiet sessions for gc-cost,
// 21 for gc-share, 9 for p99-rel (MeasuredDrift).
const (
	GCShareDrift = 0.035
	GCCostDrift  = 0.039
	P99RelDrift  = 0.054
)

// SpeedFreeMetrics are the names of the timing metrics the host's speed
// cancels in (Metric.SpeedFree, memory aside), in catalogue order.
func SpeedFreeMetrics() []string {
	var out []string
	for _, m := range Metrics {
		if m.SpeedFree && !m.Memory {
			out = append(out, m.Name)
		}
	}
	return out
}

// DefaultDrift are the catalogue's session drifts by metric name.
var DefaultDrift = func() map[string]float64 {
	out := map[string]float64{}
	for _, m := range Metrics {
		out[m.Name] = m.Drift
	}
	return out
}()

// DefaultFloors are the catalogue's floors by metric name: the floors of
// the metrics a gate does not name. They sit below what users must catch
// (the customer's spikes grew +4.7%, so p99 and the pauses are under 5%);
// a floor only keeps a significant but negligible change from failing a
// gate; what a size can detect is Row.Detectable and Plan. Collections are
// exact, so any change counts.
var DefaultFloors = func() map[string]float64 {
	out := map[string]float64{}
	for _, m := range Metrics {
		out[m.Name] = m.Floor
	}
	return out
}()

// MetricPairs pairs every metric of two sets of run summaries of one
// benchmark, with the runs' lengths; metrics outside DefaultPrimary are
// descriptive (MarkPrimary changes that). A metric is left out unless every
// run has its MinSteps steps (p99.9: 3688; p99: 368 where the runs' lengths
// differ, any size where they do not: Metric.Judged).
func MetricPairs(bench string, old, new []RunSummary) []Pair {
	minSteps, maxSteps := math.MaxInt, 0
	for _, rs := range [][]RunSummary{old, new} {
		for _, r := range rs {
			minSteps, maxSteps = min(minSteps, r.Steps), max(maxSteps, r.Steps)
		}
	}
	var pairs []Pair
	for _, m := range Metrics {
		if !m.Judged(minSteps, minSteps == maxSteps) {
			continue
		}
		p := Pair{Bench: bench, Metric: m.Name, Unit: m.Unit, Better: m.Better(), Exact: m.Exact}
		for _, r := range old {
			p.Old = append(p.Old, m.Value(r))
			p.OldSteps = append(p.OldSteps, r.Steps)
		}
		for _, r := range new {
			p.New = append(p.New, m.Value(r))
			p.NewSteps = append(p.NewSteps, r.Steps)
		}
		pairs = append(pairs, p)
	}
	MarkPrimary(pairs, nil)
	return pairs
}

// FormatValue prints a value in its unit (a Metric's, as benchunit tidies
// it), scaled the way benchstat does (40.1ms, 1.2k); fractions as
// percentages.
func FormatValue(v float64, unit string) string {
	if unit == "gc-share" {
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	s := benchunit.Scale(v, benchunit.ClassOf(unit))
	if strings.Contains(unit, "sec") {
		s += "s"
	}
	return s
}

// MS prints a time in nanoseconds as milliseconds ("41.813 ms"): the one
// format the tables, the progress lines and the baselines' listings share.
func MS(ns float64) string { return fmt.Sprintf("%.3f ms", ns/1e6) }

// orNaN is v, or NaN (not measured) when v is 0: a summary field added
// later reads 0 in summaries written before it.
func orNaN(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

// tidy is benchunit's normalisation of a unit ("ns/step" to "sec/step").
func tidy(unit string) string {
	_, u := benchunit.Tidy(1, unit)
	return u
}
