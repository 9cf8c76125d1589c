package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gcjitter/gcjitter/internal/inlinesvg"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// SeriesPoints bounds the points of a step-time series plot. Longer runs
// are cut into this many buckets and each bucket drawn by its minimum and
// maximum, so every spike survives: a spike is its bucket's maximum.
const SeriesPoints = 1500

var (
	colorOld  = color.RGBA{R: 90, G: 110, B: 160, A: 255}
	colorNew  = color.RGBA{R: 230, G: 120, B: 30, A: 255}
	colorGen2 = color.RGBA{R: 200, G: 20, B: 20, A: 255}
	colorGen1 = color.RGBA{R: 150, G: 60, B: 190, A: 255}
	colorGen0 = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

// HTML writes one self-contained page: inline SVG charts drawn with
// gonum/plot, inline CSS, no network access and no external script.
func HTML(w io.Writer, d *Doc) error {
	page := htmlPage{Doc: d, Counts: map[string]int{}}
	for v, n := range d.Counts() {
		page.Counts[string(v)] = n
	}
	if c := d.Comparison; c != nil {
		// Tested rows first; descriptive ones behind their toggle.
		for _, descriptive := range []bool{false, true} {
			for _, r := range c.Rows {
				if (r.Verdict == stats.Descriptive) != descriptive {
					continue
				}
				bench := r.Bench
				if d.Reference != "" { // one directory: the case and the variant say it
					bench = results.CaseOf(r.Bench) + " " + results.VariantOf(r.Bench)
				}
				row := htmlRow{Bench: bench, Case: results.CaseOf(r.Bench), Variant: results.VariantOf(r.Bench), Metric: r.Metric, Old: fmtEst(r.OldEst, r.Unit, r.Exact),
					New: fmtEst(r.NewEst, r.Unit, r.Exact), Change: fmtChangeReadable(r), P: fmtP(r), N: fmt.Sprintf("%d+%d", len(r.Old), len(r.New)),
					Verdict: string(r.Verdict), VerdictText: fmtVerdict(c, r), Reason: r.Reason}
				if descriptive {
					page.Descriptive = append(page.Descriptive, row)
				} else {
					page.Rows = append(page.Rows, row)
				}
			}
		}
		seen := map[string]bool{}
		for _, r := range append(slices.Clone(page.Rows), page.Descriptive...) {
			if !seen[r.Case] {
				seen[r.Case] = true
				page.FilterCases = append(page.FilterCases, r.Case)
			}
			if !seen["\x00"+r.Variant] {
				seen["\x00"+r.Variant] = true
				page.FilterVariants = append(page.FilterVariants, r.Variant)
			}
		}
	}
	// One job for every answer: said once above them.
	for i, a := range d.Answers {
		if i == 0 {
			page.AnswersUnder = a.Under
		} else if a.Under != page.AnswersUnder {
			page.AnswersUnder = ""
			break
		}
	}
	if d.Manifest != nil && (d.Comparison == nil || d.Reference != "") {
		page.Policies = VariantSummaries(d.Manifest)
		page.PolicyHeader = policyHeader
		page.MemoryTrade = memoryTrade(d.Manifest, page.Policies)
	}
	var groups []chartGroup
	figs := figureGroups(d)
	runs := 0
	for _, g := range figs {
		for _, s := range g.Sides {
			runs += len(s.Steps.Runs)
		}
	}
	for gi, g := range figs {
		sec, err := staticSection(d, &g, fmt.Sprintf("charts-%d", gi+1))
		if err != nil {
			return err
		}
		if sec.PerRank {
			page.MultiRank = true
		}
		page.Sections = append(page.Sections, sec)
		groups = append(groups, chartData(sec.ID, &g, timelineBuckets(runs)))
	}
	if len(groups) > 0 {
		scripts, err := interactiveScripts(groups)
		if err != nil {
			return err
		}
		page.Scripts, page.ChartStyle = scripts, uplotStyle()
	}
	if m := d.Manifest; m != nil {
		h := m.Host
		page.Facts = append(page.Facts, [2]string{"host", fmt.Sprintf("%s: %s, %d CPUs, load %.2f", h.Hostname, h.CPUModel, h.CPUs, h.LoadAvg)})
		if h.Governor != "" || h.Turbo != "" {
			page.Facts = append(page.Facts, [2]string{"cpu frequency", fmt.Sprintf("governor %s, turbo %s", orDash(h.Governor), orDash(h.Turbo))})
		}
		for _, g := range h.GPUs {
			page.Facts = append(page.Facts, [2]string{"accelerator", g})
		}
		for _, warn := range h.Warnings {
			page.Facts = append(page.Facts, [2]string{"warning", warn})
		}
		page.Facts = append(page.Facts, [2]string{"interpreter", m.Python + " (" + m.PythonFrom + ")"}, [2]string{"gcjitter", m.Tool})
		seen := map[string]bool{}
		for _, r := range m.Runs {
			if r.Meta == nil {
				continue
			}
			env := fmt.Sprintf("python %s (%s), torch %s, %s %s", r.Meta.Python, r.Meta.Build, orDash(r.Meta.Torch), r.Meta.Device, r.Meta.DevName)
			if !seen[env] {
				seen[env] = true
				page.Facts = append(page.Facts, [2]string{"environment", env})
			}
		}
	}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, page); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sideColor(i int) color.Color {
	if i == 0 {
		return colorOld
	}
	return colorNew
}

// benchOrder lists the benchmarks with step data, in comparison order.
func benchOrder(d *Doc) []string {
	var out []string
	if d.Comparison != nil {
		for _, r := range d.Comparison.Rows {
			if _, ok := d.Steps[r.Bench]; ok && !slices.Contains(out, r.Bench) {
				out = append(out, r.Bench)
			}
		}
	}
	var rest []string
	for b := range d.Steps {
		if !slices.Contains(out, b) {
			rest = append(rest, b)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// staticSection is a group's section with its static figures: the
// fallback where scripts do not run, and what the interactive charts
// replace where they do.
func staticSection(d *Doc, g *figureGroup, id string) (htmlSection, error) {
	sec := htmlSection{Title: g.Title, ID: id}
	if c := d.Comparison; c != nil {
		if d.Reference == "" {
			sec.Spikes = append(sec.Spikes, spikeText(c, g.Benches[0]))
		} else {
			refShown := false
			for _, bench := range g.Benches {
				sp := benchSpikes(c, bench)
				if !refShown && sp[0] != nil { // the reference, once
					sec.Spikes = append(sec.Spikes, sp[0].text(d.Reference+":"))
					refShown = true
				}
				if sp[1] != nil {
					sec.Spikes = append(sec.Spikes, sp[1].text(results.VariantOf(bench)+":"))
				}
			}
		}
	}
	_, hi := g.timeRange()
	for _, side := range g.Sides {
		if len(side.Steps.Runs) == 0 {
			continue
		}
		svg, err := seriesSVG(fmt.Sprintf("%s: step time of run 1 of %d", side.Label, len(side.Steps.Runs)), side.Steps, side.Color, hi/1e6)
		if err != nil {
			return sec, err
		}
		sec.Charts = append(sec.Charts, htmlChart{SVG: svg, Class: "static"})
	}
	if q, err := quantileSVG(g); err != nil {
		return sec, err
	} else if q != "" {
		sec.Charts = append(sec.Charts, htmlChart{SVG: q, Class: "static"})
	}
	if h, err := histogramSVG(g); err != nil {
		return sec, err
	} else if h != "" {
		sec.Charts = append(sec.Charts, htmlChart{SVG: h, Class: "static"})
	}
	for _, side := range g.Sides {
		if len(side.Steps.RankPause) == 0 {
			continue
		}
		svg, err := ranksSVG(fmt.Sprintf("%s: per-rank view, each rank's collection pauses in run 1 (global step = slowest rank)", side.Label), side.Steps.RankPause)
		if err != nil {
			return sec, err
		}
		// The per-rank view is a figure of its own, with an id and the
		// ranks named, so a reader (and a test) can tell it was drawn.
		ranks := make([]string, len(side.Steps.RankPause))
		for r := range ranks {
			ranks[r] = fmt.Sprint(r)
		}
		sec.Charts = append(sec.Charts, htmlChart{SVG: svg, Class: "per-rank", ID: fmt.Sprintf("per-rank-%s-%s", strings.TrimPrefix(id, "charts-"), side.Label),
			Caption: fmt.Sprintf("%s: per-rank view of ranks %s", side.Label, strings.Join(ranks, ", "))})
		sec.PerRank = true
	}
	return sec, nil
}

type htmlPage struct {
	*Doc
	Counts map[string]int
	// AnswersUnder is the job every answer was judged for, when they share
	// it ("" otherwise: each says its own).
	AnswersUnder string
	// Rows are the tested verdicts, Descriptive the rows reported and not
	// tested (folded); FilterCases and FilterVariants name what the
	// filter offers.
	Rows, Descriptive           []htmlRow
	FilterCases, FilterVariants []string
	Sections                    []htmlSection
	Facts                       [][2]string
	// Policies is a results directory's variants table (as text prints
	// it), with its header.
	Policies     []VariantSummary
	PolicyHeader []string
	// MemoryTrade says which variants buy their tail with memory.
	MemoryTrade []string
	// Scripts are the interactive charts (data, uPlot, our script) and
	// ChartStyle uPlot's stylesheet; empty without step series.
	Scripts    template.HTML
	ChartStyle template.CSS
	// MultiRank: some section has a per-rank view (and the footer says
	// how to read it).
	MultiRank bool
}

type htmlRow struct {
	Bench, Case, Variant, Metric, Old, New, Change, P, N, Verdict, VerdictText, Reason string
}

type htmlSection struct {
	Title string
	// ID is the element the script draws the interactive charts into.
	ID      string
	Spikes  []string // the text report's spike lines
	Charts  []htmlChart
	PerRank bool
}

// htmlChart is one figure: Class "static" for the figures the interactive
// charts replace, "per-rank" for the per-rank view (with an ID and a
// Caption).
type htmlChart struct {
	SVG                template.HTML
	Class, ID, Caption string
}

// seriesSVG draws run 1's step times, downsampled by buckets of min and
// max, with the steps that contain a collection marked by generation, on a
// y axis up to yMax (ms): the sides of a section share it.
func seriesSVG(title string, s *results.Steps, c color.Color, yMax float64) (template.HTML, error) {
	durs, gcs := s.Runs[0], s.GC[0]
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	p.X.Tick.Marker = wholeTicks{}
	p.Y.Label.Text = "step time (ms)"
	line, marks := downsample(durs, gcs, SeriesPoints)
	l, err := plotter.NewLine(line)
	if err != nil {
		return "", err
	}
	l.Color = c
	l.Width = vg.Points(0.7)
	p.Add(l)
	p.Legend.Top = true
	for g := 2; g >= 0; g-- {
		if len(marks[g]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(marks[g])
		if err != nil {
			return "", err
		}
		sc.GlyphStyle.Color = []color.Color{colorGen0, colorGen1, colorGen2}[g]
		sc.GlyphStyle.Radius = vg.Points([]float64{1.2, 2, 2.6}[g])
		sc.GlyphStyle.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.CircleGlyph{}}[g]
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("gen-%d collection", g), sc)
	}
	// Headroom above the highest spike, so the legend (top right) never
	// sits on the spikes it explains.
	p.Y.Min = 0
	p.Y.Max = 1.3 * max(yMax, p.Y.Max)
	return inlinesvg.Of(p, 9*vg.Inch, 2.6*vg.Inch)
}

// downsample keeps at most about 2*points line points (each bucket's min
// and max, in step order) and one marker per bucket and generation, at the
// bucket's slowest step with that collection. Short runs are drawn whole.
func downsample(durs []float64, gcs []uint8, points int) (plotter.XYs, [3]plotter.XYs) {
	var line plotter.XYs
	var marks [3]plotter.XYs
	k := max(1, (len(durs)+points-1)/points)
	for start := 0; start < len(durs); start += k {
		lo, hi, best := bucketExtremes(durs, gcs, start, min(start+k, len(durs)))
		for _, i := range sortedPair(lo, hi) {
			line = append(line, plotter.XY{X: float64(i), Y: durs[i] / 1e6})
		}
		for g := range 3 {
			// Young collections are everywhere in long runs: mark them only
			// when the run is drawn whole.
			if best[g] >= 0 && (g > 0 || k == 1) {
				marks[g] = append(marks[g], plotter.XY{X: float64(best[g]), Y: durs[best[g]] / 1e6})
			}
		}
	}
	return line, marks
}

func sortedPair(a, b int) []int {
	switch {
	case a == b:
		return []int{a}
	case a < b:
		return []int{a, b}
	}
	return []int{b, a}
}

// ranksSVG draws, per rank, its in-step collection pause at each step
// (bucket maxima for long runs): the rank whose line peaks at a global
// spike is the straggler.
func ranksSVG(title string, pauses [][]float64) (template.HTML, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	p.Y.Label.Text = "collection pause (ms)"
	p.Legend.Top = true
	for r, ps := range pauses {
		k := max(1, (len(ps)+SeriesPoints-1)/SeriesPoints)
		var pts plotter.XYs
		for start := 0; start < len(ps); start += k {
			best := start
			for i := start; i < min(start+k, len(ps)); i++ {
				if ps[i] > ps[best] {
					best = i
				}
			}
			pts = append(pts, plotter.XY{X: float64(best), Y: ps[best] / 1e6})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = rankColors[r%len(rankColors)]
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("rank %d", r), l)
	}
	return inlinesvg.Of(p, 9*vg.Inch, 2.6*vg.Inch)
}

var rankColors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255},
	color.RGBA{R: 227, G: 119, B: 194, A: 255}, color.RGBA{R: 127, G: 127, B: 127, A: 255},
}

// quantileSVG draws each side's pooled step-time quantiles against the
// number of nines (p90 is 1, p99 is 2) up to its slowest step: the tail
// gets as much room as the body, and the largest step is on the chart.
func quantileSVG(g *figureGroup) (template.HTML, error) {
	p := plot.New()
	p.Title.Text = "tail: step-time quantiles to the slowest step, all runs pooled"
	p.X.Label.Text = "quantile"
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Label.Text = "step time (ms)"
	if g.logTime() {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	drawn := false
	for i := range g.Sides {
		s := &g.Sides[i]
		xs, ys := s.tailCurve()
		if len(xs) < 2 {
			continue
		}
		pts := make(plotter.XYs, len(xs))
		for j := range xs {
			pts[j] = plotter.XY{X: xs[j], Y: ys[j] / 1e6}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = s.Color
		l.Width = vg.Points(1.4)
		label := fmt.Sprintf("%s (%d steps)", s.Label, s.n())
		if len(s.sorted) == 0 {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			label = fmt.Sprintf("%s (%d steps, from its sketch)", s.Label, s.n())
		}
		p.Add(l)
		p.Legend.Add(label, l)
		drawn = true
	}
	if !drawn {
		return "", nil
	}
	return inlinesvg.Of(p, 9*vg.Inch, 3*vg.Inch)
}

// histogramSVG draws each side's step-time histogram from the fastest to
// the slowest step, the share of steps on a log axis, so a handful of
// collection pauses shows beside the thousands of ordinary steps.
func histogramSVG(g *figureGroup) (template.HTML, error) {
	edges := g.histBins(histogramBins)
	if len(edges) < 2 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "histogram to the slowest step (share of steps, log axis)"
	p.X.Label.Text = "step time (ms)"
	p.Y.Label.Text = "share of steps"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	if g.logTime() {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	// An empty bin has no place on a log axis: it is drawn at the floor,
	// half the share of one step of the largest side.
	floor := 1.0
	for _, s := range g.Sides {
		if n := len(s.sorted); n > 0 {
			floor = min(floor, 0.5/float64(n))
		}
	}
	drawn := false
	for _, s := range g.Sides {
		shares := s.histShares(edges)
		if shares == nil {
			continue
		}
		var pts plotter.XYs
		for b, share := range shares {
			y := max(share, floor)
			pts = append(pts, plotter.XY{X: edges[b] / 1e6, Y: y}, plotter.XY{X: edges[b+1] / 1e6, Y: y})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = s.Color
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.Label, l)
		drawn = true
	}
	if !drawn {
		return "", nil
	}
	p.Y.Min = floor
	return inlinesvg.Of(p, 9*vg.Inch, 2.6*vg.Inch)
}

// ninesTicks label the nines axis by quantile: p50, p90, p99, p99.9.
type ninesTicks struct{}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range []struct {
		x     float64
		label string
	}{{0, "min"}, {math.Log10(2), "p50"}, {1, "p90"}, {2, "p99"}, {3, "p99.9"}, {4, "p99.99"}, {5, "p99.999"}, {6, "p99.9999"}, {7, "p99.99999"}} {
		if t.x >= lo && t.x <= hi {
			out = append(out, plot.Tick{Value: t.x, Label: t.label})
		}
	}
	return out
}

// wholeTicks are gonum's default ticks printed as whole numbers (steps are
// counted, not measured).
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}

func pooledSorted(s *results.Steps) []float64 { return s.PooledSorted() }

var htmlTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1200px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 24px; border-bottom: 1px solid #ddd; }
.banner { padding: 10px 14px; border-radius: 6px; margin: 12px 0; font-weight: 600; }
.pass { background: #e8f5e9; } .fail { background: #fdecea; } .undecided { background: #fff8e1; } .neutral { background: #eef2f8; font-weight: 400; }
.answer { padding: 4px 10px; border-radius: 6px; margin: 4px 0; } table.policies td { padding: 2px 6px; } table.policies td.bench { white-space: nowrap; } tr.case td { font-weight: 600; text-align: left; padding-top: 6px; border-bottom: 1px solid #ccc; } .answer .why { color: #444; font-size: 13px; line-height: 1.35; } .warn { color: #a04000; font-weight: 400; }
.regs { margin: 4px 0 4px 18px; padding: 0; font-weight: 400; } details summary { cursor: pointer; margin: 8px 0; color: #333; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 6px; text-align: right; white-space: nowrap; }
td.bench { white-space: normal; overflow-wrap: anywhere; min-width: 12em; } .wide { overflow-x: auto; }
th:first-child, td:first-child, td.l { text-align: left; }
td.regressed { background: #fdecea; font-weight: 600; } td.improved { background: #e8f5e9; }
td.unknown { color: #8a6d00; } .reason { color: #555; white-space: normal; text-align: left; font-size: 12px; } .spikes { color: #333; font-family: ui-monospace, monospace; font-size: 12px; margin: 0 0 8px; }
figure { margin: 8px 0 18px; } svg { max-width: 100%; height: auto; }
.facts td { text-align: left; white-space: normal; } code { background: #f4f4f4; padding: 1px 4px; overflow-wrap: anywhere; }
p, pre { overflow-wrap: anywhere; } pre { white-space: pre-wrap; }
.interactive { display: none; } .js .interactive { display: block; } .js figure.static { display: none; }
.interactive figure { position: relative; } .u-title { font-size: 14px; font-weight: 600; }
.u-legend { font-size: 12px; } .u-legend .u-marker { width: 10px; height: 10px; }
.tip { position: absolute; display: none; z-index: 10; pointer-events: none; background: rgba(255,255,255,.95); border: 1px solid #999; border-radius: 4px; padding: 3px 6px; font-size: 12px; white-space: nowrap; }
.range, .hint { font-size: 12px; color: #555; } .hint { color: #888; }
{{.ChartStyle}}
</style></head>
<body data-ready="0">
<h1>{{.Title}}</h1>
<p>generated {{.Generated.Format "2006-01-02 15:04:05 MST"}} by gcjitter ({{.Kind}})</p>
{{with .Partial}}<div class="banner undecided partial"><b>{{.}}</b></div>{{end}}
{{with .Answers}}<section id="answer"><h2>What to set</h2>{{with $.AnswersUnder}}<p class="hint">judged for {{.}}; gcjitter advise says more, and its -duration and -mem-limit set the job</p>{{end}}
{{range .}}<div class="answer {{if .Err}}undecided{{else if .Undecided}}undecided{{else}}pass{{end}}"><b>{{.Case}}: {{.Headline}}</b>{{with .Warning}} <span class="warn">(warning: {{.}})</span>{{end}}
<div class="why">{{if .Err}}{{.Err}}{{else}}{{.Reason}}{{end}}</div>{{range .Settle}}<div class="why">settle {{.}}</div>{{end}}{{if not $.AnswersUnder}}{{with .Under}}<div class="hint">judged for {{.}}</div>{{end}}{{end}}</div>
{{end}}</section>{{end}}
{{if .Comparison}}{{if not .Comparison.Reference}}<div class="banner {{if eq .Status "regression"}}fail{{else if eq .Status "undecided"}}undecided{{else}}pass{{end}}" id="banner"><b>{{.Status}}{{with .Regressions}}: {{index . 0}}{{if gt (len .) 1}} (and {{len (slice . 1)}} more){{end}}{{end}}</b>
{{with .Regressions}}{{if gt (len .) 1}}<ul class="regs">{{range slice . 1}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
<div>{{index .Counts "regressed"}} regressed · {{index .Counts "improved"}} improved · {{index .Counts "same"}} same · {{index .Counts "unknown"}} unknown (undecided) · {{index .Counts "descriptive"}} descriptive</div>{{with .Comparison.SensitivityText}}<div class="why" id="sensitivity">{{.}}</div>{{end}}</div>
<p>old: <code>{{.Comparison.Old.Path}}</code> · new: <code>{{.Comparison.New.Path}}</code> · runs are the statistical unit; each change with its interval and the test that decided it; Holm-adjusted over the tested (primary) metrics (family-wise alpha {{.Comparison.Alpha}}); descriptive metrics are reported, not tested</p>{{end}}{{end}}
{{range .Schedules}}<h2>GC schedule: {{.Golden.Case}}</h2><pre>{{.Text}}</pre>{{end}}
{{with .FailedRuns}}<h2>Runs that did not complete</h2><table><tr><th>run</th><th>status</th><th>reason</th></tr>
{{range .}}<tr><td>{{.ID}}</td><td>{{.Status}}</td><td class="reason">{{.Reason}}</td></tr>{{end}}</table>{{end}}
{{with .Policies}}<h2 id="policies">Policies side by side</h2><p class="reason">per variant, medians over runs; spikes and gen2 are counts per run; in GC: share of spikes that are GC spikes{{with $.Reference}}; each variant's verdicts against <code>{{.}}</code> are below the charts{{end}}</p>
<div class="wide"><table class="policies"><tr>{{range $.PolicyHeader}}<th>{{.}}</th>{{end}}</tr>
{{$case := ""}}{{range .}}{{if ne .Case $case}}{{$case = .Case}}<tr class="case"><td colspan="{{len $.PolicyHeader}}">{{.Case}}</td></tr>{{end}}<tr><td class="bench"><code>{{.Variant}}</code></td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>
{{range $.MemoryTrade}}<p class="reason">{{.}}</p>{{end}}{{end}}
{{range .Sections}}<h2>{{.Title}}</h2>
<div class="interactive" id="{{.ID}}"></div>
{{range .Charts}}<figure{{with .Class}} class="{{.}}"{{end}}{{with .ID}} id="{{.}}"{{end}}>{{with .Caption}}<figcaption>{{.}}</figcaption>{{end}}{{.SVG}}</figure>{{end}}{{range .Spikes}}<p class="spikes">{{.}}</p>{{end}}{{end}}
{{if .Sections}}<p class="reason">Timelines: each bucket of steps is drawn by its fastest and slowest step, so every spike shows; steps containing a collection are marked by generation (young collections only when the run is drawn whole). Tails: the i-th fastest of n steps sits at quantile (i+0.5)/n, so each curve ends at its slowest step; a dashed line is a baseline drawn from its sketch.{{if .MultiRank}} Multi-rank runs show the global step time (the slowest rank at each step) and a per-rank view of each rank's collection pauses.{{end}}</p>{{end}}
{{if or .Rows .Descriptive}}<h2 id="verdicts">Verdicts{{with .Reference}}: every variant against {{.}}{{end}}</h2>
{{if .Comparison.Reference}}<div class="banner neutral" id="banner"><b>every policy against {{.Comparison.Reference}}</b>: {{.PolicyCounts}}</div>
<p class="reason">one results directory: each variant is compared with <code>{{.Comparison.Reference}}</code>, so "worse" is a finding about the policy, not a breakage of the software</p>{{end}}
<p class="filter">show <select id="filter-case" aria-label="case"><option value="">every case</option>{{range .FilterCases}}<option>{{.}}</option>{{end}}</select>
<select id="filter-variant" aria-label="variant"><option value="">every variant</option>{{range .FilterVariants}}<option>{{.}}</option>{{end}}</select> <span class="hint" id="filter-count"></span></p>
{{with .Rows}}<div class="wide" id="tested">{{template "rows" .}}</div>{{end}}
{{with .Descriptive}}<details id="descriptive"><summary>{{len .}} descriptive rows (reported, not tested)</summary><div class="wide">{{template "rows" .}}</div></details>{{end}}
{{with .Comparison.Notes}}<h3>Notes</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<script>(function () {
  var c = document.getElementById("filter-case"), v = document.getElementById("filter-variant"), n = document.getElementById("filter-count");
  function apply() {
    var shown = 0;
    document.querySelectorAll("table.verdicts tr[data-case]").forEach(function (tr) {
      var on = (!c.value || tr.dataset.case === c.value) && (!v.value || tr.dataset.variant === v.value);
      tr.style.display = on ? "" : "none";
      if (on && tr.classList.contains("row")) shown++;
    });
    n.textContent = shown + " rows";
  }
  c.addEventListener("change", apply); v.addEventListener("change", apply); apply();
})();</script>{{end}}
{{with .Scale}}<h2>At scale</h2>{{.}}{{end}}
{{with .Facts}}<h2>Environment and host</h2><table class="facts">{{range .}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{.Scripts}}<script>document.body.dataset.ready = "1";</script>
</body></html>
{{define "rows"}}<table class="verdicts"><tr><th>benchmark</th><th>metric</th><th>old</th><th>new</th><th>change [interval]</th><th>p</th><th>n</th><th>verdict</th></tr>
{{range .}}<tr class="row" data-case="{{.Case}}" data-variant="{{.Variant}}" title="{{.Reason}}"><td class="bench">{{.Bench}}</td><td class="l">{{.Metric}}</td><td>{{.Old}}</td><td>{{.New}}</td><td>{{.Change}}</td><td>{{.P}}</td><td>{{.N}}</td><td class="{{.Verdict}}">{{.VerdictText}}</td></tr>
{{if or (eq .Verdict "regressed") (eq .Verdict "improved")}}<tr class="why" data-case="{{.Case}}" data-variant="{{.Variant}}"><td></td><td colspan="7" class="reason">{{.Reason}}</td></tr>{{end}}{{end}}</table>{{end}}`))
