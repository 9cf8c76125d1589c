package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/stats"
)

// Data is one side of a comparison: per-run values of every metric of
// every benchmark, from a results directory or from any benchfmt file.
type Data struct {
	Path    string
	Benches []string // in order of first appearance
	// Values[bench][unit] are the per-run values, one per run.
	Values map[string]map[string][]float64
	Units  map[string][]string // units per bench, in order of first appearance
	// MinIters is the fewest iterations (measured steps) of a bench's runs.
	MinIters map[string]int
	Better   map[string]int // per unit: -1 lower is better, +1 higher, 0 unknown
	// Runs are the run summaries per bench; only for results directories.
	Runs map[string][]stats.RunSummary
	// Sketches are the runs' step-time quantiles, parallel to Runs (nil
	// for a run without steps).
	Sketches map[string][]*stats.Sketch
	// Gate settings from the manifest's cases, by bench (results
	// directories only).
	Floors map[string]map[string]float64
	Alpha  float64
	// Env is the environment per bench (results directories only).
	Env      map[string]Env
	Warnings []string
	// Session is the session the runs came from when they are not a
	// results directory's (baselines: golden.SessionData); CompareSessions
	// reads it as a directory's manifest.
	Session *Manifest
}

// InputError is a bad input file; its message names the file (and line).
type InputError struct{ Msgs []string }

func (e *InputError) Error() string {
	if len(e.Msgs) == 1 {
		return e.Msgs[0]
	}
	s := fmt.Sprintf("%d problems:", len(e.Msgs))
	for _, m := range e.Msgs {
		s += "\n  " + m
	}
	return s
}

func (e *InputError) ExitCode() int { return cli.Usage }

func newData(path string) *Data {
	return &Data{Path: path, Values: map[string]map[string][]float64{}, Units: map[string][]string{},
		MinIters: map[string]int{}, Better: map[string]int{}, Runs: map[string][]stats.RunSummary{}, Sketches: map[string][]*stats.Sketch{},
		Floors: map[string]map[string]float64{}, Env: map[string]Env{}}
}

// NewData is an empty side of a comparison, for sources other than results
// directories and benchfmt files (baselines).
func NewData(path string) *Data { return newData(path) }

// AddValue adds one run's value of a gcjitter metric (lower is better),
// tidying its unit as benchfmt does.
func (d *Data) AddValue(bench, unit string, v float64) {
	v, unit = benchunit.Tidy(v, unit)
	d.add(bench, unit, v)
	d.Better[unit] = -1
}

// AddIters records a run's measured steps.
func (d *Data) AddIters(bench string, n int) { d.iters(bench, n) }

func (d *Data) add(bench, unit string, v float64) {
	if d.Values[bench] == nil {
		d.Values[bench] = map[string][]float64{}
		d.Benches = append(d.Benches, bench)
	}
	if _, ok := d.Values[bench][unit]; !ok {
		d.Units[bench] = append(d.Units[bench], unit)
	}
	d.Values[bench][unit] = append(d.Values[bench][unit], v)
}

func (d *Data) iters(bench string, n int) {
	if cur, ok := d.MinIters[bench]; !ok || n < cur {
		d.MinIters[bench] = n
	}
}

// Load reads a results directory (it has a manifest.json) or a benchfmt
// file. A non-zero spike rule overrides the cases' own when summaries are
// recomputed from a directory's record streams.
func Load(path string, spike stats.SpikeRule) (*Data, error) {
	return new(Cache).Load(path, spike)
}

// Load is Load through the cache: a results directory's runs are read from
// their summaries where those are current (see SummaryVersion).
func (c *Cache) Load(path string, spike stats.SpikeRule) (*Data, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &InputError{[]string{fmt.Sprintf("%s: no such file or directory", path)}}
		}
		return nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, ManifestFile)); err != nil {
			return nil, &InputError{[]string{fmt.Sprintf("%s: a directory without %s is not a gcjitter results directory", path, ManifestFile)}}
		}
		return c.loadDir(path, spike)
	}
	return loadBenchfmt(path)
}

// loadBenchfmt reads any benchfmt file: each result line is one run, each
// of its values one metric.
func loadBenchfmt(path string) (*Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBenchfmt(f, path)
}

