package history

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

// Dashboard is one host class's trend page: every case/variant's primary
// metrics night by night, with the change points and environment changes
// marked.
type Dashboard struct {
	HostClass string
	Store     string
	Generated time.Time
	Series    []*Series // of this class
	Findings  []Finding
	Metrics   []string // the metrics charted, in order (default: the primary ones)
}

// Chart geometry, in CSS pixels.
const (
	chartW, chartH                     = 330, 170
	padLeft, padRight, padTop, padBott = 58, 10, 22, 26
)

// WriteHTML writes the page: one self-contained file, inline SVG and CSS,
// no script and nothing loaded from the network, so it shows in CI
// artifact viewers that strip scripts.
func (d *Dashboard) WriteHTML(w io.Writer) error {
	metrics := d.Metrics
	if len(metrics) == 0 {
		metrics = stats.DefaultPrimary
	}
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gcjitter history: %s</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd} h3{font-size:15px;margin:14px 0 4px}
.meta{color:#666;margin-bottom:16px} table{border-collapse:collapse;margin:8px 0 16px} td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f6f6f6} .regression{color:#b00020;font-weight:600} .improvement{color:#1b7a2b;font-weight:600} .shift{color:#555}
.charts{display:flex;flex-wrap:wrap;gap:8px} svg{background:#fcfcfc;border:1px solid #e4e4e4}
.legend span{margin-right:18px} .legend svg{border:none;background:none;vertical-align:middle}
</style></head><body>
<h1>gcjitter history: %s</h1>
<div class="meta">%s &middot; %d series &middot; generated %s</div>
`, esc(d.HostClass), esc(d.HostClass), esc(d.Store), len(d.Series), d.Generated.UTC().Format(time.RFC3339))
	b.WriteString(`<div class="legend"><span><svg width="14" height="10"><circle cx="7" cy="5" r="3" fill="#3465a4"/></svg>night's median (bar: its runs' range; hollow: partial night)</span>` +
		`<span><svg width="20" height="10"><line x1="2" y1="5" x2="18" y2="5" stroke="#3465a4" stroke-opacity=".45" stroke-width="3"/></svg>level between change points</span>` +
		`<span><svg width="14" height="12"><line x1="7" y1="0" x2="7" y2="12" stroke="#b00020" stroke-dasharray="3,2" stroke-width="2"/></svg>change point (red: regression, green: improvement)</span>` +
		`<span><svg width="14" height="12"><line x1="7" y1="0" x2="7" y2="12" stroke="#7a5ea8" stroke-dasharray="1,2" stroke-width="2"/></svg>environment changed</span></div>` + "\n")
	d.writeFindings(&b)
	type group struct{ cas, variant string }
	byGroup := map[group]map[string]*Series{}
	var groups []group
	for _, se := range d.Series {
		g := group{se.Key.Case, se.Key.Variant + sideSuffix(se.Key.Side)}
		if byGroup[g] == nil {
			byGroup[g] = map[string]*Series{}
			groups = append(groups, g)
		}
		byGroup[g][se.Key.Metric] = se
	}
	slices.SortFunc(groups, func(a, b group) int { return strings.Compare(a.cas+"\x00"+a.variant, b.cas+"\x00"+b.variant) })
	findings := map[SeriesKey][]Finding{}
	for _, f := range d.Findings {
		findings[f.Key] = append(findings[f.Key], f)
	}
	lastCase := ""
	for _, g := range groups {
		if g.cas != lastCase {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(g.cas))
			lastCase = g.cas
		}
		fmt.Fprintf(&b, "<h3>%s</h3>\n<div class=\"charts\">\n", esc(g.variant))
		for _, m := range metrics {
			if se := byGroup[g][m]; se != nil {
				trendChart(&b, se, findings[se.Key])
			}
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func sideSuffix(side string) string {
	if side == "" {
		return ""
	}
	return " (side " + side + ")"
}

func (d *Dashboard) writeFindings(b *strings.Builder) {
	esc := html.EscapeString
	fs := slices.Clone(d.Findings)
	slices.SortStableFunc(fs, func(a, b Finding) int { return b.First.Started.Compare(a.First.Started) })
	if len(fs) == 0 {
		b.WriteString("<p>No change points in these nights.</p>\n")
		return
	}
	b.WriteString("<h2>Change points, newest first</h2>\n<table><tr><th>series</th><th>first night after</th><th>label</th><th>before</th><th>after</th><th>change [95% interval]</th><th>p</th><th>verdict</th><th>environment then</th></tr>\n")
	for _, f := range fs {
		env := strings.Join(f.EnvChanges, "; ")
		if env == "" {
			env = "unchanged"
		}
		if len(f.Near) > 0 {
			env += " (near: " + strings.Join(f.Near, "; ") + ")"
		}
		fmt.Fprintf(b, "<tr><td>%s/%s %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s [%s, %s]</td><td>%.3f</td><td class=\"%s\">%s</td><td>%s</td></tr>\n",
			esc(f.Key.Case), esc(f.Key.Variant+sideSuffix(f.Key.Side)), esc(f.Key.Metric), f.First.Started.UTC().Format(nightFormat), esc(orDash(f.First.Label)),
			esc(formatMetric(f.Key.Metric, f.Before)), esc(formatMetric(f.Key.Metric, f.After)),
			stats.Pct(f.Size), stats.Pct(f.Lo), stats.Pct(f.Hi), f.P, f.Verdict(), f.Verdict(), esc(env))
	}
	b.WriteString("</table>\n")
}

// trendChart draws one series: the nights' medians over time with their
// runs' range, the level of each segment between change points, the change
// points, and the nights the environment changed.
func trendChart(b *strings.Builder, se *Series, fs []Finding) {
	esc := html.EscapeString
	n := len(se.Nights)
	t0, t1 := se.Nights[0].Started, se.Nights[n-1].Started
	span := t1.Sub(t0).Seconds()
	if span <= 0 {
		span = 1
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, nt := range se.Nights {
		lo, hi = math.Min(lo, nt.Summary.Min), math.Max(hi, nt.Summary.Max)
	}
	ticks := niceTicks(lo, hi, 4)
	ylo, yhi := math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	if yhi == ylo {
		yhi = ylo + 1
	}
	pw, ph := float64(chartW-padLeft-padRight), float64(chartH-padTop-padBott)
	x := func(t time.Time) float64 { return padLeft + pw*t.Sub(t0).Seconds()/span }
	y := func(v float64) float64 { return padTop + ph*(1-(v-ylo)/(yhi-ylo)) }
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">`, chartW, chartH, esc(se.Key.String()))
	fmt.Fprintf(b, `<text x="%d" y="15" font-size="13" font-weight="600">%s</text>`, padLeft, esc(se.Key.Metric))
	for _, tv := range ticks {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e6e6e6"/><text x="%d" y="%.1f" font-size="10" text-anchor="end" fill="#555">%s</text>`,
			padLeft, chartW-padRight, y(tv), y(tv), padLeft-4, y(tv)+3, esc(formatMetric(se.Key.Metric, tv)))
	}
	for _, i := range []int{0, n / 2, n - 1} {
		anchor := map[int]string{0: "start", n / 2: "middle", n - 1: "end"}[i]
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" text-anchor="%s" fill="#555">%s</text>`, x(se.Nights[i].Started), chartH-8, anchor, se.Nights[i].Started.UTC().Format("Jan 2"))
	}
	// Environment changes behind the data.
	for i := 1; i < n; i++ {
		if ch := se.Nights[i-1].Env.Changes(se.Nights[i].Env); len(ch) > 0 {
			xc := (x(se.Nights[i-1].Started) + x(se.Nights[i].Started)) / 2
			fmt.Fprintf(b, `<g><title>%s: %s</title><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#7a5ea8" stroke-width="1.5" stroke-dasharray="1,2"/><text x="%.1f" y="%d" font-size="9" fill="#7a5ea8">%s</text></g>`,
				se.Nights[i].Started.UTC().Format(time.DateOnly), esc(strings.Join(ch, "; ")), xc, xc, padTop, chartH-padBott, xc+2, padTop+8, esc(shortChange(ch)))
		}
	}
	// Levels between change points.
	cuts := []int{0}
	for _, f := range fs {
		cuts = append(cuts, f.Index)
	}
	cuts = append(cuts, n)
	for k := 0; k+1 < len(cuts); k++ {
		level := segmentLevel(se.Nights[cuts[k]:cuts[k+1]])
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#3465a4" stroke-opacity=".45" stroke-width="3"/>`,
			x(se.Nights[cuts[k]].Started), x(se.Nights[cuts[k+1]-1].Started), y(level), y(level))
	}
	for _, nt := range se.Nights {
		mn, mx := nt.Summary.Min, nt.Summary.Max
		xc := x(nt.Started)
		fill := "#3465a4"
		if nt.Partial != "" {
			fill = "#fff"
		}
		fmt.Fprintf(b, `<g><title>%s %s: median %s of %d runs (%s to %s)</title><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#9bb3d6"/><circle cx="%.1f" cy="%.1f" r="2.6" fill="%s" stroke="#3465a4"/></g>`,
			nt.Started.UTC().Format(nightFormat), esc(orDash(nt.Label)), esc(formatMetric(se.Key.Metric, nt.Median())), nt.Summary.Runs,
			esc(formatMetric(se.Key.Metric, mn)), esc(formatMetric(se.Key.Metric, mx)), xc, xc, y(mn), y(mx), xc, y(nt.Median()), fill)
	}
	for _, f := range fs {
		color := map[string]string{"regression": "#b00020", "improvement": "#1b7a2b", "shift": "#666"}[f.Verdict()]
		xc := (x(f.Last.Started) + x(f.First.Started)) / 2
		fmt.Fprintf(b, `<g><title>%s from %s: %s [%s, %s], p %.3f</title><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="3,2"/><text x="%.1f" y="%d" font-size="10" font-weight="600" fill="%s" text-anchor="end">%s</text></g>`,
			f.Verdict(), f.First.Started.UTC().Format(time.DateOnly), stats.Pct(f.Size), stats.Pct(f.Lo), stats.Pct(f.Hi), f.P,
			xc, xc, padTop, chartH-padBott, color, xc-3, padTop+20, color, stats.Pct(f.Size))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#bbb"/></svg>`+"\n", padLeft, padTop, pw, ph)
}

