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
	for _, c := range m.Cases {
		hasDefault := false
		for _, v := range c.Variants {
			hasDefault = hasDefault || v.Name == "default"
		}
		if !hasDefault || len(c.Variants) < 2 {
			continue
		}
		o := opt
		o.Case = c.Name
		a, err := FromResults([]string{dir}, o)
		if err != nil {
			out = append(out, report.Answer{Case: c.Name, Err: err.Error()})
			continue
		}
		out = append(out, a.Answer())
	}
	return out
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
