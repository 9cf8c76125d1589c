package stats

import (
	"slices"
)

// DefaultPrimary are the metrics a comparison tests when a case names none
// (gate.primary): the typical step, the tail, how often and how much time
// the collector stops the step, and the worst full collection. They are
// the family the gate's false-alarm rate is spent on; the other metrics
// (p90, p99.9 and max, which move with p99; gen0/gen1 pauses) are reported
// with their change and interval, not tested, and the collection counts
// keep their exact comparison.
var DefaultPrimary = func() []string {
	var out []string
	for _, m := range Metrics {
		if m.Primary {
			out = append(out, m.Name)
		}
	}
	return out
}()

// Decisive are the primary metrics a gate must be able to decide: the
// typical step and the tail. Every comparison states the smallest change
// of each that its size could detect (results.Comparison.Sensitivity), and
// a gate whose plan cannot see its -detect effect (a doubling by default)
// in them is refused; the other primary metrics (spike rate, GC share, the
// worst pause: counts of rare events with wide run-to-run spread) are
// planned too, and what they cannot decide is said, not refused.
var Decisive = []string{"p50", "p99"}

// Stated are the metrics whose smallest detectable change every report
// and plan states where they are tested: the decisive ones, and p99-rel,
// the tail with the host's speed taken out, which on a shared host sees
// what p99 cannot (docs/compare.md). p99-rel does not refuse a plan: a
// gate that cannot see a change in it still judges p99.
var Stated = append(slices.Clone(Decisive), "p99-rel")

// IsPrimary reports whether a gcjitter metric is tested under a primary
// list (nil: DefaultPrimary).
func IsPrimary(metric string, primary []string) bool {
	if primary == nil {
		primary = DefaultPrimary
	}
	return slices.Contains(primary, metric)
}

// MarkPrimary marks the pairs of gcjitter metrics outside primary (nil:
// DefaultPrimary) as descriptive. Exact counts keep their exact
// comparison (they join no family: a deterministic schedule has no noise
// to test), and pairs of foreign units stay tested: benchfmt from other
// tools has no primary set, and benchstat tests every unit too.
func MarkPrimary(pairs []Pair, primary []string) {
	for i := range pairs {
		p := &pairs[i]
		if _, ok := MetricByName(p.Metric); !ok {
			continue
		}
		p.Descriptive = !IsPrimary(p.Metric, primary) && !(p.Exact && allEqualOrEmpty(p.Old) && allEqualOrEmpty(p.New))
	}
}

func allEqualOrEmpty(xs []float64) bool { return len(xs) == 0 || allEqual(xs) }