func readBenchfmt(in io.Reader, path string) (*Data, error) {
	d := newData(path)
	var problems []string
	r := benchfmt.NewReader(in, path)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			problems = append(problems, rec.Error())
		case *benchfmt.Result:
			name := string(rec.Name.Full())
			d.iters(name, rec.Iters)
			for _, v := range rec.Values {
				d.add(name, v.Unit, v.Value)
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(problems) > 0 {
		return nil, &InputError{problems}
	}
	if len(d.Benches) == 0 {
		return nil, &InputError{[]string{fmt.Sprintf("%s: no benchmark results in the file", path)}}
	}
	units := r.Units()
	for _, b := range d.Benches {
		for _, u := range d.Units[b] {
			if _, ok := d.Better[u]; !ok {
				d.Better[u] = units.GetBetter(u)
			}
		}
	}
	return d, nil
}

// loadDir reads every completed run's summary, summarising from its record
// stream (the source of truth) the runs whose summary is missing or stale,
// in parallel.
func (c *Cache) loadDir(dir string, spike stats.SpikeRule) (*Data, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, &InputError{[]string{err.Error()}}
	}
	d := newData(dir)
	rules := map[string]stats.SpikeRule{}
	for _, c := range m.Cases {
		rules[c.Name] = c.SpikeRule()
		if spike != (stats.SpikeRule{}) {
			rules[c.Name] = spike
		}
		for _, v := range c.Variants {
			d.Floors[BenchName(c.Name, v.Name)] = c.Floors
		}
		if c.Alpha > 0 {
			d.Alpha = c.Alpha
		}
	}
	var ok []*Run
	skipped := 0
	for _, r := range m.Runs {
		if r.Status == StatusOK {
			ok = append(ok, r)
		} else {
			skipped++
		}
	}
	if skipped > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s: %d runs did not complete and are left out", dir, skipped))
	}
	if len(ok) == 0 {
		return nil, &InputError{[]string{fmt.Sprintf("%s: no completed runs", dir)}}
	}
	files := make([]*RunFile, len(ok))
	errs := make([]error, len(ok))
	var wg sync.WaitGroup
	sem := c.workers()
	for i, r := range ok {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			files[i], errs[i] = c.summarize(dir, r, rules[r.Case], spike == (stats.SpikeRule{}))
		}()
	}
	wg.Wait()
	var problems []string
	for i, r := range ok {
		if errs[i] != nil {
			problems = append(problems, errs[i].Error())
			continue
		}
		name := BenchName(r.Case, r.Variant)
		s := files[i].Summary
		m.AttachWorkTo(&s, r.Case, r.Variant)
		d.AddRun(name, s)
		d.Sketches[name] = append(d.Sketches[name], files[i].Sketch)
		if mt := files[i].Meta; mt != nil && d.Env[name] == (Env{}) {
			d.Env[name] = EnvOf(mt, m.Worker)
		}
	}
	if len(problems) > 0 {
		return nil, &InputError{problems}
	}
	return d, nil
}

// AddRun adds one run's summary of bench and its value of every metric it
// measured.
func (d *Data) AddRun(bench string, s stats.RunSummary) {
	d.Runs[bench] = append(d.Runs[bench], s)
	d.iters(bench, s.Steps)
	for _, mt := range stats.Metrics {
		// Tidy as benchfmt's reader does, so that a directory and a
		// results.bench file give the same units.
		v, ok := mt.Measured(s)
		if !ok {
			continue // not recorded: the unit is left out, never judged
		}
		v, unit := benchunit.Tidy(v, mt.Unit)
		d.add(bench, unit, v)
		d.Better[unit] = -1
	}
}

// SplitVariants divides one side into two by variant: side says, for a
// variant name, which side it belongs to (0 or 1, -1 for neither) and its
// name there. gcjitter ab runs both environments as variants "a.X" and
// "b.X" of one case and compares them as X.
func (d *Data) SplitVariants(side func(variant string) (int, string)) [2]*Data {
	out := [2]*Data{newData(d.Path), newData(d.Path)}
	for _, b := range d.Benches {
		prefix, variant, ok := strings.Cut(b, "/variant=")
		if !ok {
			continue
		}
		i, name := side(variant)
		if i < 0 {
			continue
		}
		out[i].copyBench(prefix+"/variant="+name, d, b)
	}
	return out
}

