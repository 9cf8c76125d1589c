package report

import (
	"encoding/json"
	"io"

	"github.com/gcjitter/gcjitter/stats"
)

// JSONSchema is the version of the JSON report (docs/reports.md).
const JSONSchema = 1

type jsonDoc struct {
	Schema    int    `json:"schema"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	Generated string `json:"generated"`
	// Partial says why the report covers less than was planned; absent
	// when it covers it all.
	Partial   string         `json:"partial,omitempty"`
	Old       string         `json:"old,omitempty"`
	New       string         `json:"new,omitempty"`
	Alpha     float64        `json:"alpha,omitempty"`
	Verdicts  map[string]int `json:"verdicts"`
	Notes     []string       `json:"notes"`
	Rows      []jsonRow      `json:"rows"`
	Spikes    []jsonBench    `json:"spikes"`
	Schedules []jsonSchedule `json:"schedules,omitempty"`
	// Variants: one results directory's runs, summarised (no comparison).
	Variants []VariantSummary `json:"variants,omitempty"`
	// Reference is the variant the others were compared with, when the
	// report compares one results directory's policies.
	Reference string       `json:"reference,omitempty"`
	Failed    []jsonFailed `json:"failed_runs"`
	// Framing is what the comparison compares (results.Comparison.Framing):
	// "old-vs-new", where a verdict regressed is a regression, or
	// "policies-vs-reference", where it means worse than the reference.
	// Status is the banner's word. Absent without a comparison.
	Framing string `json:"framing,omitempty"`
	Status  string `json:"status,omitempty"`
	// Answers are what to set per case (advise), where the report shows
	// one results directory's policies.
	Answers []jsonAnswer `json:"answers,omitempty"`
	// Sensitivity is, per decisive metric (p50, p99), the largest
	// detectable change of its tested rows: what a pass is worth.
	Sensitivity []jsonSensitivity `json:"sensitivity,omitempty"`
	// Explanations split each benchmark's change into its parts
	// (collection frequency, heap walked, cost per object, the steps
	// themselves), where both sides have run summaries.
	Explanations []jsonExplanation `json:"explanations,omitempty"`
}

type jsonSensitivity struct {
	Metric     string   `json:"metric"`
	Detectable *float64 `json:"detectable"` // null: the worst row could see none
	Worst      string   `json:"worst_bench"`
	Runs       string   `json:"worst_runs"` // "old+new"
	Rows       int      `json:"rows"`
}

type jsonAnswer struct {
	Case      string   `json:"case"`
	Headline  string   `json:"headline"`
	Pick      string   `json:"pick,omitempty"`
	Policy    string   `json:"policy,omitempty"`
	Undecided bool     `json:"undecided"`
	Reason    string   `json:"reason,omitempty"`
	Warning   string   `json:"warning,omitempty"`
	Settle    []string `json:"settle,omitempty"`
	Under     string   `json:"under,omitempty"`
	Error     string   `json:"error,omitempty"`
}

type jsonEst struct {
	Center *float64  `json:"center"`
	Lo     *float64  `json:"lo"` // null: no finite bound
	Hi     *float64  `json:"hi"`
	N      int       `json:"n"`
	Values []float64 `json:"values"`
}

type jsonRow struct {
	Bench     string   `json:"bench"`
	Metric    string   `json:"metric"`
	Unit      string   `json:"unit"`
	Better    string   `json:"better"`
	Exact     bool     `json:"exact"`
	Old       jsonEst  `json:"old"`
	New       jsonEst  `json:"new"`
	Change    *float64 `json:"change"` // relative: 0.05 is +5%
	ChangeLo  *float64 `json:"change_lo"`
	ChangeHi  *float64 `json:"change_hi"`
	P         *float64 `json:"p"`
	PAdjusted *float64 `json:"p_adjusted"`
	Floor     float64  `json:"floor"`
	Verdict   string   `json:"verdict"`
	// Relation is the verdict in the comparison's framing: "worse" and
	// "better" against a reference variant, else the verdict.
	Relation string `json:"relation"`
	Reason   string `json:"reason"`
	// Detectable is the smallest change the row's test detects with 95%
	// power at its size (stats.Row.Detectable); null when untested or none.
	Detectable *float64 `json:"detectable"`
	RunsNeeded int      `json:"runs_needed,omitempty"` // per side, in all
	MoreRuns   int      `json:"more_runs,omitempty"`   // per side, beyond those there
	Warnings   []string `json:"warnings"`
	// Cost, for a mechanism's change judged by its cost (an environment
	// changed): its time as a share of the mean step (null: not
	// measured), and how it was priced; Explains when it is under the
	// cost floor, reported as the cause and not judged.
	Cost     *float64 `json:"cost_share,omitempty"`
	CostWhat string   `json:"cost_what,omitempty"`
	Explains bool     `json:"explains,omitempty"`
}

// jsonBench is a benchmark's spike line: per side, null where the side
// has no run summaries (benchfmt input).
type jsonBench struct {
	Bench string      `json:"bench"`
	Old   *jsonSpikes `json:"old"`
	New   *jsonSpikes `json:"new"`
}

type jsonSpikes struct {
	Runs           int      `json:"runs"`
	Steps          int      `json:"steps"`
	StepsPerRun    int      `json:"steps_per_run"`
	Spikes         int      `json:"spikes"`
	SpikesWithGC   int      `json:"spikes_with_gc"`
	SpikesPerKStep float64  `json:"spikes_per_kstep"`
	WithGCFraction *float64 `json:"with_gc_fraction"` // null without spikes
	PeriodSteps    *float64 `json:"period_steps"`     // null unless most runs spike periodically
}

func spikesJSON(sp *sideSpikes) *jsonSpikes {
	if sp == nil {
		return nil
	}
	j := &jsonSpikes{Runs: sp.Runs, Steps: sp.Steps, StepsPerRun: sp.stepsPerRun(), Spikes: sp.Spikes, SpikesWithGC: sp.WithGC,
		SpikesPerKStep: sp.perKStep(), WithGCFraction: stats.Finite(sp.withGCFraction())}
	if sp.Period > 0 {
		j.PeriodSteps = &sp.Period
	}
	return j
}

type jsonSchedule struct {
	Case     string `json:"case"`
	Baseline string `json:"baseline"`
	// What the text report's "baseline ..." line shows: the baseline's
	// environment key, when and with which gcjitter it was made.
	BaselineEnv  string              `json:"baseline_environment"`
	BaselineDate string              `json:"baseline_date"`
	BaselineTool string              `json:"baseline_tool"`
	EnvChanges   []string            `json:"environment_changes"`
	Failed       bool                `json:"failed"`
	Changes      map[string][]string `json:"changes"` // variant -> diff lines
	Notes        []string            `json:"notes"`
}

type jsonFailed struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	Stderr string `json:"stderr_tail,omitempty"`
}

// JSON writes the versioned machine-readable report: every figure the text
// shows, with the verdict reasons.
func JSON(w io.Writer, d *Doc) error {
	out := jsonDoc{Schema: JSONSchema, Kind: d.Kind, Title: d.Title, Generated: d.Generated.UTC().Format("2006-01-02T15:04:05Z"),
		Verdicts: map[string]int{}, Notes: []string{}, Rows: []jsonRow{}, Spikes: []jsonBench{}, Failed: []jsonFailed{},
		Partial: d.Partial()}
	for v, n := range d.Counts() {
		out.Verdicts[string(v)] = n
	}
	if d.ShowsPolicies() {
		out.Variants = VariantSummaries(d.Manifest)
		out.Reference = d.Reference
	}
	for _, v := range []stats.Verdict{stats.Regressed, stats.Improved, stats.Same, stats.Unknown} {
		out.Verdicts[string(v)] += 0
	}
	for _, a := range d.Answers {
		out.Answers = append(out.Answers, jsonAnswer{Case: a.Case, Headline: a.Headline(), Pick: a.Pick, Policy: a.Policy, Undecided: a.Undecided,
			Reason: a.Reason, Warning: a.Warning, Settle: a.Settle, Under: a.Under, Error: a.Err})
	}
	if c := d.Comparison; c != nil {
		out.Old, out.New, out.Alpha = c.Old.Path, c.New.Path, c.Alpha
		out.Framing, out.Status = c.Framing(), d.Status()
		out.Notes = append(out.Notes, c.Notes...)
		out.Explanations = explainJSON(c)
		for _, s := range c.Sensitivity() {
			out.Sensitivity = append(out.Sensitivity, jsonSensitivity{Metric: s.Metric, Detectable: stats.Finite(s.Detectable),
				Worst: s.Worst.Bench, Runs: s.Worst.Sizes(), Rows: s.Rows})
		}
		seen := map[string]bool{}
		for _, r := range c.Rows {
			better := "lower"
			if r.Better > 0 {
				better = "higher"
			}
			row := jsonRow{Bench: r.Bench, Metric: r.Metric, Unit: r.Unit, Better: better, Exact: r.Exact,
				Old: est(r.OldEst, r.Old), New: est(r.NewEst, r.New),
				Change: stats.Finite(r.Change), ChangeLo: stats.Finite(r.ChangeLo), ChangeHi: stats.Finite(r.ChangeHi),
				P: stats.Finite(r.P), PAdjusted: stats.Finite(r.PAdj), Floor: r.Floor, Verdict: string(r.Verdict), Relation: c.Word(r.Verdict), Reason: r.Reason,
				Detectable: stats.Finite(r.Detectable), RunsNeeded: r.RunsNeeded, MoreRuns: r.MoreRuns(), Warnings: append([]string{}, r.Warnings...)}
			if r.Cost != nil {
				row.Cost, row.CostWhat, row.Explains = stats.Finite(r.Cost.Share), r.Cost.What, r.Explains()
			}
			out.Rows = append(out.Rows, row)
			if seen[r.Bench] {
				continue
			}
			seen[r.Bench] = true
			if sp := benchSpikes(c, r.Bench); sp[0] != nil || sp[1] != nil {
				out.Spikes = append(out.Spikes, jsonBench{Bench: r.Bench, Old: spikesJSON(sp[0]), New: spikesJSON(sp[1])})
			}
		}
	}
	for _, s := range d.Schedules {
		js := jsonSchedule{Case: s.Golden.Case, Baseline: s.Path, BaselineEnv: s.Golden.Env.Key(),
			BaselineDate: s.Golden.Provenance.Date, BaselineTool: s.Golden.Provenance.Tool, EnvChanges: append([]string{}, s.EnvChanges...),
			Failed: s.ScheduleFailed(), Changes: map[string][]string{}, Notes: append([]string{}, s.Notes...)}
		for _, c := range s.Schedule {
			js.Changes[c.Variant] = c.Lines
		}
		out.Schedules = append(out.Schedules, js)
	}
	for _, r := range d.FailedRuns() {
		out.Failed = append(out.Failed, jsonFailed{ID: r.ID, Status: r.Status, Reason: r.Reason, Stderr: r.StderrTail})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func est(e stats.Estimate, values []float64) jsonEst {
	return jsonEst{Center: stats.Finite(e.Center), Lo: stats.Finite(e.Lo), Hi: stats.Finite(e.Hi), N: e.N, Values: append([]float64{}, values...)}
}
