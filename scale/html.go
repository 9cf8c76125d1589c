package scale

import (
	"fmt"
	"html/template"
	"image/color"
	"io"
	"strings"

	"github.com/gcjitter/gcjitter/internal/inlinesvg"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	vgdraw "gonum.org/v1/plot/vg/draw"
)

// palette: one colour per policy in the order met, after default (red)
// and disabled (grey), which keep theirs in every chart.
var palette = []color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, {0x1f, 0x77, 0xb4, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

// chartSVG draws one case's predicted p50 (solid, with its interval as
// error bars) and mean (dashed: what throughput pays) against ranks on a
// log axis, one colour per policy: default climbs, a scheduled policy stays
// flat. The p99 is in the table: its scheduled pauses would flatten the
// rest of the chart.
func chartSVG(r *Report, caseName string) (template.HTML, error) {
	p := plot.New()
	p.Title.Text = caseName + ": predicted global step time against ranks"
	p.X.Label.Text = "ranks (log scale)"
	p.Y.Label.Text = "step time (ms)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	var variants []string
	byVariant := map[string][]Prediction{}
	for _, pr := range r.Predictions {
		if pr.Case != caseName {
			continue
		}
		if byVariant[pr.Variant] == nil {
			variants = append(variants, pr.Variant)
		}
		byVariant[pr.Variant] = append(byVariant[pr.Variant], pr)
	}
	for i, v := range variants {
		prs := byVariant[v]
		c := palette[(i+1)%len(palette)]
		switch v {
		case "default":
			c = palette[0]
		case "disabled":
			c = color.RGBA{0x80, 0x80, 0x80, 0xff}
		}
		p50, means := make(plotter.XYs, len(prs)), make(plotter.XYs, len(prs))
		bars := make(plotter.XYs, len(prs))
		errs := make(plotter.YErrors, len(prs))
		for j, pr := range prs {
			x := float64(pr.Ranks)
			p50[j] = plotter.XY{X: x, Y: pr.Est.P50 / 1e6}
			means[j] = plotter.XY{X: x, Y: pr.Est.Mean / 1e6}
			bars[j] = p50[j]
			errs[j].Low, errs[j].High = max(0, (pr.Est.P50-pr.Lo.P50)/1e6), max(0, (pr.Hi.P50-pr.Est.P50)/1e6)
			p.Y.Max = max(p.Y.Max, pr.Hi.P50/1e6*1.45, pr.Est.Mean/1e6*1.45) // headroom for the legend
		}
		l, pts, err := plotter.NewLinePoints(p50)
		if err != nil {
			return "", err
		}
		l.Color, l.Width, pts.Color, pts.Shape = c, vg.Points(2), c, vgdraw.CircleGlyph{}
		d, err := plotter.NewLine(means)
		if err != nil {
			return "", err
		}
		d.Color, d.Dashes = c, []vg.Length{vg.Points(4), vg.Points(3)}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{bars, errs})
		if err != nil {
			return "", err
		}
		eb.Color = c
		p.Add(l, pts, d, eb)
		p.Legend.Add(v+" p50", l, pts)
		p.Legend.Add(v+" mean", d)
	}
	return inlinesvg.Of(p, 8*vg.Inch, 4.5*vg.Inch)
}

