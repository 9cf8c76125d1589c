package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Gate is a judged gate as its reports show it (gate.Outcome.Report): the
// gate judges and report renders and writes, so the package of the rules
// writes no file and report needs nothing of it.
type Gate struct {
	// Class is the host class gated on; Baselines says where its
	// baselines are (a directory, or "the history: ..." for nights).
	Class, Baselines string
	// ExpectText is the expectations' output ("" when unchecked).
	ExpectText string
	Schedules  []*golden.Result
	// TimingReported: the timing layer was reported only, not gated.
	TimingReported bool
	Comparison     *results.Comparison
	// Manifest is the new runs'.
	Manifest *results.Manifest
	// Sketches are the baselines' step-time quantiles per benchmark:
	// baselines keep no steps, so their tails are drawn from these.
	Sketches map[string]*stats.Sketch
	// LoadSteps reads the new runs' steps (the gate's results.Cache, so
	// that no stream is read twice); nil: results.LoadSteps.
	LoadSteps func(dir string) (map[string]*results.Steps, error)
}

// WriteText writes the gate's verdicts as people read them: the
// expectations, each case's schedule layer, then the timing layer.
func (g *Gate) WriteText(w io.Writer, color bool) {
	if p := g.Manifest.Partial(); p != "" {
		fmt.Fprintf(w, "%s\n", p)
	}
	io.WriteString(w, g.ExpectText)
	fmt.Fprintf(w, "\ngate: host class %s, baselines in %s\n", g.Class, g.Baselines)
	for _, res := range g.Schedules {
		fmt.Fprintf(w, "\n%s", res.Text())
	}
	fmt.Fprintf(w, "\ntiming layer (%s):\n", map[bool]string{false: "gated", true: "reported only"}[g.TimingReported])
	TextColor(w, g.Comparison, color)
}

// doc is the gate's report document, with the new runs' steps (in dir)
// and the baselines' tails.
func (g *Gate) doc(dir string) (*Doc, error) {
	d := &Doc{Kind: "gate", Title: "gcjitter gate: host class " + g.Class, Generated: time.Now(),
		Comparison: g.Comparison, Schedules: g.Schedules, Manifest: g.Manifest}
	load := g.LoadSteps
	if load == nil {
		load = results.LoadSteps
	}
	if err := AttachStepsFrom(d, load, "", dir); err != nil {
		return nil, err
	}
	for bench, sk := range g.Sketches {
		if pair := d.Steps[bench]; pair[0] == nil {
			pair[0] = &results.Steps{Sketch: sk}
			d.Steps[bench] = pair
		}
	}
	return d, nil
}

// GateFormats are the files a gate leaves in its results directory
// (gate.txt besides): what CI systems pick up.
var GateFormats = []string{"markdown", "json", "junit", "html"}

// WriteReports writes gate.txt (never coloured) and the report files of g
// into dir, its results directory, and returns the document.
func (g *Gate) WriteReports(dir string) (*Doc, error) {
	var text bytes.Buffer
	g.WriteText(&text, false)
	if err := atomicfile.Write(filepath.Join(dir, "gate.txt"), text.Bytes(), 0o644); err != nil {
		return nil, err
	}
	d, err := g.doc(dir)
	if err != nil {
		return nil, err
	}
	if _, err := WriteFiles(dir, "gate", d, GateFormats...); err != nil {
		return nil, err
	}
	return d, nil
}
