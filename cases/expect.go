package cases

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// Expect is one assertion of a case on a variant's runs: the signature the
// case is named after (spikes attributed to full collections, a policy
// collecting less, a slowdown). `gcjitter run -check` evaluates them.
//
//	expect:
//	  - {variant: default, metric: gen2-spiking-share, min: 0.8, why: "full collections make spikes"}
//	  - {variant: "threshold:700,10,1000", metric: gen2-collections, below: default}
//	  - {variant: collect-every-step, metric: p50, ratio_to: default, min: 1.3}
type Expect struct {
	Variant string   `yaml:"variant"`
	Metric  string   `yaml:"metric"`
	Min     *float64 `yaml:"min"`
	Max     *float64 `yaml:"max"`
	Below   string   `yaml:"below"`    // another variant whose value must be higher
	Above   string   `yaml:"above"`    // another variant whose value must be lower
	RatioTo string   `yaml:"ratio_to"` // min/max bound value / that variant's value
	Device  string   `yaml:"device"`   // only checked when the runs ran on this device kind
	Why     string   `yaml:"why"`      // what the assertion shows, in words
	line    int
}

// Reduced is the smaller size a case declares for CI (gcjitter run
// -reduced): still large enough for its expectations to hold.
type Reduced struct {
	Runs   int `yaml:"runs"`
	Steps  int `yaml:"steps"`
	Warmup int `yaml:"warmup"`
}

func (c *Case) validateExpect(at func(path ...string) int) []*Error {
	var errs []*Error
	names := map[string]bool{}
	for _, v := range c.Variants {
		names[v.Name] = true
	}
	for i := range c.Expect {
		e := &c.Expect[i]
		idx := fmt.Sprint(i)
		e.line = at("expect", idx)
		bad := func(key, format string, args ...any) {
			line := e.line
			if key != "" {
				line = at("expect", idx, key)
			}
			errs = append(errs, &Error{File: c.Source, Line: line, Msg: fmt.Sprintf("expect[%d]: %s", i, fmt.Sprintf(format, args...))})
		}
		switch {
		case e.Variant == "":
			bad("", "variant missing")
		case !names[e.Variant]:
			bad("variant", "variant %q is not one of the case's variants", e.Variant)
		}
		if _, err := stats.Aggregate(e.Metric, []stats.RunSummary{{}}); err != nil {
			bad("metric", "metric: %v", err)
		}
		for _, other := range []struct{ key, name string }{{"below", e.Below}, {"above", e.Above}, {"ratio_to", e.RatioTo}} {
			if other.name != "" && !names[other.name] {
				bad(other.key, "%s: %q is not one of the case's variants", other.key, other.name)
			} else if other.name != "" && other.name == e.Variant {
				bad(other.key, "%s: a variant compared with itself", other.key)
			}
		}
		if e.Min == nil && e.Max == nil && e.Below == "" && e.Above == "" {
			bad("", "says nothing to check: give min, max, below or above")
		}
		if e.RatioTo != "" && e.Min == nil && e.Max == nil {
			bad("ratio_to", "ratio_to needs min or max: the bounds of the ratio")
		}
		if e.Min != nil && e.Max != nil && *e.Min > *e.Max {
			bad("min", "min %v is above max %v", *e.Min, *e.Max)
		}
		switch e.Device {
		case "", "cpu", "cuda", "npu":
		default:
			bad("device", "device %q: want cpu, cuda or npu", e.Device)
		}
	}
	return errs
}

// Outcome is one evaluated expectation.
type Outcome struct {
	Expect
	OK      bool
	Skipped bool // not for this device, or a variant -filter left out
	Text    string
}

