package results

import (
	"fmt"
	"slices"

	"github.com/gcjitter/gcjitter/stats"
)

// CompareOptions configure Compare.
type CompareOptions struct {
	// Alpha overrides the family-wise alpha (else the new side's cases',
	// else stats.DefaultAlpha).
	Alpha float64
	// Floors override every other floor, by metric name (p99) or unit.
	Floors map[string]float64
	// DefaultFloor is the floor of foreign units (not gcjitter metrics).
	DefaultFloor float64
}

// Comparison is the judgement of NEW against OLD.
type Comparison struct {
	Old, New *Data
	Alpha    float64
	Rows     []*stats.Row
	// Notes are facts about the inputs worth reading before the verdicts:
	// left-out benches and metrics, environment changes.
	Notes []string
}

// Regressed reports whether any row regressed.
func (c *Comparison) Regressed() bool {
	return slices.ContainsFunc(c.Rows, func(r *stats.Row) bool { return r.Verdict == stats.Regressed })
}

// Compare pairs the benches and units both sides have and judges them.
func Compare(old, new *Data, opt CompareOptions) *Comparison {
	c := &Comparison{Old: old, New: new, Alpha: opt.Alpha}
	if c.Alpha <= 0 {
		c.Alpha = new.Alpha
	}
	if c.Alpha <= 0 {
		c.Alpha = stats.DefaultAlpha
	}
	c.Notes = append(c.Notes, old.Warnings...)
	c.Notes = append(c.Notes, new.Warnings...)
	for _, b := range old.Benches {
		if new.Values[b] == nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s is only in %s: not compared", b, old.Path))
		}
	}
	floorOf := map[[2]string]float64{}
	unknownDir := map[string]bool{}
	leftOut := map[string][]int{}
	var pairs []stats.Pair
	for _, b := range new.Benches {
		if old.Values[b] == nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s is only in %s: not compared", b, new.Path))
			continue
		}
		if oe, ne := old.Env[b], new.Env[b]; oe != "" && ne != "" && oe != ne {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: environment changed: %s -> %s", b, oe, ne))
		}
		for _, u := range old.Units[b] {
			if _, ok := new.Values[b][u]; !ok {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: unit %s is only in %s: not compared", b, u, old.Path))
			}
		}
		for _, u := range new.Units[b] {
			oldVals, ok := old.Values[b][u]
			if !ok {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: unit %s is only in %s: not compared", b, u, new.Path))
				continue
			}
			p := stats.Pair{Bench: b, Metric: u, Unit: u, Old: oldVals, New: new.Values[b][u]}
			if m, ok := stats.MetricByUnit(u); ok {
				p.Metric, p.Exact, p.Better = m.Name, m.Exact, -1
				if steps := min(old.MinIters[b], new.MinIters[b]); steps < m.MinSteps {
					leftOut[m.Name] = append(leftOut[m.Name], steps)
					continue
				}
			} else {
				p.Better = new.Better[u]
				if p.Better == 0 {
					p.Better = old.Better[u]
				}
				if p.Better == 0 {
					p.Better = -1
					if !unknownDir[u] {
						unknownDir[u] = true
						c.Notes = append(c.Notes, fmt.Sprintf("unit %s says nothing of which way is better (no Unit %s better=... line): assuming lower is better", u, u))
					}
				}
			}
			floorOf[[2]string{b, p.Metric}] = floorFor(opt, old, new, b, p.Metric, u)
			pairs = append(pairs, p)
		}
	}
	for _, m := range stats.Metrics {
		if steps := leftOut[m.Name]; len(steps) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%s left out of %d benchmark(s): runs have %d steps or fewer, a finite interval needs %d", m.Name, len(steps), slices.Max(steps), m.MinSteps))
		}
	}
	// One Compare call, so that Holm's correction spans every row.
	c.Rows = stats.Compare(pairs, stats.Options{
		Alpha: c.Alpha,
		Floor: func(p stats.Pair) float64 { return floorOf[[2]string{p.Bench, p.Metric}] },
	})
	return c
}

func floorFor(opt CompareOptions, old, new *Data, bench, metric, unit string) float64 {
	for _, k := range []string{metric, unit} {
		if f, ok := opt.Floors[k]; ok {
			return f
		}
	}
	for _, d := range []*Data{new, old} {
		if f, ok := d.Floors[bench][metric]; ok {
			return f
		}
	}
	if f, ok := stats.DefaultFloors[metric]; ok {
		return f
	}
	if opt.DefaultFloor > 0 {
		return opt.DefaultFloor
	}
	return 0.05
}
