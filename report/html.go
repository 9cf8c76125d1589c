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
	page.Explain, page.ExplainHeader, page.ExplainColumns = explainTables(d.Comparison), ExplainHeader, explainColumns
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
	// Explain are the tables of what moved the step and its tail, by
	// part, with their header and columns.
	Explain        []explainTable
	ExplainHeader  string
	ExplainColumns []string
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
