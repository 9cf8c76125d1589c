package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// jsonPrediction is a prediction as scripts read it (contract of
// gcjitter scale -format json): times in ns, rates per 1000 steps, the
// throughput loss as a fraction of the GC-free job's, each figure with its
// interval's ends.
type jsonPrediction struct {
	Case             string  `json:"case"`
	Variant          string  `json:"variant"`
	Policy           string  `json:"policy,omitempty"`
	Ranks            int     `json:"ranks"`
	FromRanks        int     `json:"from_ranks"`
	Runs             int     `json:"runs"`
	P50              float64 `json:"p50_ns"`
	P50Lo            float64 `json:"p50_lo_ns"`
	P50Hi            float64 `json:"p50_hi_ns"`
	P90              float64 `json:"p90_ns"`
	P90Lo            float64 `json:"p90_lo_ns"`
	P90Hi            float64 `json:"p90_hi_ns"`
	P99              float64 `json:"p99_ns"`
	P99Lo            float64 `json:"p99_lo_ns"`
	P99Hi            float64 `json:"p99_hi_ns"`
	Mean             float64 `json:"mean_ns"`
	MeanLo           float64 `json:"mean_lo_ns"`
	MeanHi           float64 `json:"mean_hi_ns"`
	SpikeRate        float64 `json:"spike_rate_per_kstep"`
	SpikeRateLo      float64 `json:"spike_rate_lo_per_kstep"`
	SpikeRateHi      float64 `json:"spike_rate_hi_per_kstep"`
	Loss             float64 `json:"throughput_loss"`
	LossLo           float64 `json:"throughput_loss_lo"`
	LossHi           float64 `json:"throughput_loss_hi"`
	GCFreeP50        float64 `json:"gc_free_p50_ns"`
	GCFreeP50Lo      float64 `json:"gc_free_p50_lo_ns"`
	GCFreeP50Hi      float64 `json:"gc_free_p50_hi_ns"`
	CollectiveGrowth float64 `json:"collective_growth_ns"`
	// HostNoise is the noise model this prediction used (independent or
	// shared); HostNoiseReason, under -host-noise auto, the contention
	// that chose shared.
	HostNoise       string `json:"host_noise"`
	HostNoiseReason string `json:"host_noise_reason,omitempty"`
	// Validation is the case's variant's status (Status): validated, not
	// validated or unchecked; only on predictions at the asked ranks.
	Validation string `json:"validation,omitempty"`
}

type jsonFigures struct {
	P50 float64 `json:"p50_ns"`
	P90 float64 `json:"p90_ns"`
	P99 float64 `json:"p99_ns"`
	// P99Lo, P99Hi: the measured p99's 95% interval; hi null where the
	// run is too short to bound it above.
	P99Lo     float64  `json:"p99_lo_ns"`
	P99Hi     *float64 `json:"p99_hi_ns"`
	Mean      float64  `json:"mean_ns"`
	SpikeRate float64  `json:"spike_rate_per_kstep"`
}

type jsonValidation struct {
	Case      string         `json:"case"`
	Variant   string         `json:"variant"`
	From      string         `json:"from"`
	FromRanks int            `json:"from_ranks"`
	Ranks     int            `json:"ranks"`
	Runs      int            `json:"runs"`
	Measured  jsonFigures    `json:"measured"`
	Predicted jsonPrediction `json:"predicted"`
	// Errors: p50/p90/p99 relative (predicted/measured - 1); spike rate as
	// a ratio, null when the measured job had no spike and the prediction
	// some.
	P50Err     float64  `json:"p50_err"`
	P90Err     float64  `json:"p90_err"`
	P99Err     float64  `json:"p99_err"`
	SpikeRatio *float64 `json:"spike_ratio"`
	// SpikesJudged: either side had 3 spikes or more; below, the ratio is
	// counting noise and within_tolerance ignores it.
	SpikesJudged bool `json:"spikes_judged"`
	Within       bool `json:"within_tolerance"`
	// Beyond names the figures beyond tolerance: p50, p90, p99, spike rate.
	Beyond []string `json:"beyond"`
	Note   string   `json:"note,omitempty"`
}

// jsonCaseVariant names a case's variant that is not validated.
type jsonCaseVariant struct {
	Case    string `json:"case"`
	Variant string `json:"variant"`
}

type jsonModel struct {
	Steps        int     `json:"simulated_steps"`
	Boot         int     `json:"bootstrap_replicates"`
	Level        float64 `json:"interval_level"`
	Collective   string  `json:"collective"`
	HopLatencyNS float64 `json:"hop_latency_ns"`
	BandwidthBps float64 `json:"bandwidth_bytes_per_s,omitempty"`
	Bytes        float64 `json:"bytes,omitempty"`
	HostNoise    string  `json:"host_noise"`
}