// segmentLevel is the level a segment of nights sits at: the geometric
// mean of the nights' medians when all are positive, else the mean.
func segmentLevel(ns []Night) float64 {
	var sum, logSum float64
	positive := true
	for _, n := range ns {
		m := n.Median()
		sum += m
		if m > 0 {
			logSum += math.Log(m)
		} else {
			positive = false
		}
	}
	if positive {
		return math.Exp(logSum / float64(len(ns)))
	}
	return sum / float64(len(ns))
}

// shortChange is an environment change as a chart label: the new value of
// the first thing that changed ("torch 2.4.0").
func shortChange(ch []string) string {
	name, rest, _ := strings.Cut(ch[0], " ")
	if i := strings.LastIndex(rest, "-> "); i >= 0 {
		rest = rest[i+3:]
	}
	s := name + " " + rest
	if len(ch) > 1 {
		s += fmt.Sprintf(" +%d", len(ch)-1)
	}
	return s
}

// niceTicks are about n round values spanning [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		if lo == 0 {
			return []float64{0, 1}
		}
		lo, hi = lo*0.95, hi*1.05
		if lo > hi {
			lo, hi = hi, lo
		}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	if out[len(out)-1] < hi {
		out = append(out, out[len(out)-1]+step)
	}
	return out
}
