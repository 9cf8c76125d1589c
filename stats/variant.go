package stats

import (
	"fmt"
	"strings"
)

// VariantVerdict is the overall judgement of one benchmark (a case's
// variant) from its rows.
type VariantVerdict struct {
	Bench   string
	Verdict Verdict
	Reason  string
	// FewerLonger lists the generations whose collections fell while their
	// pauses grew: fewer, longer collections, a trade and not an
	// improvement (a longer full collection is a longer stall of every
	// rank).
	FewerLonger []int
}

// FewerLongerNote is how reports name the pattern.
const FewerLongerNote = "fewer, longer collections"

// VariantVerdicts judges each benchmark of rows, in order of first
// appearance, from its judged rows (tested and exact; descriptive rows only
// for the pauses below):
//   - regressed when any row regressed;
//   - unknown, "fewer, longer collections", when a generation's
//     collections fell (improved) while its pause regressed or its estimate
//     rose beyond its floor, tested or not: the overall verdict weighs the
//     pauses, so a schedule that collects less often but stops longer is
//     not an improvement;
//   - improved when some row improved and none regressed;
//   - unknown when some row is unknown; same when every judged row is.
func VariantVerdicts(rows []*Row) []VariantVerdict {
	var order []string
	by := map[string][]*Row{}
	for _, r := range rows {
		if _, ok := by[r.Bench]; !ok {
			order = append(order, r.Bench)
		}
		by[r.Bench] = append(by[r.Bench], r)
	}
	out := make([]VariantVerdict, 0, len(order))
	for _, b := range order {
		out = append(out, variantVerdict(b, by[b]))
	}
	return out
}

func variantVerdict(bench string, rows []*Row) VariantVerdict {
	v := VariantVerdict{Bench: bench}
	metric := map[string]*Row{}
	var regressed, improved, unknown []string
	for _, r := range rows {
		metric[r.Metric] = r
		switch r.Verdict {
		case Regressed:
			regressed = append(regressed, r.Metric)
		case Improved:
			improved = append(improved, r.Metric)
		case Unknown:
			unknown = append(unknown, r.Metric)
		}
	}
	var trades []string
	for g := range 3 {
		c, p := metric[fmt.Sprintf("gen%d-collections", g)], metric[fmt.Sprintf("gen%d-pause", g)]
		if c == nil || p == nil || c.Verdict != Improved {
			continue
		}
		if rose := p.Verdict == Regressed || (p.Change > p.Floor && p.Change > 0); rose {
			v.FewerLonger = append(v.FewerLonger, g)
			trades = append(trades, fmt.Sprintf("gen%d collections %s, gen%d pause %s", g, Pct(c.Change), g, Pct(p.Change)))
		}
	}
	switch {
	case len(regressed) > 0:
		v.Verdict, v.Reason = Regressed, "regressed: "+strings.Join(regressed, ", ")
		if len(trades) > 0 {
			v.Reason += "; " + FewerLongerNote + " (" + strings.Join(trades, "; ") + ")"
		}
	case len(trades) > 0:
		v.Verdict, v.Reason = Unknown, FewerLongerNote+": "+strings.Join(trades, "; ")+": not an improvement"
	case len(improved) > 0:
		v.Verdict, v.Reason = Improved, "improved: "+strings.Join(improved, ", ")
		if len(unknown) > 0 {
			v.Reason += "; unknown: " + strings.Join(unknown, ", ")
		}
	case len(unknown) > 0:
		v.Verdict, v.Reason = Unknown, "unknown: "+strings.Join(unknown, ", ")
	default:
		v.Verdict, v.Reason = Same, "every judged metric the same"
		judged := 0
		for _, r := range rows {
			if r.Verdict != Descriptive {
				judged++
			}
		}
		if judged == 0 {
			v.Verdict, v.Reason = Unknown, "nothing judged: every metric is descriptive"
		}
	}
	return v
}