func toJSON(p Prediction) jsonPrediction {
	return jsonPrediction{Case: p.Case, Variant: p.Variant, Policy: p.Policy, Ranks: p.Ranks, FromRanks: p.FromRanks, Runs: p.Runs,
		P50: p.Est.P50, P50Lo: p.Lo.P50, P50Hi: p.Hi.P50, P90: p.Est.P90, P90Lo: p.Lo.P90, P90Hi: p.Hi.P90,
		P99: p.Est.P99, P99Lo: p.Lo.P99, P99Hi: p.Hi.P99, Mean: p.Est.Mean, MeanLo: p.Lo.Mean, MeanHi: p.Hi.Mean,
		SpikeRate: p.Est.SpikeRate, SpikeRateLo: p.Lo.SpikeRate, SpikeRateHi: p.Hi.SpikeRate,
		Loss: p.Est.Loss, LossLo: p.Lo.Loss, LossHi: p.Hi.Loss, CollectiveGrowth: p.CollectiveNS,
		GCFreeP50: p.Est.FreeP50, GCFreeP50Lo: p.Lo.FreeP50, GCFreeP50Hi: p.Hi.FreeP50, HostNoise: p.HostNoise, HostNoiseReason: p.NoiseReason}
}

// JSON writes the report for scripts.
func (r *Report) JSON(w io.Writer) error {
	out := struct {
		Predictions []jsonPrediction `json:"predictions"`
		Validation  []jsonValidation `json:"validation"`
		// NotValidated: the case's variants with a validation beyond
		// tolerance (gcjitter scale exits 1 unless -allow-unvalidated).
		NotValidated []jsonCaseVariant `json:"not_validated"`
		Model        jsonModel         `json:"model"`
		Warnings     []string          `json:"warnings"`
	}{Predictions: []jsonPrediction{}, Validation: []jsonValidation{}, NotValidated: []jsonCaseVariant{}, Warnings: r.Warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, p := range r.Predictions {
		jp := toJSON(p)
		jp.Validation = r.Status(p.Case, p.Variant)
		out.Predictions = append(out.Predictions, jp)
	}
	for _, cv := range r.notValidated() {
		out.NotValidated = append(out.NotValidated, jsonCaseVariant{Case: cv.c, Variant: cv.v})
	}
	for _, v := range r.Validation {
		jv := jsonValidation{Case: v.Case, Variant: v.Variant, From: v.From, FromRanks: v.FromRanks, Ranks: v.Ranks, Runs: v.Runs,
			Measured:  jsonFigures{P50: v.Measured.P50, P90: v.Measured.P90, P99: v.Measured.P99, P99Lo: v.P99Lo, Mean: v.Measured.Mean, SpikeRate: v.Measured.SpikeRate},
			Predicted: toJSON(v.Predicted), SpikesJudged: v.SpikesJudged(), P50Err: v.Err.P50, P90Err: v.Err.P90, P99Err: v.Err.P99,
			Within: v.Within(), Beyond: v.Beyond(), Note: v.Note}
		if jv.Beyond == nil {
			jv.Beyond = []string{}
		}
		if !math.IsNaN(v.SpikeRatio) {
			jv.SpikeRatio = &v.SpikeRatio
		}
		if !math.IsInf(v.P99Hi, 1) {
			jv.Measured.P99Hi = &v.P99Hi
		}
		out.Validation = append(out.Validation, jv)
	}
	o := r.Options
	out.Model = jsonModel{Steps: o.Steps, Boot: o.Boot, Level: o.Level, Collective: o.Collective.Kind,
		HopLatencyNS: o.Collective.HopLatency, BandwidthBps: o.Collective.Bandwidth, Bytes: o.Collective.Bytes, HostNoise: o.HostNoise}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// noiseText says what a -host-noise mode does.
func noiseText(mode string) string {
	switch mode {
	case NoiseShared:
		return "one host's noise at any N, so only collections and the collective grow"
	case NoiseIndependent:
		return "each host of the measured world size draws its own, so more hosts make a slower slowest host"
	}
	return "independent per host where the measured ranks had a CPU each, one host's at any N where they contended for CPUs"
}

func ms(ns float64) string { return fmt.Sprintf("%.3g", ns/1e6) }

// Text writes the report for people: the model, the validation, then
// each case's predictions.
func (r *Report) Text(w io.Writer) error {
	o := r.Options
	fmt.Fprintf(w, "model: each rank's own time replayed from its measured streams (collections at their measured pauses;\n"+
		"  allocator-driven ones at a random phase per rank, scheduled ones on the same steps), a host's ranks sharing noise,\n"+
		"  global step = slowest rank + collective; collective %s, %s per hop", o.Collective.Kind, durText(o.Collective.HopLatency))
	if o.Collective.Bandwidth > 0 {
		fmt.Fprintf(w, ", %.4g bytes at %.4g bytes/s", o.Collective.Bytes, o.Collective.Bandwidth)
	}
	fmt.Fprintf(w, "\n  host noise %s: %s", o.HostNoise, noiseText(o.HostNoise))
	fmt.Fprintf(w, "\n  %d simulated steps per job; intervals %g%% from %d block-bootstrap resamples of the runs\n", o.Steps, 100*o.Level, o.Boot)
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	fmt.Fprintf(w, "\nvalidation (measured multi-rank jobs predicted by the same model; tolerance %s):\n", tolText)
	if len(r.Validation) == 0 {
		fmt.Fprintln(w, "  none: no multi-rank runs among the inputs (run a case with ranks: 2 or more)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Validation) > 0 {
		fmt.Fprintln(tw, "  case\tvariant\tranks\tfrom\tp50 ms meas/pred\terr\tp90 ms meas/pred\terr\tp99 ms meas/pred\terr\tspikes/kstep meas/pred\tratio\t\t")
	}
	for _, v := range r.Validation {
		p := v.Predicted.Est
		verdict := "within"
		if b := v.Beyond(); len(b) > 0 {
			verdict = NotValidated + ": " + strings.Join(b, ", ")
		}
		ratio := "-"
		if !math.IsNaN(v.SpikeRatio) {
			ratio = fmt.Sprintf("x%.2f", v.SpikeRatio)
		}
		if !v.SpikesJudged() {
			ratio += " (too few)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s (%d)\t%s / %s\t%+.1f%%\t%s / %s\t%+.1f%%\t%s / %s\t%+.1f%%\t%.1f / %.1f\t%s\t%s\t\n",
			v.Case, v.Variant, v.Ranks, v.From, v.FromRanks, ms(v.Measured.P50), ms(p.P50), 100*v.Err.P50,
			ms(v.Measured.P90), ms(p.P90), 100*v.Err.P90, ms(v.Measured.P99), ms(p.P99), 100*v.Err.P99,
			v.Measured.SpikeRate, p.SpikeRate, ratio, verdict)
	}
	tw.Flush()
	for _, v := range r.Validation {
		if v.Note != "" {
			fmt.Fprintf(w, "  %s %s from %s: %s\n", v.Case, v.Variant, v.From, v.Note)
		}
	}
	for _, v := range r.Failed() {
		fmt.Fprintf(w, "not validated: %s\n", v.Failure())
	}
	if nv := r.notValidated(); len(nv) > 0 {
		fmt.Fprintf(w, "the predictions of %s below are not validated: the model missed a job it could check\n", joinCV(nv))
	}
	last := ""
	for _, p := range r.Predictions {
		if p.Case != last {
			if last != "" {
				tw.Flush()
			}
			last = p.Case
			fmt.Fprintf(w, "\n%s: predicted global step (ms) [%g%% interval]\n", p.Case, 100*o.Level)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "  variant\tranks\tfrom\tp50\tp90\tp99\tmean\tspikes/kstep\tloss vs GC-free\tGC-free p50\thost noise\tvalidation\t")
		}
		iv := func(e, lo, hi float64) string { return fmt.Sprintf("%s [%s, %s]", ms(e), ms(lo), ms(hi)) }
		fmt.Fprintf(tw, "  %s\t%d\t%d x %d\t%s\t%s\t%s\t%s\t%.0f [%.0f, %.0f]\t%+.1f%% [%+.1f, %+.1f]\t%s\t%s\t%s\t\n", p.Variant, p.Ranks, p.Runs, p.FromRanks,
			iv(p.Est.P50, p.Lo.P50, p.Hi.P50), iv(p.Est.P90, p.Lo.P90, p.Hi.P90), iv(p.Est.P99, p.Lo.P99, p.Hi.P99),
			iv(p.Est.Mean, p.Lo.Mean, p.Hi.Mean), p.Est.SpikeRate, p.Lo.SpikeRate, p.Hi.SpikeRate,
			100*p.Est.Loss, 100*p.Lo.Loss, 100*p.Hi.Loss, ms(p.Est.FreeP50), p.HostNoise, r.Status(p.Case, p.Variant))
	}
	tw.Flush()
	return nil
}

func durText(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// cases are the report's cases in order.
func (r *Report) cases() []string {
	var out []string
	for _, p := range r.Predictions {
		if len(out) == 0 || out[len(out)-1] != p.Case {
			out = append(out, p.Case)
		}
	}
	return out
}

// joinCV lists case's variants: "a x, a y and b z".
func joinCV(cvs []caseVariant) string {
	s := make([]string, len(cvs))
	for i, cv := range cvs {
		s[i] = cv.String()
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
