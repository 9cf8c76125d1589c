package gate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Spec is one side of gcjitter ab: an interpreter and environment.
type Spec struct {
	Text   string // as given, for reports
	Python string
	Env    map[string]string
}

// ParseSpec reads a SPEC (contract): comma-separated python=PATH and
// env.NAME=VALUE items.
func ParseSpec(s string) (Spec, error) {
	spec := Spec{Text: s, Env: map[string]string{}}
	if s == "" {
		return spec, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		switch {
		case !ok:
			return spec, fmt.Errorf("%q: want python=PATH or env.NAME=VALUE", item)
		case k == "python":
			spec.Python = v
		case strings.HasPrefix(k, "env.") && len(k) > 4:
			spec.Env[k[4:]] = v
		default:
			return spec, fmt.Errorf("%q: unknown key %q (want python or env.NAME)", item, k)
		}
	}
	return spec, nil
}

// Describe names the side in reports.
func (s Spec) Describe() string {
	if s.Text == "" {
		return "this environment"
	}
	return s.Text
}

// ABSpecsOf are the sides an A/B results directory ran with, read from
// its command line (-a SPEC, -b SPEC); a side it does not name describes
// itself as "this environment".
func ABSpecsOf(m *results.Manifest) [2]Spec {
	var specs [2]Spec
	for i, arg := range m.Command {
		for k, flag := range []string{"-a", "-b"} {
			var text string
			switch {
			case (arg == flag || arg == "-"+flag) && i+1 < len(m.Command):
				text = m.Command[i+1]
			case strings.HasPrefix(arg, flag+"="), strings.HasPrefix(arg, "-"+flag+"="):
				_, text, _ = strings.Cut(arg, "=")
			default:
				continue
			}
			if spec, err := ParseSpec(text); err == nil {
				specs[k] = spec
			}
		}
	}
	return specs
}

// abSides are the variant-name prefixes of the two sides in one results
// directory; SplitAB is the only reader of them.
var abSides = [2]string{"a.", "b."}

// ABCases doubles every variant of the cases, one per side, so that both
// sides run interleaved in one invocation.
func ABCases(cs []*cases.Case, specs [2]Spec) {
	for _, c := range cs {
		var vs []cases.Variant
		for _, v := range c.Variants {
			for i, side := range abSides {
				env := maps.Clone(v.Env)
				if env == nil {
					env = map[string]string{}
				}
				maps.Copy(env, specs[i].Env)
				vs = append(vs, cases.Variant{Name: side + v.Name, Policy: v.Policy, Env: env, Python: specs[i].Python,
					Side: strings.TrimSuffix(side, "."), Of: v.Name})
			}
		}
		c.Variants = vs
	}
}

// SplitAB divides the results of an A/B run into its two sides, under the
// variants' own names.
func SplitAB(d *results.Data, specs [2]Spec) [2]*results.Data {
	sides := d.SplitVariants(abSide)
	for i := range sides {
		sides[i].Path = fmt.Sprintf("%c (%s)", "AB"[i], specs[i].Describe())
	}
	return sides
}

// abSide says which side a variant name belongs to, and its own name.
func abSide(v string) (int, string) {
	for i, p := range abSides {
		if name, ok := strings.CutPrefix(v, p); ok {
			return i, name
		}
	}
	return -1, ""
}

// ABSteps pairs the step series of an A/B run by benchmark, A old, B new.
func ABSteps(steps map[string]*results.Steps) map[string][2]*results.Steps {
	out := map[string][2]*results.Steps{}
	for bench, s := range steps {
		prefix, variant, _ := strings.Cut(bench, "/variant=")
		side, name := abSide(variant)
		if side < 0 {
			continue
		}
		pair := out[prefix+"/variant="+name]
		pair[side] = s
		out[prefix+"/variant="+name] = pair
	}
	return out
}

// Same reports whether two sides name one environment (an A/A check): the
// same interpreter and the same environment variables.
func (s Spec) Same(o Spec) bool {
	return s.Python == o.Python && maps.Equal(s.Env, o.Env)
}

// ABPolicy is how a judged A/B counts what its host left undecided, as a
// gate's Policy does.
type ABPolicy struct {
	// AllowBusy judges timings from runs the host disturbed (-allow-busy).
	AllowBusy bool
	// UnknownFails makes an unknown verdict fail instead of passing with a
	// warning (-unknown fail).
	UnknownFails bool
}

// ABOutcome is a judged A/B.
type ABOutcome struct {
	Comparison *results.Comparison
	// HostBusy says what disturbed the host when it left the timings
	// undecided (UndecideBusy).
	HostBusy string
	Unknowns int
	// Failed: B regressed, or a verdict is unknown under UnknownFails.
	Failed bool
}

// Warnings are what the user should read even when the A/B passes.
func (o *ABOutcome) Warnings(pol ABPolicy) []string {
	var out []string
	if o.Unknowns > 0 && !pol.UnknownFails {
		out = append(out, unknownWarning(o.Unknowns))
	}
	if o.HostBusy != "" {
		out = append(out, busyWarning(o.HostBusy))
	}
	return out
}