// Check evaluates the case's expectations on its variants' run summaries;
// device is the kind the runs used (cpu, cuda, npu).
func (c *Case) Check(runs map[string][]stats.RunSummary, device string) []Outcome {
	var out []Outcome
	for _, e := range c.Expect {
		o := Outcome{Expect: e}
		if e.Device != "" && e.Device != device {
			o.Skipped, o.OK = true, true
			o.Text = fmt.Sprintf("%s %s: skipped (only on %s; ran on %s)", e.Variant, e.Metric, e.Device, device)
			out = append(out, o)
			continue
		}
		if absent := c.absentVariant(e); absent != "" {
			o.Skipped, o.OK = true, true
			o.Text = fmt.Sprintf("%s %s: skipped (variant %s was not run: -filter left it out)", e.Variant, e.Metric, absent)
			out = append(out, o)
			continue
		}
		o.OK, o.Text = e.evaluate(runs)
		out = append(out, o)
	}
	return out
}

// absentVariant names a variant the expectation needs that the case no
// longer holds (a -filter selection drops variants, not expectations), or
// "". A variant that was planned but whose runs failed is not absent: its
// expectation fails.
func (c *Case) absentVariant(e Expect) string {
	for _, name := range []string{e.Variant, e.RatioTo, e.Below, e.Above} {
		if name != "" && !slices.ContainsFunc(c.Variants, func(v Variant) bool { return v.Name == name }) {
			return name
		}
	}
	return ""
}

func (e Expect) evaluate(runs map[string][]stats.RunSummary) (bool, string) {
	v, err := stats.Aggregate(e.Metric, runs[e.Variant])
	if err != nil {
		return false, fmt.Sprintf("%s %s: %v", e.Variant, e.Metric, err)
	}
	subject := fmt.Sprintf("%s %s = %s", e.Variant, e.Metric, show(e.Metric, v))
	var wants []string
	ok := true
	check := func(cond bool, want string) {
		wants = append(wants, want)
		ok = ok && cond
	}
	value := v
	if e.RatioTo != "" {
		o, err := stats.Aggregate(e.Metric, runs[e.RatioTo])
		if err != nil {
			return false, fmt.Sprintf("%s %s: %v", e.RatioTo, e.Metric, err)
		}
		value = v / o
		subject = fmt.Sprintf("%s %s / %s %s = %s / %s = %.3g", e.Variant, e.Metric, e.RatioTo, e.Metric, show(e.Metric, v), show(e.Metric, o), value)
	}
	if e.Min != nil {
		check(value >= *e.Min, fmt.Sprintf(">= %g", *e.Min))
	}
	if e.Max != nil {
		check(value <= *e.Max, fmt.Sprintf("<= %g", *e.Max))
	}
	for _, other := range []struct {
		name string
		less bool
	}{{e.Below, true}, {e.Above, false}} {
		if other.name == "" {
			continue
		}
		o, err := stats.Aggregate(e.Metric, runs[other.name])
		if err != nil {
			return false, fmt.Sprintf("%s %s: %v", other.name, e.Metric, err)
		}
		if other.less {
			check(v < o, fmt.Sprintf("below %s's %s", other.name, show(e.Metric, o)))
		} else {
			check(v > o, fmt.Sprintf("above %s's %s", other.name, show(e.Metric, o)))
		}
	}
	if math.IsNaN(value) {
		ok = false
	}
	verdict := "ok"
	if !ok {
		verdict = "FAILED"
	}
	text := fmt.Sprintf("%s, want %s: %s", subject, strings.Join(wants, " and "), verdict)
	if e.Why != "" {
		text += " (" + e.Why + ")"
	}
	return ok, text
}

// show prints a quantity: times in ms, the rest as numbers.
func show(metric string, v float64) string {
	switch metric {
	case "p50", "p90", "p99", "max", "gen2-pause", "gen2-pause-mean":
		return fmt.Sprintf("%.3gms", v/1e6)
	case "rss-peak":
		return stats.Bytes(v)
	case "rss-growth":
		return stats.Bytes(v) + "/kstep"
	}
	return fmt.Sprintf("%.3g", v)
}