// copyBench adds bench b of d to o under the name nb.
func (o *Data) copyBench(nb string, d *Data, b string) {
	for _, u := range d.Units[b] {
		for _, v := range d.Values[b][u] {
			o.add(nb, u, v)
		}
		o.Better[u] = d.Better[u]
	}
	o.MinIters[nb] = d.MinIters[b]
	o.Runs[nb] = d.Runs[b]
	o.Sketches[nb] = d.Sketches[b]
	o.Floors[nb] = d.Floors[b]
	o.Env[nb] = d.Env[b]
	o.Alpha = d.Alpha
}

// AgainstVariant pairs every variant of each case with the case's variant
// ref, for comparing policies inside one results directory: side 0 holds
// ref's runs under each other variant's name, side 1 the variants' own.
// Cases without ref are skipped and named in the notes; an error when no
// case has ref and another variant.
func (d *Data) AgainstVariant(ref string) ([2]*Data, []string, error) {
	out := [2]*Data{newData(d.Path), newData(d.Path)}
	refOf := map[string]string{} // case prefix -> ref's bench
	for _, b := range d.Benches {
		if prefix, variant, ok := strings.Cut(b, "/variant="); ok && variant == ref {
			refOf[prefix] = b
		}
	}
	var notes []string
	skipped := map[string]bool{}
	for _, b := range d.Benches {
		prefix, variant, ok := strings.Cut(b, "/variant=")
		if !ok || variant == ref {
			continue
		}
		rb, found := refOf[prefix]
		if !found {
			if !skipped[prefix] {
				skipped[prefix] = true
				notes = append(notes, fmt.Sprintf("%s has no variant %q: its variants are not compared", CaseOf(b), ref))
			}
			continue
		}
		out[0].copyBench(b, d, rb)
		out[1].copyBench(b, d, b)
		// Policies set their own thresholds: between variants of one
		// run that is the policy, not the environment.
		for _, side := range out {
			e := side.Env[b]
			e.GCThresholds = ""
			side.Env[b] = e
		}
	}
	if len(out[1].Benches) == 0 {
		return out, notes, fmt.Errorf("%s: no case has variant %q and another variant to compare with it (-ref names the reference variant)", d.Path, ref)
	}
	return out, notes, nil
}

// CompareVariants compares every variant of d's cases with the case's
// variant ref (AgainstVariant): the policies of one results directory side
// by side, each with its verdict against the reference.
func CompareVariants(d *Data, ref string, opt CompareOptions) (*Comparison, error) {
	sides, notes, err := d.AgainstVariant(ref)
	if err != nil {
		return nil, err
	}
	c := Compare(sides[0], sides[1], opt)
	c.Notes = append(c.Notes, notes...)
	// Both sides read the same manifest (so the cases' gates apply); the
	// old side is named by what it holds.
	c.Old.Path = fmt.Sprintf("%s, variant %s", d.Path, ref)
	c.Reference = ref
	return c, nil
}

// Merge adds every benchmark of o to d (gcjitter gate joins the baselines
// of several cases into one side, so Holm spans them all).
func (d *Data) Merge(o *Data) {
	for _, b := range o.Benches {
		d.pool(b, o, b)
	}
}

// LoadPair loads the two inputs of a comparison (results directories or
// benchfmt files). A file that cannot be read as either is bad input.
func LoadPair(paths []string, spike stats.SpikeRule) ([2]*Data, error) {
	return new(Cache).LoadPair(paths, spike)
}

// LoadPair is LoadPair through the cache.
// Both sides load at once, sharing the cache's workers, so that no core
// waits for the last run of the first side.
func (c *Cache) LoadPair(paths []string, spike stats.SpikeRule) ([2]*Data, error) {
	var sides [2]*Data
	var errs [2]error
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() { sides[i], errs[i] = c.Load(path, spike) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return [2]*Data{}, err
		}
	}
	return sides, nil
}

// SameInput reports whether two paths name the same file or directory.
func SameInput(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
