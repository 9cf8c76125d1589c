package report

import (
	"fmt"
	"slices"

	"github.com/gcjitter/gcjitter/stats"
)

// VariantDevice is how a variant's steps met its asynchronous device
// (emulated, or a real one's events): medians over runs of the device's
// busy share, the share of its idle time inside collections and the host's
// lead at the sync (seconds), and the pooled counts of collections the
// queue hid and of those that outlasted it, with the median exposed cost
// per unit of pause minus lead (docs/device.md).
type VariantDevice struct {
	Util         float64 `json:"util"`
	IdleGC       float64 `json:"idle_gc"`
	Slack        float64 `json:"slack"`
	HiddenSteps  int     `json:"hidden_steps"`
	ExposedSteps int     `json:"exposed_steps"`
	ExposedFit   float64 `json:"exposed_fit"`
	// Unjudged: some run had no typical step to measure a cost against
	// (a full collection in nearly every step).
	Unjudged bool `json:"unjudged,omitempty"`
}

// variantDevice is nil unless every run timed the device.
func variantDevice(sums []*stats.RunSummary) *VariantDevice {
	var util, idle, slack, fit []float64
	d := &VariantDevice{}
	for _, s := range sums {
		if s.Device == nil {
			return nil
		}
		util, idle, slack = append(util, s.Device.Util), append(idle, s.Device.IdleGC), append(slack, s.Device.SlackNS)
		d.Unjudged = d.Unjudged || s.Device.Unjudged
		d.HiddenSteps += s.Device.HiddenSteps
		d.ExposedSteps += s.Device.ExposedSteps
		if s.Device.ExposedSteps > 0 {
			fit = append(fit, s.Device.ExposedFit)
		}
	}
	med := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return stats.Quantile(xs, 0.5)
	}
	d.Util, d.IdleGC, d.Slack, d.ExposedFit = med(util), med(idle), 1e-9*med(slack), med(fit)
	return d
}

// deviceLine says it in one line: "default: device busy 92.4% of the step
// time, 45% of its idle time inside collections; host lead at the sync
// 29.9 ms; 88 collections hidden by the queue, 20 outlasted it, costing
// 0.88 x (pause - lead)".
func (vs VariantSummary) deviceLine() string {
	d := vs.Device
	line := fmt.Sprintf("%s: device busy %.1f%% of the step time, %.0f%% of its idle time inside collections; host lead at the sync %s",
		vs.Variant, 100*d.Util, 100*d.IdleGC, stats.MS(1e9*d.Slack))
	if d.Unjudged {
		return line + "; a full collection in nearly every step, so no typical step to measure their cost against"
	}
	line += fmt.Sprintf("; %d collections hidden by the queue, %d outlasted it", d.HiddenSteps, d.ExposedSteps)
	if d.ExposedSteps > 0 {
		line += fmt.Sprintf(", costing %.2f x (pause - lead)", d.ExposedFit)
	}
	return line
}
