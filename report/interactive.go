package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/results"
)

// The page's interactive charts: uPlot (MIT, vendored from npm with its
// licence; made for large time series, 50 KB) and our script, both inlined
// so a page needs no network.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/uPlot.LICENSE
	uplotLicense string
	//go:embed assets/charts.js
	chartsJS string
)

// TimelineBuckets bounds an interactive timeline: a longer run is cut into
// this many buckets, each drawn by its fastest and slowest step (so every
// spike stays), which keeps a million-step page light.
const TimelineBuckets = 2000

// pageSlots bounds the timeline points of a whole page (about 20 bytes
// each): pages with many runs get fewer buckets per run, down to
// minBuckets, so a gate over many cases stays a few MB.
const (
	pageSlots  = 120_000
	minBuckets = 200
)

// timelineBuckets is the buckets per run on a page drawing runs runs.
func timelineBuckets(runs int) int {
	return min(TimelineBuckets, max(minBuckets, pageSlots/(2*max(runs, 1))))
}

// histogramBins is the number of bins of every histogram, static and
// interactive.
const histogramBins = 60

// chartGroup is one section's data for the script (assets/charts.js).
type chartGroup struct {
	ID      string `json:"id"`
	LogTime bool   `json:"logTime"`
	// Bucket is the steps per bucket of the timeline (1: every step);
	// Steps the longest run's.
	Bucket int            `json:"bucket"`
	Steps  int            `json:"steps"`
	X      jsInts         `json:"x"` // the timeline's slots: a step number each
	Sides  []chartSide    `json:"sides"`
	Marks  [3]*chartMarks `json:"marks"`
	Edges  jsNums         `json:"edges"` // histogram bin edges, ms
}

type chartSide struct {
	Label  string     `json:"label"`
	Color  string     `json:"color"`
	Steps  int        `json:"steps"`
	Sketch bool       `json:"sketch,omitempty"`
	Runs   []chartRun `json:"runs"`
	TailX  jsNums     `json:"tailX"` // nines
	TailY  jsNums     `json:"tailY"` // ms
	Hist   jsNums     `json:"hist,omitempty"`
}

// chartRun is one run on the timeline's slots: step time (ms, null where
// the run has no step), when bucketed the step of each slot as its offset
// in the bucket (short numbers, a smaller page), and per slot with
// collections [slot, generation bits, pause ms, collected].
type chartRun struct {
	Y jsNums `json:"y"`
	// M is the run's RSS at each slot's step, in MiB (nil when the run
	// recorded none): the memory timeline.
	M  jsNums   `json:"m,omitempty"`
	S  jsInts   `json:"s,omitempty"`
	GC jsTuples `json:"gc"`
}

// chartMarks are one generation's markers: per slot the slowest step with
// such a collection (over every run), and its detail [slot, side, run,
// step, pause ms, collected].
type chartMarks struct {
	Y  jsNums      `json:"y"`
	D  jsTuples    `json:"d"`
	at map[int]int // slot -> its row in D
}

// jsNums is a JSON array of numbers: whole numbers exact (steps, counts),
// others at 5 significant digits; NaN is null.
type jsNums []float64

func (a jsNums) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+7*len(a))
	b = append(b, '[')
	for i, v := range a {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			b = append(b, "null"...)
		case v == math.Trunc(v) && math.Abs(v) < 1e15:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			b = strconv.AppendFloat(b, v, 'g', 5, 64)
		}
	}
	return append(b, ']'), nil
}

type jsInts []int

func (a jsInts) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+7*len(a))
	b = append(b, '[')
	for i, v := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']'), nil
}

type jsTuples []jsNums

func (a jsTuples) MarshalJSON() ([]byte, error) {
	if a == nil {
		return []byte("[]"), nil
	}
	var b []byte
	b = append(b, '[')
	for i, t := range a {
		if i > 0 {
			b = append(b, ',')
		}
		tb, _ := t.MarshalJSON()
		b = append(b, tb...)
	}
	return append(b, ']'), nil
}

// timelineSlots are the timeline's x positions for runs of up to n steps:
// every step when n fits, else two slots per bucket of k steps (its
// fastest, then its slowest step).
func timelineSlots(n, buckets int) (k int, x []int) {
	k = max(1, (n+buckets-1)/buckets)
	if k == 1 {
		x = make([]int, n)
		for i := range x {
			x[i] = i
		}
		return k, x
	}
	for start := 0; start < n; start += k {
		x = append(x, start, start+k/2)
	}
	return k, x
}

// chartData is a group's data for the page's script, its runs cut into at
// most buckets buckets.
func chartData(id string, g *figureGroup, buckets int) chartGroup {
	cg := chartGroup{ID: id, LogTime: g.logTime()}
	for _, s := range g.Sides {
		for _, r := range s.Steps.Runs {
			cg.Steps = max(cg.Steps, len(r))
		}
	}
	var x []int
	cg.Bucket, x = timelineSlots(cg.Steps, buckets)
	cg.X = x
	edges := g.histBins(histogramBins)
	for _, e := range edges {
		cg.Edges = append(cg.Edges, e/1e6)
	}
	for si := range g.Sides {
		s := &g.Sides[si]
		cs := chartSide{Label: s.Label, Color: cssColor(s.Color), Steps: s.n(), Sketch: len(s.sorted) == 0}
		xs, ys := s.tailCurve()
		cs.TailX = xs
		for _, y := range ys {
			cs.TailY = append(cs.TailY, y/1e6)
		}
		cs.Hist = s.histShares(edges)
		for ri := range s.Steps.Runs {
			cs.Runs = append(cs.Runs, chartRunOf(s.Steps, ri, len(x), cg.Bucket, si, &cg.Marks))
		}
		if cs.Runs == nil {
			cs.Runs = []chartRun{}
		}
		cg.Sides = append(cg.Sides, cs)
	}
	return cg
}