// JudgeAB compares B with A in the runs of an A/B session (d, its results
// loaded; m, its manifest with the census runs). Two different specs are an
// environment change (an upgrade, a patch, other thresholds): the
// collection counts and the heap census are judged by what they cost
// (results.CompareOptions.CountsByCost, stats.CensusCost) and otherwise
// explain the costs beside them. Identical specs (A/A) keep zero
// tolerance: the same environment must give the same schedule and heap.
// Both sides run interleaved, but a neighbour's load lands on some runs
// of each, not alike: runs the host disturbed judge no timing
// (UndecideBusy), as in a gate.
func JudgeAB(d *results.Data, m *results.Manifest, specs [2]Spec, cs []*cases.Case, pol ABPolicy) *ABOutcome {
	sides := SplitAB(d, specs)
	aa := specs[0].Same(specs[1])
	byCost := func(bench string) bool {
		return !aa || len(sides[0].Env[bench].Changes(sides[1].Env[bench])) > 0
	}
	cmp := results.Compare(sides[0], sides[1], results.CompareOptions{Primary: Primary(cs), CountsByCost: byCost})
	if m != nil {
		abCensus(cmp, m, byCost)
	}
	if aa {
		cmp.Notes = append(cmp.Notes, "A/A: both sides name one environment, so their GC schedules and heap census must agree exactly (any change in a collection count or the objects walked regresses)")
	} else {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("the sides name different environments: a collection count or heap census that changed is the change's mechanism, reported as what it explains, and fails only where it costs the step over %s (its extra collections x their measured pause; its extra objects x the measured time per object walked)",
			strings.TrimPrefix(stats.Pct(stats.CostFloor), "+")))
	}
	o := &ABOutcome{Comparison: cmp, HostBusy: UndecideBusy(cmp, m, pol.AllowBusy)}
	for _, r := range cmp.Rows {
		if r.Verdict == stats.Unknown {
			o.Unknowns++
		}
	}
	o.Failed = cmp.Regressed() || (o.Unknowns > 0 && pol.UnknownFails)
	return o
}

// CensusMetric is the name of the heap census's row in an A/B comparison:
// the objects one collection of A's top generation walks.
const CensusMetric = "heap-census"

// abCensus adds a heap-census row to each benchmark whose variant has a
// census run on both sides, after the benchmark's other rows: exact, and
// judged by its cost where byCost says the environments differ.
func abCensus(cmp *results.Comparison, m *results.Manifest, byCost func(bench string) bool) {
	census := map[[2]string]*stats.RunSummary{} // {case, variant as run} -> its census run's summary
	for _, r := range m.Census {
		if r.Status == results.StatusOK && r.Summary != nil {
			census[[2]string{r.Case, r.Variant}] = r.Summary
		}
	}
	for _, bench := range benchesOf(cmp) {
		caseName, variant := results.CaseOf(bench), results.VariantOf(bench)
		a, b := census[[2]string{caseName, abSides[0] + variant}], census[[2]string{caseName, abSides[1] + variant}]
		if a == nil || b == nil {
			continue
		}
		old := golden.Census{Collections: a.Collections, Walked: a.Walked}
		new := golden.Census{Collections: b.Collections, Walked: b.Walked}
		g := old.Top()
		if g < 0 {
			continue
		}
		p := stats.Pair{Bench: bench, Metric: CensusMetric, Unit: fmt.Sprintf("objects/gen%d-collection", g), Better: -1,
			Old: []float64{old.PerCollection(g)}, New: []float64{new.PerCollection(g)}}
		sameEnv := !byCost(bench)
		if !sameEnv && new.PerCollection(g) > 0 {
			p.Cost = stats.CensusCost(cmp.New.Runs[bench], g, old.PerCollection(g), new.PerCollection(g))
		}
		r := stats.ExactRow(p)
		switch {
		case sameEnv && old != new:
			// The same environment walks the same heap: a change either
			// way is a failure, like a changed schedule.
			r.Verdict = stats.Regressed
			r.Reason = fmt.Sprintf("exact: the same environment walked another heap: %s -> %s", old, new)
		case !sameEnv && p.Cost == nil:
			// B made none of these collections (a collector without
			// them, thresholds that never reach them): no heap to weigh
			// against A's. The collection counts, priced by their cost,
			// say what that is worth.
			r.Verdict = stats.Descriptive
			r.Reason = fmt.Sprintf("not judged: %s -> %s: B made no gen%d collection whose walk could be priced; the collection counts and their cost decide", old, new, g)
		}
		last := 0
		for i, row := range cmp.Rows {
			if row.Bench == bench {
				last = i
				if p.Cost != nil && row.Metric == fmt.Sprintf("gen%d-collections", g) {
					// Fewer full collections that each walk more are one
					// change: judged on their sum.
					stats.DecideTogether(row, r)
				}
			}
		}
		cmp.Rows = slices.Insert(cmp.Rows, last+1, r)
	}
}

// benchesOf are the benchmarks of a comparison's rows, in order.
func benchesOf(cmp *results.Comparison) []string {
	var out []string
	for _, r := range cmp.Rows {
		if !slices.Contains(out, r.Bench) {
			out = append(out, r.Bench)
		}
	}
	return out
}
