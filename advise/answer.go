package advise

import (
	"fmt"
	"strings"

	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Answers advises on every case of the results directory dir (its
// manifest m) that ran default beside another policy: the first thing
// its report shows. One answer a case, in the manifest's order; a case
// advise cannot judge gets one that says why.
func Answers(dir string, m *results.Manifest, opt Options) []report.Answer {
	var out []report.Answer
	eachAnswered(dir, m, opt, func(name string, a *Advice, err error) {
		if err != nil {
			out = append(out, report.Answer{Case: name, Err: err.Error()})
			return
		}
		out = append(out, a.Answer())
	})
	return out
}

// Contest is a case whose answer waits on one candidate's tail alone, its
// memory decided: more interleaved runs of that candidate and the
// reference can decide it (longer runs are not needed).
type Contest struct {
	Case, Candidate, Reference string
}

// Contests are the cases of the results directory dir (its manifest m)
// whose answer waits on a tail alone, in the manifest's order.
func Contests(dir string, m *results.Manifest, opt Options) []Contest {
	var out []Contest
	eachAnswered(dir, m, opt, func(name string, a *Advice, err error) {
		if err == nil && a.TailOnly() {
			out = append(out, Contest{Case: name, Candidate: a.Open.Variant, Reference: a.Reference})
		}
	})
	return out
}

// eachAnswered advises on each case of dir that gets an answer (answered),
// in the manifest's order: the one loop Answers and Contests share.
func eachAnswered(dir string, m *results.Manifest, opt Options, f func(name string, a *Advice, err error)) {
	for _, c := range m.Cases {
		if !answered(c) {
			continue
		}
		o := opt
		o.Case = c.Name
		a, err := FromResults([]string{dir}, o)
		f(c.Name, a, err)
	}
}

// TailOnly reports whether the advice waits on its open candidate's tail
// alone: undecided, with the candidate's memory lasting the job, and runs
// enough to test the tail (2 a policy: adaptive rounds grow a tested row).
func (a *Advice) TailOnly() bool {
	return a.Undecided && a.Open != nil && a.Open.waitsOnRuns() && a.Open.Fate == Lasts && a.Open.Runs >= 2
}

// waitsOnRuns reports whether more runs of the same length could settle j:
// its tail is not yet improved, or improved but its p99 reads larger, or
// its median is in doubt.
func (j *Judged) waitsOnRuns() bool {
	return j.Tail != stats.Improved || j.P99Larger || j.MedianInDoubt != ""
}

// answered reports whether a case gets an answer: it ran default beside
// another policy.
func answered(c results.Case) bool {
	hasDefault := false
	for _, v := range c.Variants {
		hasDefault = hasDefault || v.Name == "default"
	}
	return hasDefault && len(c.Variants) >= 2
}

// Answer is the advice as a report shows it.
func (a *Advice) Answer() report.Answer {
	ans := report.Answer{Case: a.Case, Undecided: a.Undecided, Reason: a.Reason, Warning: a.Warning, Settle: a.Settle}
	if a.Pick != nil {
		ans.Pick, ans.Policy = a.Pick.Variant, a.Pick.Policy
	}
	// The headline says "undecided" or "keep default" already.
	ans.Reason = strings.TrimPrefix(strings.TrimPrefix(ans.Reason, "undecided: "), "keep "+a.Reference+": ")
	from := ""
	if a.LimitFrom != "" {
		from = " (" + a.LimitFrom + ")"
	}
	ans.Under = fmt.Sprintf("a job of %s, memory limit %s%s", hoursText(a.Duration), stats.Bytes(a.Limit), from)
	return ans
}