// chartRunOf puts run ri on the slots and adds its collections to the
// generation markers.
func chartRunOf(s *results.Steps, ri, slots, k, side int, marks *[3]*chartMarks) chartRun {
	durs, gcs := s.Runs[ri], s.GC[ri]
	detail := func(i int) (pause, collected float64) {
		if ri < len(s.Pause) && i < len(s.Pause[ri]) {
			pause = float64(s.Pause[ri][i]) / 1e6
		}
		if ri < len(s.Collected) && i < len(s.Collected[ri]) {
			collected = float64(s.Collected[ri][i])
		}
		return pause, collected
	}
	cr := chartRun{Y: make(jsNums, slots)}
	var rss []float32
	if ri < len(s.RSS) && slices.ContainsFunc(s.RSS[ri], func(v float32) bool { return !math.IsNaN(float64(v)) }) {
		rss, cr.M = s.RSS[ri], make(jsNums, slots)
		for slot := range cr.M {
			cr.M[slot] = math.NaN()
		}
	}
	if k > 1 {
		cr.S = make(jsInts, slots)
	}
	mark := func(g, slot, i int) {
		if g == 0 && k > 1 {
			return // young collections are everywhere in a long run
		}
		m := marks[g]
		if m == nil {
			m = &chartMarks{Y: make(jsNums, slots), at: map[int]int{}}
			for j := range m.Y {
				m.Y[j] = math.NaN()
			}
			marks[g] = m
		}
		y := durs[i] / 1e6
		if !math.IsNaN(m.Y[slot]) && m.Y[slot] >= y {
			return
		}
		m.Y[slot] = y
		p, c := detail(i)
		row := jsNums{float64(slot), float64(side), float64(ri), float64(i), p, c}
		if j, ok := m.at[slot]; ok { // a slower one replaces it
			m.D[j] = row
			return
		}
		m.at[slot] = len(m.D)
		m.D = append(m.D, row)
	}
	put := func(slot, i int) {
		cr.Y[slot] = durs[i] / 1e6
		if rss != nil && i < len(rss) {
			cr.M[slot] = float64(rss[i]) / (1 << 20)
		}
		if cr.S != nil {
			cr.S[slot] = i % k
		}
		if gcs[i] != 0 {
			p, c := detail(i)
			cr.GC = append(cr.GC, jsNums{float64(slot), float64(gcs[i]), p, c})
		}
	}
	for slot := range cr.Y {
		cr.Y[slot] = math.NaN()
	}
	if k == 1 {
		for i := range durs {
			put(i, i)
			for g := range 3 {
				if gcs[i]&results.GenBit(g) != 0 {
					mark(g, i, i)
				}
			}
		}
		return cr
	}
	for b, start := 0, 0; start < len(durs); b, start = b+1, start+k {
		lo, hi, slowest := bucketExtremes(durs, gcs, start, min(start+k, len(durs)))
		put(2*b, lo)
		put(2*b+1, hi)
		for g, i := range slowest {
			if i >= 0 {
				mark(g, 2*b+1, i)
			}
		}
	}
	return cr
}

// interactiveScripts is the page's script block: its data, uPlot with its
// licence, and the charts' script. json.Marshal escapes <, > and &, so the
// data cannot end its script element.
func interactiveScripts(groups []chartGroup) (template.HTML, error) {
	data, err := json.Marshal(struct {
		Groups []chartGroup `json:"groups"`
	}{groups})
	if err != nil {
		return "", fmt.Errorf("chart data: %w", err)
	}
	var b strings.Builder
	b.WriteString(`<script type="application/json" id="gcjitter-data">`)
	b.Write(data)
	b.WriteString("</script>\n<script>/*! uPlot v1.6.32, vendored from npm:\n")
	b.WriteString(strings.ReplaceAll(uplotLicense, "*/", "* /"))
	b.WriteString("*/\n")
	b.WriteString(uplotJS)
	b.WriteString("\n</script>\n<script>\n")
	b.WriteString(chartsJS)
	b.WriteString("</script>\n")
	return template.HTML(b.String()), nil // our data (escaped by json.Marshal) and vendored code
}

// uplotStyle is uPlot's stylesheet, inlined.
func uplotStyle() template.CSS { return template.CSS(uplotCSS) }

// bucketExtremes are a bucket's fastest and slowest steps, and per
// generation its slowest step holding such a collection (-1: none): what a
// downsampled series draws of it, so every spike stays.
func bucketExtremes(durs []float64, gcs []uint8, start, end int) (lo, hi int, slowest [3]int) {
	lo, hi, slowest = start, start, [3]int{-1, -1, -1}
	for i := start; i < end; i++ {
		if durs[i] < durs[lo] {
			lo = i
		}
		if durs[i] > durs[hi] {
			hi = i
		}
		for g := range 3 {
			if gcs[i]&results.GenBit(g) != 0 && (slowest[g] < 0 || durs[i] > durs[slowest[g]]) {
				slowest[g] = i
			}
		}
	}
	return lo, hi, slowest
}
