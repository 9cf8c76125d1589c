package results

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// BusyShare is the share of the host's CPUs (at least BusyMinCPUs) that
// processes other than a run's own may keep busy, on average while it
// runs (Run.OtherCPUs), for its timings to be the workload's. A load that
// spans a whole session slows every run alike, so the runs agree and no
// comparison of them can see it: golden update refuses such runs, the gate
// and the run report say so. Measured on a 2-core VM: a CPU burner beside
// the smoke case read 1.3-1.5 CPUs of other load, a quiet host 0-0.008.
const (
	BusyShare   = 0.25
	BusyMinCPUs = 0.5
)

// BusyLimit is the other load, in CPUs, above which a run on a host of
// cpus CPUs was made on a busy host.
func BusyLimit(cpus int) float64 { return max(BusyMinCPUs, BusyShare*float64(cpus)) }

// BusyOf counts the runs made beside other load on a host of cpus CPUs,
// and the most load any of them saw.
func BusyOf(runs []*Run, cpus int) (n int, most float64) {
	for _, r := range runs {
		if r.Busy(cpus) {
			n++
			most = max(most, *r.OtherCPUs)
		}
	}
	return n, most
}

// Busy says whether the run recorded other load above the limit of a host
// of cpus CPUs (false where it recorded none).
func (r *Run) Busy(cpus int) bool {
	return r.OtherCPUs != nil && *r.OtherCPUs > BusyLimit(cpus)
}

// Disturbance says what disturbed the host while the runs of the named
// cases (all with none named) were made: runs beside other load over
// BusyLimit, or a calibration that moved beyond SpeedMovedLimit within the
// session (a throttled or frequency-scaled CPU). "" when neither was seen.
// Their timings then measure the host as much as the change
// (Comparison.HostBusy).
func Disturbance(m *Manifest, names ...string) string {
	if m == nil {
		return ""
	}
	var runs []*Run
	for _, r := range m.Runs {
		if len(names) == 0 || slices.Contains(names, r.Case) {
			runs = append(runs, r)
		}
	}
	var why []string
	if n, most := BusyOf(runs, m.Host.CPUs); n > 0 {
		why = append(why, fmt.Sprintf("other processes kept up to %.2f of the host's %d CPUs busy (over %.2f) during %d of %d runs", most, m.Host.CPUs, BusyLimit(m.Host.CPUs), n, len(runs)))
	}
	if m.Calibration.Moved() {
		why = append(why, fmt.Sprintf("the host's speed moved %.0f%% within the session (over %.0f%%: a throttled or shared CPU)", 100*m.Calibration.Spread(), 100*SpeedMovedLimit))
	}
	return strings.Join(why, "; ")
}

// HostBusy makes every tested timing verdict of the comparison unknown,
// worded "undecided: host busy" with what disturbed it (Disturbance): a
// neighbour's load slows a collection and a step by amounts no test can
// separate from a change, so neither a regression nor a "same" can be
// read from such runs. It returns how many rows it made unknown.
func (c *Comparison) HostBusy(why string) int {
	return c.UndecideTimings("host busy: "+why, "rerun on a quiet host to judge timings")
}

// UndecideTimings makes every tested timing verdict of the comparison
// (everything measured in time: step quantiles, pauses, gc-cost, gc-share,
// the spike rate, and a collection count's verdict where its measured
// price decided it and lies within BusyPriceFactor of the floor; not the
// exact counts otherwise, not memory) unknown,
// "undecided: " and why, keeping the measured change in the reason; todo
// says what would decide them. The exact layers and memory still decide.
// It returns how many rows it made unknown.
func (c *Comparison) UndecideTimings(why, todo string) int {
	n := 0
	for _, r := range c.Rows {
		m, ok := stats.MetricByName(r.Metric)
		// An exact row outside the catalogue (an A/B's heap census) is
		// judged as a count is where its price decided it.
		exact := ok && m.Exact || !ok && r.Exact && priced(r)
		switch {
		case !ok && !exact || ok && m.Memory || r.Verdict == stats.Descriptive:
			continue
		case exact:
			if !priced(r) || r.Verdict != stats.Regressed && r.Verdict != stats.Improved || !PriceWithinBusyFactor(r.Cost) {
				continue
			}
			r.Reason = fmt.Sprintf("undecided: %s; the count moved %s (exact), but its price, %s, timed in those runs, is within %g times the cost floor, which a neighbour's load can make of a price under it (was %s)", why, stats.Pct(r.Change), r.Cost, BusyPriceFactor, r.Verdict)
		case !r.Tested():
			continue
		default:
			measured := fmt.Sprintf("measured %s [%s, %s]", stats.Pct(r.Change), stats.Pct(r.ChangeLo), stats.Pct(r.ChangeHi))
			r.Reason = fmt.Sprintf("undecided: %s; %s, which that moves as much as a change would (was %s)", why, measured, r.Verdict)
		}
		r.Verdict, r.RunsNeeded = stats.Unknown, 0
		n++
	}
	if n > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("timing undecided: %s; %d timing verdicts are unknown (the exact collection counts, the census and memory still decide); %s", why, n, todo))
	}
	return n
}

// BusyPriceFactor is how far past the cost floor a collection count's
// price (stats.CountCost: its pause over the step, timed in the same runs)
// must be for its verdict to stand where the host was busy. A uniform
// slowdown cancels in that ratio, but a neighbour slows a collection more
// than the compute around it (beside two busy loops on a 2-core host:
// gen2-pause +82%, gc-cost +57%, issue #46), so a disturbed price may be up
// to about twice the true one.
const BusyPriceFactor = 2.0

// PriceWithinBusyFactor reports whether a price timed in disturbed runs
// lies within BusyPriceFactor of the cost floor, where a neighbour's load
// could have made it of a price under the floor.
func PriceWithinBusyFactor(c *stats.Cost) bool {
	return c != nil && !math.IsNaN(c.Share) && math.Abs(c.Share) <= BusyPriceFactor*stats.CostFloor
}

// priced reports whether an exact count's verdict came from its measured
// price (stats.CountCost, after an environment change): the count is
// exact, but its pause was timed in the same runs as everything else.
func priced(r *stats.Row) bool {
	return r.Cost != nil && !math.IsNaN(r.Cost.Share)
}
