package results

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/gcjitter/gcjitter/stats"
)

// Families a comparison can test its primary metrics in (CompareOptions.Family).
const (
	// FamilyComparison: one Holm family over every tested metric of every
	// benchmark compared. The default: a gate fails falsely at most alpha
	// of the time, however many cases it runs.
	FamilyComparison = "comparison"
	// FamilyCase: one family per case (its variants' primary metrics).
	FamilyCase = "case"
	// FamilyBenchmark: one family per benchmark (a variant's primary
	// metrics). The false-alarm rate then grows with the benchmarks.
	FamilyBenchmark = "benchmark"
)

// CompareOptions configure Compare.
type CompareOptions struct {
	// Alpha is the family-wise alpha. 0: the alpha the sides' cases set
	// when they agree (the smallest, with a note, when they do not), else
	// stats.DefaultAlpha.
	Alpha float64
	// Floors override every other floor, by metric name (p99) or unit.
	Floors map[string]float64
	// DefaultFloor is the floor of foreign units (not gcjitter metrics).
	DefaultFloor float64
	// Primary names the metrics tested per case name ("" for every case);
	// cases it does not name test what their manifest's cases say
	// (gate.primary), else stats.DefaultPrimary. The other gcjitter
	// metrics are descriptive; foreign units are all tested.
	Primary map[string][]string
	// Family is FamilyComparison (""), FamilyCase or FamilyBenchmark.
	Family string
	// Drift is the session drift of a benchmark's metric when the sides
	// come from different sessions (stats.Options.Drift); nil: none.
	Drift func(bench, metric string) float64
	// CountsByCost says of a benchmark that its sides ran in different
	// environments (another interpreter, torch, thresholds: an upgrade's
	// A/B, a gate across an environment change): its collection counts are
	// then judged by what the change costs (stats.CountCost against
	// stats.CostFloor), not exactly. False: exactly (A/A, the same
	// environment). Nil: by cost where the two sides' recorded
	// environments differ (results.Env.Changes), as for compare.
	CountsByCost func(bench string) bool
	// OldFixed: the old side is a baseline more runs do not grow (a gate):
	// an unknown asks for new runs alone (stats.Options.OldFixed).
	OldFixed bool
}

// Comparison is the judgement of NEW against OLD.
type Comparison struct {
	Old, New *Data
	Alpha    float64
	// Family is how the tested rows were grouped for Holm's correction.
	Family string
	Rows   []*stats.Row
	// Notes are facts about the inputs worth reading before the verdicts:
	// left-out benches and metrics, environment changes.
	Notes []string
	// Reference is the variant every other was compared with when the
	// comparison is one results directory's policies side by side
	// (CompareVariants), "" for old -> new. It frames the words: a policy
	// is better or worse than the reference; only a change of one thing
	// regresses.
	Reference string
}

// Word is the word for verdict v in this comparison's framing: against a
// reference variant, "worse" and "better" (a policy slower than default
// is a finding, not a breakage); old -> new, the verdict itself.
func (c *Comparison) Word(v stats.Verdict) string {
	if c.Reference == "" {
		return string(v)
	}
	switch v {
	case stats.Regressed:
		return "worse"
	case stats.Improved:
		return "better"
	}
	return string(v)
}

// Framing says what the comparison compares, for reports and JSON:
// "old-vs-new", or "policies-vs-reference".
func (c *Comparison) Framing() string {
	if c.Reference == "" {
		return "old-vs-new"
	}
	return "policies-vs-reference"
}

// Regressed reports whether any row regressed (descriptive rows never
// do).
func (c *Comparison) Regressed() bool {
	return slices.ContainsFunc(c.Rows, func(r *stats.Row) bool { return r.Verdict == stats.Regressed })
}

// VariantVerdicts is the overall verdict of every benchmark (case
// variant), weighing the pauses against the collection counts (fewer,
// longer collections are not an improvement).
func (c *Comparison) VariantVerdicts() []stats.VariantVerdict { return stats.VariantVerdicts(c.Rows) }

// Tests is the number of tested rows and of families they form.
func (c *Comparison) Tests() (tests, families int) {
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if r.Tested() {
			tests++
			seen[r.Family] = true
		}
	}
	return tests, len(seen)
}

