package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// decide turns a row's change, interval and family into a verdict.
func decide(r *Row, alpha float64) {
	if r.Verdict != "" {
		return
	}
	// bad is the change oriented so that positive is worse.
	bad, badLo, badHi := r.Change, r.ChangeLo, r.ChangeHi
	if r.Better > 0 {
		bad, badLo, badHi = -bad, -badHi, -badLo
	}
	f := r.Floor
	if r.Exact && !r.Descriptive && r.Cost != nil && math.Abs(bad) > f {
		decideByCost(r)
		return
	}
	if r.Exact && !r.Descriptive {
		switch {
		case math.Abs(bad) <= f:
			r.Verdict, r.Reason = Same, "exact: unchanged"
			if bad != 0 {
				r.Reason = fmt.Sprintf("exact: changed by %s, within the floor ±%s", Pct(r.Change), pctAbs(f))
			}
		case bad > 0:
			r.Verdict, r.Reason = Regressed, fmt.Sprintf("exact: %s -> %s (%s), beyond the floor ±%s", num(r.Old[0]), num(r.New[0]), Pct(r.Change), pctAbs(f))
		default:
			r.Verdict, r.Reason = Improved, fmt.Sprintf("exact: %s -> %s (%s), beyond the floor ±%s", num(r.Old[0]), num(r.New[0]), Pct(r.Change), pctAbs(f))
		}
		return
	}
	if r.Descriptive {
		r.Verdict = Descriptive
		switch {
		case r.Test == TestExact && r.Change == 0:
			r.Reason = fmt.Sprintf("not tested: %s in every run of both sides", num(r.Old[0]))
		case r.Test == TestExact:
			r.Reason = fmt.Sprintf("not judged: %s -> %s (%s)", num(r.Old[0]), num(r.New[0]), Pct(r.Change))
		case r.tooFew:
			r.Reason = fmt.Sprintf("not tested: %s, too few runs (%d+%d) for an interval", Pct(r.Change), len(r.Old), len(r.New))
		default:
			r.Reason = fmt.Sprintf("not tested: %s [%s, %s] (%s interval)", Pct(r.Change), Pct(r.ChangeLo), Pct(r.ChangeHi), confText(alpha))
		}
		if len(r.Warnings) > 0 {
			r.Reason += "; " + r.Warnings[len(r.Warnings)-1]
		}
		return
	}
	if r.tooFew {
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("too few runs (%d+%d) for a test: the run-to-run spread needs 3 runs in all, 2 per side to decide", len(r.Old), len(r.New))
		r.RunsNeeded = 2
		return
	}
	test := testName(r.Test)
	if r.Drift > 0 {
		test += fmt.Sprintf(" with session drift ±%s", pctAbs(r.Drift))
	}
	ci := fmt.Sprintf("%s [%s, %s] (%s interval, %s)", Pct(r.Change), Pct(r.ChangeLo), Pct(r.ChangeHi), confText(r.Level), test)
	fam := fmt.Sprintf("p=%s after Holm over %d tests", pval(r.PAdj), r.FamilySize)
	if r.FamilySize == 1 {
		fam = fmt.Sprintf("p=%s, the only test", pval(r.PAdj))
	}
	det := ""
	if !math.IsNaN(r.Detectable) {
		det = "; detectable: " + detText(r)
	}
	switch {
	case r.significant && badLo > f:
		r.Verdict = Regressed
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; %s%s", ci, floorText(f, r.Better, true), fam, det)
	case r.significant && badHi < -f:
		r.Verdict = Improved
		r.Reason = fmt.Sprintf("%s, entirely beyond the floor %s; %s%s", ci, floorText(f, r.Better, false), fam, det)
	case badLo >= -f && badHi <= f:
		r.Verdict = Same
		r.Reason = fmt.Sprintf("%s, inside the floor ±%s%s", ci, pctAbs(f), det)
	default:
		r.Verdict = Unknown
		// What the size could not see leads: an unknown that passes a gate
		// (-unknown pass) is only as safe as that.
		lead := ""
		if !math.IsNaN(r.Detectable) {
			lead = "undecided: " + r.Unseen() + "; "
		}
		if r.significant {
			r.Reason = fmt.Sprintf("%s%s is significant (%s) but reaches into the floor ±%s", lead, ci, fam, pctAbs(f))
		} else {
			r.Reason = fmt.Sprintf("%s%s straddles the floor ±%s (%s)", lead, ci, pctAbs(f), fam)
		}
		r.RunsNeeded = runsNeeded(r, alpha)
		switch {
		case r.RunsNeeded >= MaxRunsNeeded && r.oldFixed:
			r.Reason += fmt.Sprintf("; no number of new runs up to %d would decide against the baseline's %d", MaxRunsNeeded, len(r.Old))
		case r.RunsNeeded >= MaxRunsNeeded:
			r.Reason += fmt.Sprintf("; more than %d runs per side would be needed", MaxRunsNeeded)
		case r.RunsNeeded > 0 && r.oldFixed:
			r.Reason += fmt.Sprintf("; about %d new runs against the baseline's %d (%d more) would likely decide", r.RunsNeeded, len(r.Old), r.MoreRuns())
		case r.RunsNeeded > 0:
			r.Reason += fmt.Sprintf("; about %d runs per side (%d more) would likely decide", r.RunsNeeded, r.MoreRuns())
		default:
			r.Reason += "; the estimate sits at the floor, so more runs may not decide"
		}
	}
}

