package advise

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/stats"
)

// Text writes the advice for a terminal: the Pareto table, the
// recommendation with its reason, what binds, how to set it, the interval
// search.
func (a *Advice) Text(w io.Writer) error {
	var b strings.Builder
	from := ""
	if a.LimitFrom != "" {
		from = " from " + a.LimitFrom
	}
	fmt.Fprintf(&b, "case %s: %d policies against %s; job %s, memory limit %s%s\n\n", a.Case, len(a.Candidates), a.Reference, hoursText(a.Duration), stats.Bytes(a.Limit), from)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tp99\tspikes/kstep\tgen2 pause\tp50\tmean step\trss growth/kstep [90%]\tmemory\tto limit\tqualifies")
	for _, j := range a.Candidates {
		v := func(metric string) string {
			if j.Variant == a.Reference {
				return ""
			}
			return " " + verdictOr(j.Verdicts[metric])
		}
		growth, class, limit := "not recorded", "", "not recorded"
		if j.Fate != NotRecorded {
			growth = fmt.Sprintf("%s [%s, %s]%s", stats.Bytes(j.Mem.Growth), stats.Bytes(j.Mem.Lo), stats.Bytes(j.Mem.Hi), v("rss-growth"))
			class, limit = string(j.Mem.Class), stats.HoursRange(j.SoonestHours, j.LimitHours)
			if j.Fate == MemUnsure && j.Mem.Class != stats.MemGrows {
				limit = fmt.Sprintf("undecided: %d steps", j.StepsNeeded)
			}
			if j.Mem.Class == stats.MemGrows && j.Mem.NextFull > 0 {
				// Until the first full collection the counts predict.
				class = fmt.Sprintf("grows to step %d", j.Mem.NextFull)
				if j.Fate == Lasts {
					limit = "never: peak " + stats.Bytes(j.NeedBytes)
				}
			}
		}
		q := "yes"
		if !j.Qualifies() {
			q = "no: " + strings.Join(j.Excluded, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.1f%s\t%s%s\t%s%s\t%s\t%s\t%s\t%s\t%s\n", j.Variant, stats.MS(j.P99), v("p99"), j.SpikeRate, v("spike-rate"),
			stats.MS(j.Gen2Pause), v("gen2-pause"), stats.MS(j.P50), v("p50"), stats.MS(j.MeanStep), growth, class, limit, q)
	}
	tw.Flush()
	b.WriteString("\n")
	switch {
	case a.Pick != nil && a.Warning != "":
		fmt.Fprintf(&b, "recommendation: %s (warning: %s)\n", a.Pick.Variant, a.Warning)
	case a.Pick != nil:
		fmt.Fprintf(&b, "recommendation: %s\n", a.Pick.Variant)
	case a.Undecided:
		b.WriteString("recommendation: undecided\n")
	default:
		b.WriteString("recommendation: none\n")
	}
	fmt.Fprintf(&b, "  reason: %s\n", a.Reason)
	for _, s := range a.Settle {
		fmt.Fprintf(&b, "  settle %s\n", s)
	}
	if a.Binding != "" {
		fmt.Fprintf(&b, "  binding: %s (%s)\n", a.Binding, a.Blocked.Variant)
		for _, r := range a.Relax {
			fmt.Fprintf(&b, "  relax %s\n", r)
		}
	}
	if a.Pick != nil {
		b.WriteString("set it:\n")
		for _, s := range Settings(a.Pick.Policy) {
			// Code (the callbacks) goes below its stack, indented.
			if strings.Contains(s.How, "\n") {
				fmt.Fprintf(&b, "  %s:\n      %s\n", s.Stack, strings.ReplaceAll(s.How, "\n", "\n      "))
				continue
			}
			fmt.Fprintf(&b, "  %s: %s\n", s.Stack, s.How)
		}
	}
	for _, iv := range a.Intervals {
		fmt.Fprintf(&b, "interval %s (N measured: %s): ", iv.Family, joinInts(iv.Ns))
		if iv.Largest > 0 {
			fmt.Fprintf(&b, "largest N whose memory lasts %s: %d; ", hoursText(a.Duration), iv.Largest)
		} else if iv.Unsure {
			fmt.Fprintf(&b, "no N measured is known to last %s (memory undecided: longer runs would tell); ", hoursText(a.Duration))
		} else {
			fmt.Fprintf(&b, "no N measured lasts %s; ", hoursText(a.Duration))
		}
		fmt.Fprintf(&b, "smallest mean step at N=%d\n", iv.Fastest)
	}
	for _, n := range a.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// JSON form (for scripts): recommendation.status (recommended, undecided
// or none), recommendation.variant ("" unless recommended),
// recommendation.warning (what is worse about the pick than the
// reference, "" when nothing is), recommendation.reason and settle,
// candidates[] with every figure.
// Figures a run did not measure, and a time to the limit that never comes,
// are null.
type jsonAdvice struct {
	Case           string          `json:"case"`
	Reference      string          `json:"reference"`
	DurationHours  float64         `json:"duration_hours"`
	MemLimitBytes  float64         `json:"mem_limit_bytes"`
	MemLimitFrom   string          `json:"mem_limit_from"`
	Recommendation jsonPick        `json:"recommendation"`
	Binding        string          `json:"binding"`
	Blocked        string          `json:"blocked,omitempty"`
	Relax          []string        `json:"relax,omitempty"`
	Candidates     []jsonCandidate `json:"candidates"`
	Intervals      []jsonInterval  `json:"intervals,omitempty"`
	Notes          []string        `json:"notes,omitempty"`
}

type jsonPick struct {
	Status   string    `json:"status"`
	Warning  string    `json:"warning"`
	Settle   []string  `json:"settle,omitempty"`
	Variant  string    `json:"variant"`
	Policy   string    `json:"policy"`
	Reason   string    `json:"reason"`
	Settings []Setting `json:"settings,omitempty"`
}

type jsonCandidate struct {
	Variant     string         `json:"variant"`
	Policy      string         `json:"policy"`
	Runs        int            `json:"runs"`
	Steps       int            `json:"steps"`
	P50NS       *float64       `json:"p50_ns"`
	P99NS       *float64       `json:"p99_ns"`
	SpikeRate   *float64       `json:"spike_rate_per_kstep"`
	Gen2PauseNS *float64       `json:"gen2_pause_ns"`
	MeanStepNS  *float64       `json:"mean_step_ns"`
	RSSGrowth   *float64       `json:"rss_growth_bytes_per_kstep"`
	RSSGrowthLo *float64       `json:"rss_growth_lo_bytes_per_kstep"`
	RSSGrowthHi *float64       `json:"rss_growth_hi_bytes_per_kstep"`
	MemClass    stats.MemClass `json:"memory_class"`
	// MemWhy is the class in the collector's words, FirstFull the
	// predicted step of a first full collection the runs did not reach.
	MemWhy       string                   `json:"memory_why,omitempty"`
	FirstFull    int                      `json:"first_full_collection_predicted_step,omitempty"`
	MemFate      Fate                     `json:"memory_fate"`
	StepsNeeded  int                      `json:"memory_steps_needed,omitempty"`
	WorstPeak    *float64                 `json:"worst_rss_peak_bytes"`
	StepsToLimit *float64                 `json:"steps_to_limit"`
	HoursToLimit *float64                 `json:"hours_to_limit"`
	SoonestHours *float64                 `json:"hours_to_limit_soonest"`
	NeedBytes    *float64                 `json:"mem_needed_bytes"`
	Memory       bool                     `json:"memory_recorded"`
	Verdicts     map[string]stats.Verdict `json:"verdicts"`
	Tail         stats.Verdict            `json:"tail_verdict"`
	Qualifies    bool                     `json:"qualifies"`
	Excluded     []string                 `json:"excluded_by"`
}

type jsonInterval struct {
	Family  string `json:"family"`
	Ns      []int  `json:"ns"`
	Largest int    `json:"largest_lasting"`
	Fastest int    `json:"fastest"`
	Unsure  bool   `json:"memory_undecided,omitempty"`
}

// JSON writes the advice for scripts.
func (a *Advice) JSON(w io.Writer) error {
	out := jsonAdvice{Case: a.Case, Reference: a.Reference, DurationHours: a.Duration.Hours(), MemLimitBytes: a.Limit, MemLimitFrom: a.LimitFrom,
		Recommendation: jsonPick{Status: "none", Warning: a.Warning, Settle: a.Settle, Reason: a.Reason}, Binding: a.Binding, Relax: a.Relax, Notes: a.Notes}
	if a.Undecided {
		out.Recommendation.Status = "undecided"
	}
	if a.Pick != nil {
		out.Recommendation.Status = "recommended"
		out.Recommendation.Variant, out.Recommendation.Policy = a.Pick.Variant, a.Pick.Policy
		out.Recommendation.Settings = Settings(a.Pick.Policy)
	}
	if a.Blocked != nil {
		out.Blocked = a.Blocked.Variant
	}
	for _, j := range a.Candidates {
		c := jsonCandidate{Variant: j.Variant, Policy: j.Policy, Runs: j.Runs, Steps: j.Steps,
			P50NS: stats.Finite(j.P50), P99NS: stats.Finite(j.P99), SpikeRate: stats.Finite(j.SpikeRate), Gen2PauseNS: stats.Finite(j.Gen2Pause), MeanStepNS: stats.Finite(j.MeanStep),
			Verdicts: j.Verdicts, Tail: j.Tail, Qualifies: j.Qualifies(), Excluded: j.Excluded, Memory: j.Fate != NotRecorded,
			MemFate: j.Fate, StepsNeeded: j.StepsNeeded}
		if c.Excluded == nil {
			c.Excluded = []string{}
		}
		if j.Fate != NotRecorded {
			c.RSSGrowth, c.RSSGrowthLo, c.RSSGrowthHi, c.WorstPeak = stats.Finite(j.Mem.Growth), stats.Finite(j.Mem.Lo), stats.Finite(j.Mem.Hi), stats.Finite(j.WorstPeak)
			c.MemClass, c.MemWhy, c.FirstFull = j.Mem.Class, j.Mem.Why, j.Mem.NextFull
			c.StepsToLimit, c.HoursToLimit, c.SoonestHours, c.NeedBytes = stats.Finite(j.LimitSteps), stats.Finite(j.LimitHours), stats.Finite(j.SoonestHours), stats.Finite(j.NeedBytes)
		}
		out.Candidates = append(out.Candidates, c)
	}
	for _, iv := range a.Intervals {
		out.Intervals = append(out.Intervals, jsonInterval{Family: iv.Family, Ns: iv.Ns, Largest: iv.Largest, Fastest: iv.Fastest, Unsure: iv.Unsure})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
