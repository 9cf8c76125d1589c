// Package golden keeps baselines: golden/<host-class>/<case>.json, one small
// text file per case and host class, reviewable in a diff.
//
// A baseline has two layers. The GC schedule of the seeded workload
// (collections and objects collected per generation, per variant) is
// deterministic for a given interpreter and torch, so it is compared
// exactly, with a stable, readable diff. The timings (one summary per run)
// are compared statistically, with the same verdicts as gcjitter compare.
// Each baseline records its provenance and an environment key (interpreter
// and build, torch, torch_npu, CUDA, CANN, device): when the key differs, a
// changed schedule is reported as the environment's effect, not as noise.
package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/internal/fileerr"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Schema is the version of golden files.
const Schema = 1

// Golden is one case's baseline on one host class.
type Golden struct {
	Schema     int        `json:"schema"`
	Case       string     `json:"case"`
	HostClass  string     `json:"host_class"`
	Provenance Provenance `json:"provenance"`
	Env        Env        `json:"env"`
	Size       Size       `json:"size"`
	Variants   []Variant  `json:"variants"`
}

// Provenance says where and how the baseline was made.
type Provenance struct {
	Tool     string `json:"tool"` // gcjitter version (with the suite's commit)
	Date     string `json:"date"`
	Host     string `json:"host"`
	CPUModel string `json:"cpu_model,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
	GPUs     string `json:"gpus,omitempty"`
	// Host facts that explain a baseline's timings (not its schedule): a
	// powersave governor or turbo off moves every figure.
	Kernel   string  `json:"kernel,omitempty"`
	Governor string  `json:"governor,omitempty"`
	Turbo    string  `json:"turbo,omitempty"`
	Isolated string  `json:"isolated_cpus,omitempty"`
	LoadAvg  float64 `json:"load_avg_1m,omitempty"`
	MemKB    int64   `json:"mem_total_kb,omitempty"`
	// OtherCPUs is the most CPUs other processes kept busy during any of
	// the baseline's runs; nil when they did not record it (a gcjitter
	// before it did, or a host that cannot say). Above results.BusyLimit
	// only when written with golden update -allow-busy.
	OtherCPUs *float64 `json:"other_cpus_max,omitempty"`
	Results   string   `json:"results"` // the results directory it came from
	// What a model string hides (results.Host), and the host's measured
	// speed over the session (results.Calibration): the gate judges
	// timings only against a baseline of this host's speed.
	MHz            float64              `json:"cpu_mhz,omitempty"`
	Caches         string               `json:"caches,omitempty"`
	FlagsHash      string               `json:"cpu_flags_hash,omitempty"`
	Microcode      string               `json:"microcode,omitempty"`
	ThreadsPerCore int                  `json:"threads_per_core,omitempty"`
	Calibration    *results.Calibration `json:"calibration,omitempty"`
}

// Env is the environment key (results.Env, the one type every layer
// uses).
type Env = results.Env

// Size is the experiment the baseline measured; a gate runs the same.
type Size struct {
	Steps  int             `json:"steps"`
	Warmup int             `json:"warmup"`
	Runs   int             `json:"runs"`
	Spike  stats.SpikeRule `json:"spike"`
	// Detect is the effect the runs were sized to see (golden update
	// -detect 20%: 0.2), 0 when the size was given; what each metric sees
	// at the size is gate.SizeFor of the runs.
	Detect float64 `json:"detect,omitempty"`
	// SpikeFactor: baselines made before the noise rule (schema 1 files)
	// name only a factor.
	SpikeFactor float64 `json:"spike_factor,omitempty"`
}

// SpikeRule is the rule the baseline's summaries used.
func (s Size) SpikeRule() stats.SpikeRule {
	return results.Case{Spike: s.Spike, SpikeFactor: s.SpikeFactor}.SpikeRule()
}

// Variant is one variant's baseline.
type Variant struct {
	Name   string `json:"name"`
	Policy string `json:"policy"`
	// Schedule is the GC schedule every run of the variant had; nil when
	// the runs disagreed (then only timings are compared).
	Schedule *Schedule `json:"schedule"`
	// Runs are the per-run values of every metric, by metric name.
	Runs []map[string]float64 `json:"runs"`
	// Quantiles sketch the runs' pooled step times, for drawing the
	// baseline's tail beside new runs (not used for verdicts).
	Quantiles *stats.Sketch `json:"quantiles,omitempty"`
	// Census is the heap the variant's collections walk, from its census
	// run; nil when there was none (a multi-rank case, a gcjitter before
	// the census).
	Census *Census `json:"census,omitempty"`
}

// Census is the objects a variant's collections walked over its measured
// steps, per generation (stats.RunSummary.Walked), with the collections
// that walked them: exact, whatever the host's speed.
type Census struct {
	Collections [3]int   `json:"collections"`
	Walked      [3]int64 `json:"walked"`
}

// censusOf is a census run's census.
func censusOf(r stats.RunSummary) Census {
	return Census{Collections: r.Collections, Walked: r.Walked}
}

// Top is the highest generation the census saw collected (-1: none): a
// full collection's walk is the cost that grows with the heap.
func (c Census) Top() int {
	for g := 2; g >= 0; g-- {
		if c.Collections[g] > 0 {
			return g
		}
	}
	return -1
}

// PerCollection is the objects one collection of generation g walked, on
// average.
func (c Census) PerCollection(g int) float64 {
	if g < 0 || c.Collections[g] == 0 {
		return 0
	}
	return float64(c.Walked[g]) / float64(c.Collections[g])
}

// String is the census in the words of a diff.
func (c Census) String() string {
	var parts []string
	for g := range 3 {
		if c.Collections[g] > 0 {
			parts = append(parts, fmt.Sprintf("gen%d %.0f", g, c.PerCollection(g)))
		}
	}
	if len(parts) == 0 {
		return "no collections"
	}
	return "objects walked per collection: " + strings.Join(parts, ", ")
}

// censusFor is the census run of a variant in m, or nil. Counting
// allocates in the callback and can move a gen-0 collection by a few
// allocations (ascend-gpt-periodic-gc's default: 374 gen-0 collections in
// the census, 375 timed, the same full collections), so a census is
// compared only with another census: those are exact among themselves
// (the same figures under other hash seeds).
func censusFor(m *results.Manifest, caseName, variant string) *Census {
	for _, r := range m.Census {
		if r.Case == caseName && r.Variant == variant && r.Status == results.StatusOK && r.Summary != nil {
			c := censusOf(*r.Summary)
			return &c
		}
	}
	return nil
}

// Schedule is a run's exact GC schedule over its measured steps.
type Schedule struct {
	Collections [3]int   `json:"collections"`
	Collected   [3]int64 `json:"collected"`
}

func scheduleOf(r stats.RunSummary) Schedule {
	return Schedule{Collections: r.Collections, Collected: r.Collected}
}

// String is the schedule in the words of a diff.
func (s Schedule) String() string {
	return fmt.Sprintf("collections gen0 %d, gen1 %d, gen2 %d; objects collected gen0 %d, gen1 %d, gen2 %d",
		s.Collections[0], s.Collections[1], s.Collections[2], s.Collected[0], s.Collected[1], s.Collected[2])
}

var classRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// ValidHostClass checks a host class: it names a directory.
func ValidHostClass(c string) error {
	if !classRE.MatchString(c) {
		return fmt.Errorf("host class %q: use lower-case letters, digits, '.', '_' and '-' (it names a directory)", c)
	}
	return nil
}

// Slug turns a device or CPU name into a host-class part: "AMD EPYC 7B13"
// becomes "amd-epyc-7b13".
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Path is where a case's baseline lives.
func Path(dir, hostClass, caseName string) string {
	return filepath.Join(dir, hostClass, caseName+".json")
}

// FromResults builds a case's baseline from a results directory's manifest.
// Run summaries must be there (gcjitter run writes them).
func FromResults(m *results.Manifest, dir, caseName, hostClass string) (*Golden, error) {
	// The name becomes a file name under the golden directory: a
	// hand-edited manifest must not write a baseline anywhere else.
	if !classRE.MatchString(caseName) {
		return nil, fmt.Errorf("%s: case name %q is not a valid case name (lower-case letters, digits, '.', '_', '-'); was the manifest edited by hand?", filepath.Join(dir, results.ManifestFile), caseName)
	}
	ci := slices.IndexFunc(m.Cases, func(c results.Case) bool { return c.Name == caseName })
	if ci < 0 {
		return nil, fmt.Errorf("%s holds no runs of case %s", dir, caseName)
	}
	c := m.Cases[ci]
	g := &Golden{
		Schema: Schema, Case: caseName, HostClass: hostClass,
		Provenance: Provenance{Tool: m.Tool, Date: m.Started.UTC().Format(time.RFC3339), Host: m.Host.Hostname,
			CPUModel: m.Host.CPUModel, CPUs: m.Host.CPUs, GPUs: strings.Join(m.Host.GPUs, "; "),
			Kernel: m.Host.Kernel, Governor: m.Host.Governor, Turbo: m.Host.Turbo, Isolated: m.Host.IsolatedCPU,
			LoadAvg: m.Host.LoadAvg, MemKB: m.Host.MemTotalKB, OtherCPUs: maxOtherCPUs(m, caseName), Results: dir,
			MHz: m.Host.MHz, Caches: m.Host.Caches, FlagsHash: m.Host.FlagsHash, Microcode: m.Host.Microcode,
			ThreadsPerCore: m.Host.ThreadsPerCore, Calibration: m.Calibration},
		Size: Size{Steps: c.Steps, Warmup: c.Warmup, Runs: c.Runs, Spike: c.SpikeRule()},
	}
	steps, err := results.LoadSteps(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the step records of %s: %w", dir, err)
	}
	g.Env = caseEnv(m, c)
	for _, v := range c.Variants {
		gv := Variant{Name: v.Name, Policy: v.Policy}
		if s := steps[results.BenchName(caseName, v.Name)]; s != nil {
			gv.Quantiles = stats.NewSketch(s.PooledSorted())
		}
		var scheds []Schedule
		for _, r := range m.Runs {
			if r.Case != caseName || r.Variant != v.Name {
				continue
			}
			if r.Status != results.StatusOK || r.Summary == nil {
				return nil, fmt.Errorf("run %s did not complete (%s): a baseline needs every run; run again", r.ID, r.Status)
			}
			vals := map[string]float64{}
			for _, mt := range stats.Metrics {
				if v, ok := mt.Measured(*r.Summary); ok {
					vals[mt.Name] = v
				}
			}
			gv.Runs = append(gv.Runs, vals)
			scheds = append(scheds, scheduleOf(*r.Summary))
		}
		if len(scheds) == 0 {
			return nil, fmt.Errorf("%s has no runs of %s/%s", dir, caseName, v.Name)
		}
		if !slices.ContainsFunc(scheds, func(s Schedule) bool { return s != scheds[0] }) {
			s := scheds[0]
			gv.Schedule = &s
		}
		for _, r := range m.Census {
			if r.Case == caseName && r.Variant == v.Name && r.Status != results.StatusOK {
				return nil, fmt.Errorf("census run %s did not complete (%s): a baseline would lose its heap census; run again", r.ID, r.Status)
			}
		}
		gv.Census = censusFor(m, caseName, v.Name)
		g.Variants = append(g.Variants, gv)
	}
	return g, nil
}

// Marshal renders the baseline as indented JSON with a trailing newline:
// one value per line, so a review diff shows exactly what moved.
func (g *Golden) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Write stores the baseline atomically under dir.
func (g *Golden) Write(dir string) (string, error) {
	path := Path(dir, g.HostClass, g.Case)
	data, err := g.Marshal()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, atomicfile.Write(path, data, 0o644)
}

// ErrMissing wraps the error of a baseline that does not exist.
var ErrMissing = errors.New("no baseline")

// Error is a corrupt or hand-broken baseline: file:line: message.
type Error = fileerr.Error

// Read loads and validates a baseline file.
func Read(path string) (*Golden, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrMissing)
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes and validates a baseline; errors name the file and line.
func Parse(data []byte, path string) (*Golden, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var g Golden
	if err := dec.Decode(&g); err != nil {
		return nil, &Error{File: path, Line: errLine(data, err, dec), Msg: "not a valid baseline: " + jsonMsg(err) + "; fix it, or restore it from version control, or recreate it with gcjitter golden update"}
	}
	if dec.More() {
		return nil, &Error{File: path, Line: lineAt(data, int(dec.InputOffset())), Msg: "unexpected data after the baseline"}
	}
	bad := func(key string, format string, args ...any) error {
		return &Error{File: path, Line: lineOfKey(data, key), Msg: fmt.Sprintf(format, args...) + "; recreate it with gcjitter golden update"}
	}
	switch {
	case g.Schema != Schema:
		return nil, bad(`"schema"`, "baseline schema %d, this gcjitter reads %d", g.Schema, Schema)
	case g.Case == "":
		return nil, bad(`"case"`, "no case name")
	case ValidHostClass(g.HostClass) != nil:
		return nil, bad(`"host_class"`, "%v", ValidHostClass(g.HostClass))
	case g.Env.Device == "":
		return nil, bad(`"env"`, "no device in the environment")
	case g.Size.Steps < 1 || g.Size.Runs < 1 || g.Size.Warmup < 0:
		return nil, bad(`"size"`, "size %+v is not a possible experiment", g.Size)
	case len(g.Variants) == 0:
		return nil, bad(`"variants"`, "no variants")
	}
	for _, v := range g.Variants {
		if v.Name == "" || len(v.Runs) == 0 {
			return nil, bad(`"name": "`+v.Name+`"`, "variant %q has no name or no runs", v.Name)
		}
		if s := v.Schedule; s != nil {
			for gen := range 3 {
				if s.Collections[gen] < 0 || s.Collected[gen] < 0 {
					return nil, bad(`"name": "`+v.Name+`"`, "variant %s: negative count in its schedule", v.Name)
				}
			}
		}
	}
	return &g, nil
}

// errLine finds the line of a decoding error: the offset encoding/json
// reports, the unknown key's own line, or the end of a truncated file.
func errLine(data []byte, err error, dec *json.Decoder) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineAt(data, int(se.Offset))
	case errors.As(err, &te):
		return lineAt(data, int(te.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return lineAt(data, len(data))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if l := lineOfKey(data, field+":"); l > 0 {
			return l
		}
	}
	return lineAt(data, int(dec.InputOffset()))
}

func jsonMsg(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s should be %s, not %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// lineAt is the 1-based line of a byte offset.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// lineOfKey is the line where text first occurs (0 when it does not).
func lineOfKey(data []byte, text string) int {
	if i := bytes.Index(data, []byte(text)); i >= 0 {
		return lineAt(data, i)
	}
	return 0
}

// Data turns the baseline's runs into one side of a comparison, with the
// names and units gcjitter compare uses.
func (g *Golden) Data(path string) *results.Data {
	d := results.NewData(path)
	for _, v := range g.Variants {
		name := results.BenchName(g.Case, v.Name)
		for _, run := range v.Runs {
			d.AddIters(name, g.Size.Steps)
			for _, mt := range stats.Metrics {
				if x, ok := run[mt.Name]; ok {
					d.AddValue(name, mt.Unit, x)
				}
			}
		}
	}
	return d
}

// caseEnv is the environment of a case's runs in m: the first recorded in
// the case's variant order, not in the order the runs ran (shuffled). A
// variant's policy may set thresholds of its own (Env.GCThresholds
// records them after the policy was applied), so a key taken from
// whichever run came first would make an unchanged environment read as
// changed in one session of three, and a changed GC schedule pass as the
// environment's. The baseline and the gate take it alike.
func caseEnv(m *results.Manifest, c results.Case) results.Env {
	names := []string{}
	for _, v := range c.Variants {
		names = append(names, v.Name)
	}
	for _, name := range append(names, "") { // "": any variant, for a manifest that lists none
		for _, r := range m.Runs {
			if r.Case == c.Name && (r.Variant == name || name == "") && r.Meta != nil {
				return r.Meta.Env(m.Worker)
			}
		}
	}
	return results.Env{}
}

// HostClass picks the host class: the flag, then $GCJITTER_HOST_CLASS,
// then one derived from the device: cuda-<gpu>, npu-<chip>, or cpu-<model>.
func HostClass(flag string, h results.Host) (string, error) {
	for _, c := range []string{flag, os.Getenv(results.HostClassEnv)} {
		if c != "" {
			return c, ValidHostClass(c)
		}
	}
	for _, g := range h.GPUs {
		if name, ok := strings.CutPrefix(g, "npu-smi: "); ok {
			return "npu-" + firstSlug(npuChip(name), "ascend"), nil
		}
	}
	if len(h.GPUs) > 0 {
		name, _, _ := strings.Cut(h.GPUs[0], ",")
		return "cuda-" + firstSlug(name, "gpu"), nil
	}
	return "cpu-" + firstSlug(h.CPUModel, "unknown"), nil
}

func firstSlug(s, fallback string) string {
	if s := Slug(s); s != "" {
		return s
	}
	return fallback
}

// npuChip finds a chip name such as 910B in npu-smi's table.
func npuChip(info string) string {
	if m := regexp.MustCompile(`\b(910[A-Z0-9]*|310[A-Z0-9]*)\b`).FindString(info); m != "" {
		return m
	}
	return ""
}