func testName(t string) string {
	switch t {
	case TestTLog:
		return "t on logs"
	case TestT:
		return "t"
	case TestULog, TestU:
		return "U test"
	}
	return t
}

// confText is a confidence level as text: "95%", "99.67%", with the
// fewest digits that keep the tail (1-confidence) within 5%.
func confText(level float64) string {
	c := 100 * (1 - level)
	for prec := 0; prec <= 8; prec++ {
		s := strconv.FormatFloat(c, 'f', prec, 64)
		if v, _ := strconv.ParseFloat(s, 64); math.Abs(v-c) <= 0.05*100*level {
			if strings.Contains(s, ".") {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
			return s + "%"
		}
	}
	return strconv.FormatFloat(c, 'g', -1, 64) + "%"
}

func detText(r *Row) string {
	if math.IsInf(r.Detectable, 1) {
		return fmt.Sprintf("no change at %s runs (the test cannot reach the family's level)", r.Sizes())
	}
	return fmt.Sprintf("%s with %.0f%% power at %s runs and this spread", Pct(r.Detectable), 100*DetectPower, r.Sizes())
}

// Sizes are the row's runs, old+new ("5+5").
func (r *Row) Sizes() string { return fmt.Sprintf("%d+%d", len(r.Old), len(r.New)) }

// Unseen says what a row of this size could not have detected: "a change
// under +38% could not be seen at 5+5 runs (95% power)". "" when the row
// was not tested.
func (r *Row) Unseen() string {
	switch {
	case math.IsNaN(r.Detectable):
		return ""
	case math.IsInf(r.Detectable, 1):
		return fmt.Sprintf("no change could be seen at %s runs (the test cannot reach the family's level)", r.Sizes())
	}
	return fmt.Sprintf("a change under %s could not be seen at %s runs (%.0f%% power)", Pct(r.Detectable), r.Sizes(), 100*DetectPower)
}

// Pct prints a relative change as a signed percentage (+3.25%, -12.5%,
// +250%), with infinities as ±∞: the one format every report uses.
func Pct(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+∞"
	case math.IsInf(f, -1):
		return "-∞"
	case math.IsNaN(f):
		return "?"
	case f == 0:
		return "0%"
	}
	switch x := math.Abs(f * 100); {
	case x < 10:
		return fmt.Sprintf("%+.2f%%", f*100)
	case x < 100:
		return fmt.Sprintf("%+.1f%%", f*100)
	}
	return fmt.Sprintf("%+.0f%%", f*100)
}

// pctAbs is a floor: a percentage without a sign.
func pctAbs(f float64) string { return strings.TrimPrefix(Pct(math.Abs(f)), "+") }

// floorText is the floor on the bad (regressed) or good side.
func floorText(f float64, better int, bad bool) string {
	if (better < 0) == bad {
		return "+" + pctAbs(f)
	}
	return "-" + pctAbs(f)
}

func pval(p float64) string {
	if p < 0.001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3f", p)
}

func num(x float64) string { return fmt.Sprintf("%.4g", x) }