var page = template.Must(template.New("scale").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gcjitter scale</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child,td.l{text-align:left}
.beyond{color:#b00;font-weight:bold}
figure{margin:0 0 1.5em}
.note{color:#555;font-size:.9em}
</style></head>
<body data-charts="ready">
<h1>gcjitter scale</h1>
{{if .NotValidated}}<p class="beyond" id="not-validated">Not validated: {{.NotValidated}}. The model missed a job it could check; their predictions below are not validated.</p>
{{end}}<p class="note">{{.Model}}</p>
{{range .Warnings}}<p class="note">warning: {{.}}</p>{{end}}
<h2>Validation</h2>
<p class="note">Tolerance: {{.Tolerance}}.</p>
{{if .Validation}}<table><tr><th>case</th><th>variant</th><th>ranks</th><th>from</th><th>p50 ms meas / pred</th><th>p90 ms meas / pred</th><th>p99 ms meas / pred</th><th>spikes/kstep meas / pred</th><th></th></tr>
{{range .Validation}}<tr><td>{{.Case}}</td><td class="l">{{.Variant}}</td><td>{{.Ranks}}</td><td class="l">{{.From}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.Spikes}}</td><td{{if .Beyond}} class="beyond"{{end}}>{{if .Beyond}}not validated: {{.Beyond}}{{else}}within{{end}}</td></tr>
{{end}}</table>{{else}}<p>No multi-rank runs among the inputs.</p>{{end}}
{{range .Cases}}<h2>{{.Name}}</h2>
<figure id="chart-{{.Name}}">{{.SVG}}<figcaption class="note">Solid: p50 with its interval; dashed: mean (throughput). Log axis of ranks.</figcaption></figure>
<table><tr><th>variant</th><th>ranks</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>mean ms</th><th>spikes/kstep</th><th>loss vs GC-free</th><th>validation</th></tr>
{{range .Rows}}<tr><td>{{.Variant}}</td><td>{{.Ranks}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.Mean}}</td><td>{{.Spikes}}</td><td>{{.Loss}}</td><td{{if eq .Status "not validated"}} class="beyond"{{end}}>{{.Status}}</td></tr>
{{end}}</table>
{{end}}
</body></html>
`))

// HTML writes a self-contained page: the validation, and per case the
// chart of step time against ranks with its table.
func (r *Report) HTML(w io.Writer) error {
	type row struct {
		Variant, P50, P90, P99, Mean, Spikes, Loss, Status string
		Ranks                                              int
	}
	type vrow struct {
		Case, Variant, From, P50, P90, P99, Spikes, Beyond string
		Ranks                                              int
	}
	type cs struct {
		Name string
		SVG  template.HTML
		Rows []row
	}
	var model strings.Builder
	o := r.Options
	fmt.Fprintf(&model, "Collective %s, %s per hop; %d simulated steps per job; %g%% intervals from %d block-bootstrap resamples.",
		o.Collective.Kind, durText(o.Collective.HopLatency), o.Steps, 100*o.Level, o.Boot)
	fmt.Fprintf(&model, " Host noise %s: %s.", o.HostNoise, noiseText(o.HostNoise))
	data := struct {
		Model, Tolerance, NotValidated string
		Warnings                       []string
		Validation                     []vrow
		Cases                          []cs
	}{Model: model.String(), Tolerance: tolText, NotValidated: joinCV(r.notValidated()), Warnings: r.Warnings}
	pair := func(a, b float64) string { return ms(a) + " / " + ms(b) }
	for _, v := range r.Validation {
		p := v.Predicted.Est
		data.Validation = append(data.Validation, vrow{Case: v.Case, Variant: v.Variant, From: v.From, Ranks: v.Ranks, Beyond: strings.Join(v.Beyond(), ", "),
			P50: fmt.Sprintf("%s (%+.0f%%)", pair(v.Measured.P50, p.P50), 100*v.Err.P50), P90: fmt.Sprintf("%s (%+.0f%%)", pair(v.Measured.P90, p.P90), 100*v.Err.P90),
			P99: fmt.Sprintf("%s (%+.0f%%)", pair(v.Measured.P99, p.P99), 100*v.Err.P99), Spikes: fmt.Sprintf("%.1f / %.1f", v.Measured.SpikeRate, p.SpikeRate)})
	}
	iv := func(e, lo, hi float64) string { return fmt.Sprintf("%s [%s, %s]", ms(e), ms(lo), ms(hi)) }
	for _, c := range r.cases() {
		svg, err := chartSVG(r, c)
		if err != nil {
			return err
		}
		x := cs{Name: c, SVG: svg}
		for _, p := range r.Predictions {
			if p.Case == c {
				x.Rows = append(x.Rows, row{Variant: p.Variant, Ranks: p.Ranks, P50: iv(p.Est.P50, p.Lo.P50, p.Hi.P50), P90: iv(p.Est.P90, p.Lo.P90, p.Hi.P90),
					P99: iv(p.Est.P99, p.Lo.P99, p.Hi.P99), Mean: iv(p.Est.Mean, p.Lo.Mean, p.Hi.Mean),
					Spikes: fmt.Sprintf("%.0f [%.0f, %.0f]", p.Est.SpikeRate, p.Lo.SpikeRate, p.Hi.SpikeRate),
					Loss:   fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*p.Est.Loss, 100*p.Lo.Loss, 100*p.Hi.Loss), Status: r.Status(p.Case, p.Variant)})
			}
		}
		data.Cases = append(data.Cases, x)
	}
	return page.Execute(w, data)
}

// DefaultRanks are the world sizes predicted when none are asked for.
var DefaultRanks = []int{8, 64, 512, 4096}

// ChartsFor is, for another page (gcjitter report's), the chart of step
// time against ranks of every case in dirs that has multi-rank runs,
// predicted with the default options; "" when none has.
func ChartsFor(dirs []string) (template.HTML, error) {
	groups, _, err := Load(dirs)
	if err != nil {
		return "", err
	}
	var multi []*Group
	for _, g := range groups {
		if g.Ranks > 1 {
			multi = append(multi, g)
		}
	}
	if len(multi) == 0 {
		return "", nil
	}
	r := Build(multi, DefaultRanks, Options{})
	var b strings.Builder
	for _, c := range r.cases() {
		svg, err := chartSVG(r, c)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "<figure>%s<figcaption class=\"note\">%s: step time against ranks, predicted from its measured ranks (gcjitter scale; docs/scale.md). Solid: p50 with its interval; dashed: mean. Log axis of ranks.%s</figcaption></figure>\n",
			svg, template.HTMLEscapeString(c), template.HTMLEscapeString(notValidatedIn(r, c)))
	}
	return template.HTML(b.String()), nil
}

// notValidatedIn is a caption's sentence naming the case's variants whose
// validation failed ("" when none did).
func notValidatedIn(r *Report, caseName string) string {
	var vs []string
	for _, cv := range r.notValidated() {
		if cv.c == caseName {
			vs = append(vs, cv.v)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	return " Not validated (the model missed its measured ranks; gcjitter scale says how): " + strings.Join(vs, ", ") + "."
}
