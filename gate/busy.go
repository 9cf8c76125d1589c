package gate

import (
	"fmt"

	"github.com/gcjitter/gcjitter/results"
)

// BusyReruns is how many times a gate or an A/B makes its runs again when
// the host was disturbed while it made them (results.Disturbance): a brief
// disturbance then costs one more session, not a verdict; a host that
// stays busy leaves the timing layer undecided (UndecideBusy).
const BusyReruns = 1

// Undisturbed makes the runs of session m (in dir) again while the host
// disturbed them, at most BusyReruns times: rerun makes them once more
// into the n-th rerun's directory (dir-rerunN). It returns the session to
// judge, the last one made; a rerun that did not complete leaves the one
// before it. say tells the user what happens.
func Undisturbed(m *results.Manifest, dir string, rerun func(dir string) (*results.Manifest, string, error), say func(string)) (*results.Manifest, string) {
	base := dir
	for i := 0; i < BusyReruns; i++ {
		why := results.Disturbance(m)
		if why == "" {
			break
		}
		next := fmt.Sprintf("%s-rerun%d", base, i+1)
		say(fmt.Sprintf("the host was disturbed during the runs in %s: %s; running them once more into %s (at most %d reruns)", dir, why, next, BusyReruns))
		m2, dir2, err := rerun(next)
		if m2 == nil || err != nil {
			say(fmt.Sprintf("warning: the rerun did not complete (%v): judging the runs in %s", err, dir))
			break
		}
		m, dir = m2, dir2
	}
	return m, dir
}

// UndecideBusy leaves every timing verdict of cmp unknown, "undecided: host
// busy" (results.Comparison.HostBusy), when the host disturbed the runs of
// m (of the named cases; all with none named) and the user did not allow
// it (-allow-busy): a neighbour's load slows a collection and a step
// alike, never a verdict either way. It returns what disturbed the host,
// "" where nothing did or it was allowed.
func UndecideBusy(cmp *results.Comparison, m *results.Manifest, allow bool, names ...string) string {
	why := results.Disturbance(m, names...)
	if why == "" || allow {
		return ""
	}
	cmp.HostBusy(why)
	return why
}

// busyWarning is what the user reads when the host left the timings
// undecided (UndecideBusy).
func busyWarning(why string) string {
	return fmt.Sprintf("timing undecided: host busy: %s; the timing verdicts are unknown, not regressed (-unknown fail fails on them); the GC schedule, the census and memory were judged; rerun on a quiet host (gcjitter system shows what loads this one) to judge timings", why)
}

// unknownWarning is what the user reads when n verdicts are unknown and
// unknowns pass.
func unknownWarning(n int) string {
	return fmt.Sprintf("%d metrics are unknown (counted as pass; -unknown=fail to fail on them)", n)
}
