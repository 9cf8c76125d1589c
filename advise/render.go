package advise

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	fmt.Fprintln(tw, "policy\tp99\tspikes/kstep\tgen2 pause\tp50\tmean step\trss growth/kstep\tto limit\tqualifies")
	for _, j := range a.Candidates {
		v := func(metric string) string {
			if j.Variant == a.Reference {
				return ""
			}
			return " " + verdictOr(j.Verdicts[metric])
		}
		growth, limit := "not recorded", "not recorded"
		if j.HasMemory {
			growth, limit = stats.Bytes(j.Growth)+v("rss-growth"), stats.Hours(j.LimitHours)
		}
		q := "yes"
		if !j.Qualifies() {
			q = "no: " + strings.Join(j.Excluded, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.1f%s\t%s%s\t%s%s\t%s\t%s\t%s\t%s\n", j.Variant, stats.MS(j.P99), v("p99"), j.SpikeRate, v("spike-rate"),
			stats.MS(j.Gen2Pause), v("gen2-pause"), stats.MS(j.P50), v("p50"), stats.MS(j.MeanStep), growth, limit, q)
	}
	tw.Flush()
	b.WriteString("\n")
	if a.Pick != nil {
		fmt.Fprintf(&b, "recommendation: %s\n", a.Pick.Variant)
	} else {
		b.WriteString("recommendation: none\n")
	}
	fmt.Fprintf(&b, "  reason: %s\n", a.Reason)
	if a.Binding != "" {
		fmt.Fprintf(&b, "  binding: %s (%s)\n", a.Binding, a.Blocked.Variant)
		for _, r := range a.Relax {
			fmt.Fprintf(&b, "  relax %s\n", r)
		}
	}
	if a.Pick != nil {
		b.WriteString("set it:\n")
		for _, s := range Settings(a.Pick.Policy) {
			fmt.Fprintf(&b, "  %s: %s\n", s.Stack, s.How)
		}
	}
	for _, iv := range a.Intervals {
		fmt.Fprintf(&b, "interval %s (N measured: %s): ", iv.Family, joinInts(iv.Ns))
		if iv.Largest > 0 {
			fmt.Fprintf(&b, "largest N whose memory lasts %s: %d; ", hoursText(a.Duration), iv.Largest)
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

// JSON form (for scripts): recommendation.variant ("" when none
// qualifies), recommendation.reason, candidates[] with every figure.
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
	Variant  string    `json:"variant"`
	Policy   string    `json:"policy"`
	Reason   string    `json:"reason"`
	Settings []Setting `json:"settings,omitempty"`
}

type jsonCandidate struct {
	Variant      string                   `json:"variant"`
	Policy       string                   `json:"policy"`
	Runs         int                      `json:"runs"`
	Steps        int                      `json:"steps"`
	P50NS        *float64                 `json:"p50_ns"`
	P99NS        *float64                 `json:"p99_ns"`
	SpikeRate    *float64                 `json:"spike_rate_per_kstep"`
	Gen2PauseNS  *float64                 `json:"gen2_pause_ns"`
	MeanStepNS   *float64                 `json:"mean_step_ns"`
	RSSGrowth    *float64                 `json:"rss_growth_bytes_per_kstep"`
	WorstGrowth  *float64                 `json:"worst_rss_growth_bytes_per_kstep"`
	WorstPeak    *float64                 `json:"worst_rss_peak_bytes"`
	StepsToLimit *float64                 `json:"steps_to_limit"`
	HoursToLimit *float64                 `json:"hours_to_limit"`
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
}

func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// JSON writes the advice for scripts.
func (a *Advice) JSON(w io.Writer) error {
	out := jsonAdvice{Case: a.Case, Reference: a.Reference, DurationHours: a.Duration.Hours(), MemLimitBytes: a.Limit, MemLimitFrom: a.LimitFrom,
		Recommendation: jsonPick{Reason: a.Reason}, Binding: a.Binding, Relax: a.Relax, Notes: a.Notes}
	if a.Pick != nil {
		out.Recommendation.Variant, out.Recommendation.Policy = a.Pick.Variant, a.Pick.Policy
		out.Recommendation.Settings = Settings(a.Pick.Policy)
	}
	if a.Blocked != nil {
		out.Blocked = a.Blocked.Variant
	}
	for _, j := range a.Candidates {
		c := jsonCandidate{Variant: j.Variant, Policy: j.Policy, Runs: j.Runs, Steps: j.Steps,
			P50NS: num(j.P50), P99NS: num(j.P99), SpikeRate: num(j.SpikeRate), Gen2PauseNS: num(j.Gen2Pause), MeanStepNS: num(j.MeanStep),
			Verdicts: j.Verdicts, Tail: j.Tail, Qualifies: j.Qualifies(), Excluded: j.Excluded, Memory: j.HasMemory}
		if c.Excluded == nil {
			c.Excluded = []string{}
		}
		if j.HasMemory {
			c.RSSGrowth, c.WorstGrowth, c.WorstPeak = num(j.Growth), num(j.WorstGrowth), num(j.WorstPeak)
			c.StepsToLimit, c.HoursToLimit, c.NeedBytes = num(j.LimitSteps), num(j.LimitHours), num(j.NeedBytes)
		}
		out.Candidates = append(out.Candidates, c)
	}
	for _, iv := range a.Intervals {
		out.Intervals = append(out.Intervals, jsonInterval(iv))
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