// CaseOf is the case of a bench name (BenchName), "" for foreign names.
func CaseOf(bench string) string {
	_, rest, ok := strings.Cut(bench, "case=")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// VariantOf is the variant of a bench name (BenchName), "" for foreign
// names.
func VariantOf(bench string) string {
	_, v, _ := strings.Cut(bench, "/variant=")
	return v
}

// manifestCases are the cases of a side's manifest, when the side is a
// results directory (nil for benchfmt files, baselines and split sides).
func manifestCases(d *Data) map[string]Case {
	if st, err := os.Stat(filepath.Join(d.Path, ManifestFile)); err != nil || st.IsDir() {
		return nil
	}
	m, err := ReadManifest(d.Path)
	if err != nil {
		return nil
	}
	out := map[string]Case{}
	for _, c := range m.Cases {
		out[c.Name] = c
	}
	return out
}

// alphaFor is the explicit alpha, else the one the sides' cases agree on.
func alphaFor(opt CompareOptions, old, new *Data, cases [2]map[string]Case) (float64, string) {
	if opt.Alpha > 0 {
		return opt.Alpha, ""
	}
	set := map[float64][]string{}
	for i, d := range []*Data{old, new} {
		named := false
		for _, name := range slices.Sorted(maps.Keys(cases[i])) {
			if a := cases[i][name].Alpha; a > 0 {
				set[a] = append(set[a], name)
				named = true
			}
		}
		if !named && d.Alpha > 0 {
			set[d.Alpha] = append(set[d.Alpha], d.Path)
		}
	}
	if len(set) == 0 {
		return stats.DefaultAlpha, ""
	}
	alphas := make([]float64, 0, len(set))
	for a := range set {
		alphas = append(alphas, a)
	}
	slices.Sort(alphas)
	if len(alphas) == 1 {
		return alphas[0], ""
	}
	var parts []string
	for _, a := range alphas {
		parts = append(parts, fmt.Sprintf("%g (%s)", a, strings.Join(slices.Compact(slices.Sorted(slices.Values(set[a]))), ", ")))
	}
	return alphas[0], fmt.Sprintf("the cases set different alphas, %s: using the smallest, %g, for the whole comparison (-alpha sets one)", strings.Join(parts, ", "), alphas[0])
}

// steps are the measured steps of a side's runs of bench: every run's from
// a results directory, else the fewest a line has.
// sameLength: every run of both sides has one length (known).
func sameLength(old, new []int) bool {
	all := append(slices.Clone(old), new...)
	return len(all) > 0 && slices.Min(all) == slices.Max(all)
}

func steps(d *Data, bench string) []int {
	var out []int
	for _, r := range d.Runs[bench] {
		out = append(out, r.Steps)
	}
	if len(out) == 0 {
		if n, ok := d.MinIters[bench]; ok {
			out = []int{n}
		}
	}
	return out
}

// PerStepLines is how many one-iteration result lines of one benchmark
// make Compare suspect that each line is a step, not a run.
const PerStepLines = 100

// Compare pairs the benches and units both sides have and judges them.
func Compare(old, new *Data, opt CompareOptions) *Comparison {
	cases := [2]map[string]Case{manifestCases(old), manifestCases(new)}
	c := &Comparison{Old: old, New: new, Family: opt.Family}
	if c.Family == "" {
		c.Family = FamilyComparison
	}
	var alphaNote string
	c.Alpha, alphaNote = alphaFor(opt, old, new, cases)
	c.Notes = append(c.Notes, old.Warnings...)
	c.Notes = append(c.Notes, new.Warnings...)
	if alphaNote != "" {
		c.Notes = append(c.Notes, alphaNote)
	}
	for _, d := range []*Data{old, new} {
		for _, b := range d.Benches {
			lines := 0
			for _, u := range d.Units[b] {
				lines = max(lines, len(d.Values[b][u]))
			}
			if d.MinIters[b] == 1 && len(d.Runs[b]) == 0 && lines >= PerStepLines {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: %s has %d result lines of 1 iteration each: if each line is one step, the steps of one process are not independent runs and the tests will call noise significant; give one line per run (its summary)", d.Path, b, lines))
			}
		}
	}
	for _, b := range old.Benches {
		if new.Values[b] == nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s is only in %s: not compared", b, old.Path))
		}
	}
	primary := func(bench string) []string {
		name := CaseOf(bench)
		if p, ok := opt.Primary[name]; ok {
			return p
		}
		if p, ok := opt.Primary[""]; ok {
			return p
		}
		for _, cs := range []map[string]Case{cases[1], cases[0]} {
			if p := cs[name].Primary; len(p) > 0 {
				return p
			}
		}
		return nil
	}
	floorOf := map[[2]string]float64{}
	oneSided := oneSidedUnits{}
	unknownDir := map[string]bool{}
	leftOut := map[string][]int{}
	var pairs []stats.Pair
	for _, b := range new.Benches {
		if old.Values[b] == nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s is only in %s: not compared", b, new.Path))
			continue
		}
		oe, oldHas := old.Env[b]
		ne, newHas := new.Env[b]
		ch := oe.Changes(ne)
		envChanged := oldHas && newHas && len(ch) > 0
		if envChanged {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: environment changed: %s", b, strings.Join(ch, ", ")))
		}
		// Counts across an environment change are its mechanism, judged by
		// their cost, as the gate and ab judge them; the caller may say so
		// itself (a gate knows its baseline's environment).
		byCost := envChanged
		if opt.CountsByCost != nil {
			byCost = opt.CountsByCost(b)
		}
		// A warm child's RSS leaves out the pages of torch's libraries that
		// its server's import touched and it never does (docs/worker.md):
		// its level is not a cold run's, its growth is.
		startsDiffer := oldHas && newHas && oe.Start != "" && ne.Start != "" && oe.Start != ne.Start
		if startsDiffer {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: runs started %s in %s and %s in %s; both make the same GC schedule (docs/worker.md, \"Warm starts\"); rss-peak is not compared across starts",
				b, oe.Start, old.Path, ne.Start, new.Path))
		}
		oldSteps, newSteps := steps(old, b), steps(new, b)
		if n := memoryNote(b, old.Runs[b], new.Runs[b], oldSteps, newSteps); n != "" {
			c.Notes = append(c.Notes, n)
		}
		if all := append(slices.Clone(oldSteps), newSteps...); len(all) > 0 && slices.Min(all) != slices.Max(all) {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: runs of different lengths (old %s steps, new %s): collection counts and maxima are reported, not judged", b, joinInts(oldSteps), joinInts(newSteps)))
		}
		for _, u := range old.Units[b] {
			if _, ok := new.Values[b][u]; !ok {
				oneSided.add(c, b, u, old.Path)
			}
		}
		var benchPairs []stats.Pair
		for _, u := range new.Units[b] {
			if startsDiffer && u == rssPeakUnit {
				continue
			}
			oldVals, ok := old.Values[b][u]
			if !ok {
				oneSided.add(c, b, u, new.Path)
				continue
			}
			p := stats.Pair{Bench: b, Metric: u, Unit: u, Old: oldVals, New: new.Values[b][u], OldSteps: oldSteps, NewSteps: newSteps}
			if m, ok := stats.MetricByUnit(u); ok {
				p.Metric, p.Exact, p.Better = m.Name, m.Exact, m.Better()
				if g, ok := collectionsGen(m.Name); ok && byCost && len(oldVals) > 0 && len(p.New) > 0 {
					p.Cost = stats.CountCost(old.Runs[b], new.Runs[b], g, oldVals[0], p.New[0])
				}
				if steps := min(old.MinIters[b], new.MinIters[b]); !m.Judged(steps, sameLength(oldSteps, newSteps)) {
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
			benchPairs = append(benchPairs, p)
		}
		stats.MarkPrimary(benchPairs, primary(b))
		pairs = append(pairs, benchPairs...)
	}
	oneSided.notes(c)
	for _, m := range stats.Metrics {
		if steps := leftOut[m.Name]; len(steps) > 0 {
			if m.EqualLengthsFree {
				c.Notes = append(c.Notes, fmt.Sprintf("%s left out of %d benchmark(s): runs of different lengths with %d steps or fewer; across lengths it needs %d (a finite interval in each run), at one length any size", m.Name, len(steps), slices.Max(steps), m.MinSteps))
				continue
			}
			c.Notes = append(c.Notes, fmt.Sprintf("%s left out of %d benchmark(s): runs have %d steps or fewer, a finite interval needs %d", m.Name, len(steps), slices.Max(steps), m.MinSteps))
		}
	}
	family := func(p stats.Pair) string { return "" }
	switch c.Family {
	case FamilyCase:
		family = func(p stats.Pair) string { return CaseOf(p.Bench) }
	case FamilyBenchmark:
		family = func(p stats.Pair) string { return p.Bench }
	}
	// One Compare call: Holm's correction spans each family whole.
	c.Rows = stats.Compare(pairs, stats.Options{
		Alpha:    c.Alpha,
		OldFixed: opt.OldFixed,
		Floor:    func(p stats.Pair) float64 { return floorOf[[2]string{p.Bench, p.Metric}] },
		Family:   family,
		Drift: func(p stats.Pair) float64 {
			if opt.Drift == nil {
				return 0
			}
			return opt.Drift(p.Bench, p.Metric)
		},
	})
	fasterSteps(c)
	return c
}

// oneSidedUnits gathers gcjitter's metrics that only one side has (a
// baseline made before memory was measured, a run on a device the other
// lacks), by side and metric, so that each says so once, not once per
// benchmark; other units get a note each.
type oneSidedUnits map[[2]string][]string // {path, unit} -> benches

func (o oneSidedUnits) add(c *Comparison, bench, unit, path string) {
	if _, ok := stats.MetricByUnit(unit); !ok {
		c.Notes = append(c.Notes, fmt.Sprintf("%s: unit %s is only in %s: not compared", bench, unit, path))
		return
	}
	o[[2]string{path, unit}] = append(o[[2]string{path, unit}], bench)
}

func (o oneSidedUnits) notes(c *Comparison) {
	byPath := map[string][]string{}
	benches := map[string]int{}
	for _, m := range stats.Metrics {
		_, tidied := benchunit.Tidy(1, m.Unit)
		for _, u := range slices.Compact([]string{m.Unit, tidied}) {
			for k, bs := range o {
				if k[1] == u {
					byPath[k[0]] = append(byPath[k[0]], u)
					benches[k[0]] = max(benches[k[0]], len(bs))
				}
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		units := byPath[p]
		what := "unit " + units[0] + " is"
		if len(units) > 1 {
			what = "units " + strings.Join(units, ", ") + " are"
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s only in %s (%d benchmark(s)): not compared (the other side did not measure them: a baseline made before the metric existed, or a device the other side lacks)", what, p, benches[p]))
	}
}

// memoryNote says what each side's memory does (stats.PoolMem) where it
// matters beside the rss-growth row: a side grows, or the sides' classes
// differ; "" otherwise, or where a side recorded no RSS.
func memoryNote(b string, old, new []stats.RunSummary, oldSteps, newSteps []int) string {
	pool := func(runs []stats.RunSummary, steps []int) stats.MemPool {
		var ms []*stats.Mem
		for _, r := range runs {
			ms = append(ms, r.RSS)
		}
		return stats.PoolMem(ms, slices.Max(append([]int{0}, steps...)))
	}
	o, n := pool(old, oldSteps), pool(new, newSteps)
	if o.Class == "" || n.Class == "" || o.Class == n.Class && o.Class != stats.MemGrows {
		return ""
	}
	return fmt.Sprintf("%s: memory: old %s, new %s", b, o.Describe(), n.Describe())
}

func joinInts(xs []int) string {
	u := slices.Compact(slices.Sorted(slices.Values(xs)))
	parts := make([]string, len(u))
	for i, x := range u {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "/")
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

// Sensitivity is what a comparison's size could see in one decisive
// metric: the largest of its tested rows' detectable changes (at 95%
// power), the row that has it, and how many rows were tested. A gate that
// passes says this much and no more: a change under Detectable in the
// worst row could have gone unseen.
type Sensitivity struct {
	Metric string
	// Detectable is the worst row's (stats.Row.Detectable; +Inf: that row
	// could see no change).
	Detectable float64
	Worst      *stats.Row
	Rows       int
}

// Sensitivity is, per stats.Stated metric with a tested row, what the
// comparison could detect.
func (c *Comparison) Sensitivity() []Sensitivity {
	var out []Sensitivity
	for _, metric := range stats.Stated {
		s := Sensitivity{Metric: metric}
		for _, r := range c.Rows {
			if r.Metric != metric || !r.Tested() || math.IsNaN(r.Detectable) {
				continue
			}
			s.Rows++
			if s.Worst == nil || r.Detectable > s.Detectable {
				s.Worst, s.Detectable = r, r.Detectable
			}
		}
		if s.Rows > 0 {
			out = append(out, s)
		}
	}
	return out
}

// String: "p99 +38% (the worst of 7 rows: ascend/default at 5+5 runs)".
func (s Sensitivity) String() string {
	what := stats.Pct(s.Detectable)
	if math.IsInf(s.Detectable, 1) {
		what = "none"
	}
	where := fmt.Sprintf("%s at %s runs", s.Worst.Bench, s.Worst.Sizes())
	if s.Rows > 1 {
		where = fmt.Sprintf("the worst of %d rows: %s", s.Rows, where)
	}
	return fmt.Sprintf("%s %s (%s)", s.Metric, what, where)
}

// SensitivityText is the line every comparison report states its
// sensitivity in; "" when no decisive metric was tested.
func (c *Comparison) SensitivityText() string {
	var parts []string
	sens := c.Sensitivity()
	for _, metric := range stats.Stated {
		i := slices.IndexFunc(sens, func(s Sensitivity) bool { return s.Metric == metric })
		switch {
		case i >= 0:
			parts = append(parts, sens[i].String())
		case !slices.Contains(stats.Decisive, metric):
			// Stated where tested (a baseline from before it has none).
		default:
			// Reported only, or not at all (too short a run for its
			// interval): a pass says nothing of it.
			parts = append(parts, metric+" not tested")
		}
	}
	if len(sens) == 0 {
		return ""
	}
	return fmt.Sprintf("smallest change detected with %.0f%% power: %s; a smaller one can pass unseen", 100*stats.DetectPower, strings.Join(parts, "; "))
}

// rssPeakUnit is the unit of stats' rss-peak metric.
const rssPeakUnit = "rss-peak-bytes"
