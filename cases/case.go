// Package cases defines what gcjitter measures: case files, the built-in
// suite embedded in the binary, and the expansion of a case into runs.
//
// A case is one workload (model, sizes, device), its garbage, the size of
// the experiment (steps, warm-up, runs per variant) and a matrix of
// variants, each a GC policy, to compare on it. A case file is YAML and
// strict: an unknown key, a wrong type or an out-of-range value is an
// [*Error] naming the file and line, reported before anything runs.
//
//	name: smoke
//	description: |
//	  What the case reproduces and what to conclude from each variant.
//	suites: [quick]
//	workload: {model: mlp, hidden: 128, device: auto}
//	garbage: {pattern: ring, cycles: 100, objects: 4, long_lived: 50000, retain: 4}
//	steps: 100
//	warmup: 10
//	runs: 3
//	variants:
//	  - policy: default
//	  - policy: disabled
//	  - {name: megatron, policy: "manual:50"}
//
// See docs/cases.md for every key.
package cases

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Case is one validated case file.
type Case struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Suites      []string `yaml:"suites"`
	Workload    Workload `yaml:"workload"`
	Garbage     Garbage  `yaml:"garbage"`
	Steps       int      `yaml:"steps"`
	Warmup      int      `yaml:"warmup"`
	Runs        int      `yaml:"runs"`
	Ranks       int      `yaml:"ranks"`
	RankSeed    string   `yaml:"rank_seed"` // per-rank (ranks' garbage differs) or shared
	// Launcher starts the ranks: local (gcjitter starts each rank itself)
	// or torchrun (one torchrun process starts them; the ranks write their
	// own streams, which gcjitter follows). LauncherCommand replaces
	// "{python} -m torch.distributed.run" (a site wrapper, another torchrun).
	Launcher        string            `yaml:"launcher"`
	LauncherCommand []string          `yaml:"launcher_command"`
	Seed            int64             `yaml:"seed"`
	Variants        []Variant         `yaml:"variants"`
	Python          string            `yaml:"python"`
	Env             map[string]string `yaml:"env"`
	CPUs            string            `yaml:"cpus"`
	Timeouts        Timeouts          `yaml:"timeouts"`
	Gate            Gate              `yaml:"gate"`
	Expect          []Expect          `yaml:"expect"`
	Reduced         *Reduced          `yaml:"reduced"`

	// Source is where the case came from: a path, or builtin:NAME.
	Source string `yaml:"-"`
	// Text is the file as written, kept for the results' provenance.
	Text []byte `yaml:"-"`
}

// Workload is the model, its sizes and where it runs. Zero sizes take the
// worker's defaults.
type Workload struct {
	Model   string `yaml:"model"`
	Device  string `yaml:"device"`
	Batch   int    `yaml:"batch"`
	Hidden  int    `yaml:"hidden"`
	Layers  int    `yaml:"layers"`
	Heads   int    `yaml:"heads"`
	Seq     int    `yaml:"seq"`
	Vocab   int    `yaml:"vocab"`
	Image   int    `yaml:"image"`
	Work    int    `yaml:"work"`
	Threads int    `yaml:"threads"`
	// ComputeScale multiplies the compute per step (the batch, or work for
	// model none) to make the host look slower or faster: signatures must
	// not move with it. 0 means 1.
	ComputeScale float64 `yaml:"compute_scale"`
	// DeviceWaitMS is a GIL-releasing wait per step, standing for the
	// accelerator's share of the step, so a GC pause is a few percent of
	// it as on an accelerator host. 0: none.
	DeviceWaitMS float64 `yaml:"device_wait_ms"`
	// EmulatedDevice is an asynchronous device the host runs ahead of: a
	// separate process with a bounded launch queue, so a GC pause is hidden
	// while queued work covers it (docs/device.md). Nil: none.
	EmulatedDevice *bench.EmulatedDevice `yaml:"emulated_device"`
}

// Garbage is what the workload leaves for the collector each step.
type Garbage struct {
	Pattern   string `yaml:"pattern"`
	Cycles    int    `yaml:"cycles"`
	Objects   int    `yaml:"objects"`
	LongLived int    `yaml:"long_lived"`
	// LongLivedRefs makes each long-lived object a list of this many
	// references: its full collections pause longer per object (fitted
	// cases match a real heap's pause with it).
	LongLivedRefs int `yaml:"long_lived_refs"`
	Retain        int `yaml:"retain"`
	// Every makes the garbage on one step in this many (0 or 1: every
	// step): fitted cases of jobs that rarely collect need less than one
	// cycle per step.
	Every int `yaml:"every"`
	// LeakKiBPerStep keeps this many KiB alive for good after every step,
	// outside the timed region: a planted leak, which memory growth must
	// call a regression.
	LeakKiBPerStep int `yaml:"leak_kib_per_step"`
	// Jitter varies the cycles of each step by up to this fraction, from
	// the seed: with per-rank seeds, ranks then collect on different steps.
	Jitter float64 `yaml:"jitter"`
}

// Variant is one column of the matrix: a GC policy, and environment it adds.
type Variant struct {
	Name   string            `yaml:"name"`
	Policy string            `yaml:"policy"`
	Env    map[string]string `yaml:"env"`
	// Python overrides the session's interpreter for this variant; gcjitter
	// ab sets it to run two environments side by side.
	Python string `yaml:"-"`
	// Side is the A/B side ("a", "b") a variant of gcjitter ab runs, and
	// Of the case's variant it doubles: benchfmt names it
	// variant=<Of>/side=<Side>, so benchstat -col /side splits the sides.
	Side, Of string `yaml:"-"`
}

// The variants of runs no case file designed, which gcjitter names itself:
// a job traced without -policy (it ran with the GC settings it chose, the
// interpreter's default unless the script changes them; traced with
// -policy P, its variant is P), and a profiler trace imported.
const (
	TraceVariant  = "traced"
	ImportVariant = "imported"
)

// Observed reports whether variant is the job itself as it ran (traced or
// imported), not a variant a case made.
func Observed(variant string) bool { return variant == TraceVariant || variant == ImportVariant }

// Timeouts bound each run: until its first record, between two records, and
// in all.
type Timeouts struct {
	Startup Duration `yaml:"startup"`
	Silence Duration `yaml:"silence"`
	Total   Duration `yaml:"total"`
}

// Defaults for timeouts. Start-up covers importing torch and building the
// model and the long-lived heap.
const (
	DefaultStartup = 3 * time.Minute
	DefaultSilence = 2 * time.Minute
	DefaultTotal   = time.Hour
)

// Gate holds the thresholds the comparison uses: the smallest change of
// each metric worth calling a regression (the floor), the significance
// level, and what counts as a spike.
type Gate struct {
	Floors map[string]Fraction `yaml:"floors"`
	Alpha  float64             `yaml:"alpha"`
	// Primary are the metrics the comparison tests (the family the
	// false-alarm rate is spent on); empty: stats.DefaultPrimary. The
	// others are reported with their change, not tested.
	Primary []string `yaml:"primary"`
	// Drift sets the session drift (stats.Options.Drift) of metrics, by
	// name, for a gate against a baseline from another session: how much
	// this host's session means move. Others take stats.DefaultDrift.
	Drift map[string]Fraction `yaml:"drift"`
	// What counts as a spike (stats.SpikeRule): an excess over the run's
	// typical step of more than SpikeSigmas robust SDs (SpikeGCSigmas when
	// its collections explain it) and SpikeFloor of the step; SpikeFactor,
	// when set, replaces that with a fixed multiple of the run's median.
	SpikeSigmas   float64 `yaml:"spike_sigmas"`
	SpikeGCSigmas float64 `yaml:"spike_gc_sigmas"`
	SpikeFloor    float64 `yaml:"spike_floor"`
	SpikeFactor   float64 `yaml:"spike_factor"`
}

// SpikeRule is the gate's spike rule.
func (g Gate) SpikeRule() stats.SpikeRule {
	if g.SpikeFactor > 0 {
		return stats.SpikeRule{Factor: g.SpikeFactor}
	}
	return stats.SpikeRule{Sigmas: g.SpikeSigmas, GCSigmas: g.SpikeGCSigmas, Floor: g.SpikeFloor}
}

// GateMetrics are the metric names a gate may set a floor for.
var GateMetrics = stats.MetricNames()

// Defaults of the gate (stats owns the numbers; docs/cases.md lists them).
const (
	DefaultAlpha = stats.DefaultAlpha
)

// Floor returns the floor for metric: the case's, or the default.
func (g Gate) Floor(metric string) Fraction {
	if f, ok := g.Floors[metric]; ok {
		return f
	}
	return Fraction(stats.DefaultFloors[metric])
}

// SessionDrift returns the session drift for metric: the case's, or the
// default.
func (g Gate) SessionDrift(metric string) float64 {
	if f, ok := g.Drift[metric]; ok {
		return float64(f)
	}
	return stats.DefaultDrift[metric]
}

var (
	caseNameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	variantNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:,+=-]*$`)
	envNameRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// managedEnv are variables the runner sets itself; a case may not override
// them, or runs would stop being comparable or reproducible.
var managedEnv = []string{"PYTHONHASHSEED", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}

// ApplyReduced shrinks the case to the size it declares for CI, if any.
func (c *Case) ApplyReduced() {
	if r := c.Reduced; r != nil {
		if r.Runs > 0 {
			c.Runs = r.Runs
		}
		if r.Steps > 0 {
			c.Steps = r.Steps
		}
		if r.Warmup > 0 {
			c.Warmup = r.Warmup
		}
	}
}

// NeedsTorch says whether the case's workers import torch: every model but
// none does, so does an explicit accelerator, and so do several ranks
// (they join a torch.distributed group). It is the one answer the runner,
// the worker command and the gate use to pick an interpreter.
func (c *Case) NeedsTorch() bool {
	return bench.NeedsTorch(c.Workload.Model, c.Workload.Device, c.Ranks)
}

// WorkerConfig is the worker configuration of one variant.
func (c *Case) WorkerConfig(v Variant) bench.Config {
	cfg := bench.DefaultConfig()
	w, g := c.Workload, c.Garbage
	cfg.Model, cfg.Device, cfg.Policy = w.Model, w.Device, v.Policy
	cfg.Steps, cfg.Warmup, cfg.Seed = c.Steps, c.Warmup, c.Seed
	setIf := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	setIf(&cfg.Batch, w.Batch)
	setIf(&cfg.Hidden, w.Hidden)
	setIf(&cfg.Layers, w.Layers)
	setIf(&cfg.Heads, w.Heads)
	setIf(&cfg.Seq, w.Seq)
	setIf(&cfg.Vocab, w.Vocab)
	setIf(&cfg.Image, w.Image)
	setIf(&cfg.Work, w.Work)
	cfg.Threads = w.Threads
	cfg.ComputeScale, cfg.DeviceWaitMS = w.ComputeScale, w.DeviceWaitMS
	if w.EmulatedDevice != nil {
		cfg.Emulated = *w.EmulatedDevice
	}
	cfg.Garbage = g.Pattern
	setIf(&cfg.Cycles, g.Cycles)
	setIf(&cfg.Objects, g.Objects)
	cfg.LongLived, cfg.Retain, cfg.LongLivedRefs, cfg.GarbageEvery = g.LongLived, g.Retain, g.LongLivedRefs, g.Every
	cfg.LeakKiBPerStep = g.LeakKiBPerStep
	cfg.CPUs = c.CPUs
	cfg.GarbageJitter, cfg.RankSeed = g.Jitter, c.RankSeed
	return cfg
}

// newCase returns a case holding every default, for the file to override:
// an explicit out-of-range value (runs: 0) is then an error, not a default.
func newCase(source string, text []byte) *Case {
	return &Case{
		Source: source, Text: text,
		Workload: Workload{Model: "mlp", Device: "auto"},
		Garbage:  Garbage{Pattern: "none"},
		Steps:    100, Warmup: 10, Runs: 5, Ranks: 1, Seed: 1,
		Timeouts: Timeouts{Duration(DefaultStartup), Duration(DefaultSilence), Duration(DefaultTotal)},
		Gate: Gate{Alpha: DefaultAlpha, SpikeSigmas: stats.DefaultSpikeRule.Sigmas,
			SpikeGCSigmas: stats.DefaultSpikeRule.GCSigmas, SpikeFloor: stats.DefaultSpikeRule.Floor},
	}
}

// nameVariants names each unnamed variant after its policy.
func (c *Case) nameVariants() {
	for i := range c.Variants {
		if c.Variants[i].Name == "" {
			c.Variants[i].Name = c.Variants[i].Policy
		}
	}
}

// validate checks ranges and cross-field rules; line finds a key's line.
func (c *Case) validate(at func(path ...string) int) []*Error {
	var errs []*Error
	bad := func(line int, format string, args ...any) {
		errs = append(errs, &Error{File: c.Source, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	check := func(err error, path ...string) {
		if err != nil {
			bad(at(path...), "%s: %v", strings.Join(path, "."), err)
		}
	}
	minInt := func(v, lo int, path ...string) {
		if v < lo {
			bad(at(path...), "%s: must be >= %d, got %d", strings.Join(path, "."), lo, v)
		}
	}

	if c.Name == "" {
		bad(1, "name: missing (every case needs a name)")
	} else if !caseNameRE.MatchString(c.Name) {
		bad(at("name"), "name: %q is not a valid case name (lower-case letters, digits, '.', '_', '-'; it names files)", c.Name)
	}
	check(bench.ValidateModel(c.Workload.Model), "workload", "model")
	check(bench.ValidateDevice(c.Workload.Device), "workload", "device")
	check(bench.ValidateGarbage(c.Garbage.Pattern), "garbage", "pattern")
	for _, f := range []struct {
		v    int
		lo   int
		name string
	}{{c.Workload.Batch, 0, "batch"}, {c.Workload.Hidden, 0, "hidden"}, {c.Workload.Layers, 0, "layers"},
		{c.Workload.Heads, 0, "heads"}, {c.Workload.Seq, 0, "seq"}, {c.Workload.Vocab, 0, "vocab"},
		{c.Workload.Image, 0, "image"}, {c.Workload.Work, 0, "work"}, {c.Workload.Threads, 0, "threads"}} {
		minInt(f.v, f.lo, "workload", f.name)
	}
	if c.Workload.Image != 0 && c.Workload.Image < 8 {
		bad(at("workload", "image"), "workload.image: must be >= 8, got %d", c.Workload.Image)
	}
	check(bench.ValidateComputeScale(c.Workload.ComputeScale), "workload", "compute_scale")
	check(bench.ValidateDeviceWait(c.Workload.DeviceWaitMS), "workload", "device_wait_ms")
	if e := c.Workload.EmulatedDevice; e != nil {
		if key, err := e.Validate(); err != nil {
			check(err, "workload", "emulated_device", key)
		}
		if c.Workload.DeviceWaitMS != 0 {
			check(fmt.Errorf("device_wait_ms and emulated_device both stand for the device's time: use one"), "workload", "device_wait_ms")
		}
		if d := c.Workload.Device; d != "" && d != "auto" && d != "cpu" {
			check(fmt.Errorf("an emulated device stands in for a device this host lacks; on %s the real device's events are measured", d), "workload", "device")
		}
	}
	minInt(c.Garbage.Cycles, 0, "garbage", "cycles")
	minInt(c.Garbage.Objects, 0, "garbage", "objects")
	minInt(c.Garbage.LongLived, 0, "garbage", "long_lived")
	minInt(c.Garbage.LongLivedRefs, 0, "garbage", "long_lived_refs")
	minInt(c.Garbage.Retain, 0, "garbage", "retain")
	minInt(c.Garbage.Every, 0, "garbage", "every")
	minInt(c.Garbage.LeakKiBPerStep, 0, "garbage", "leak_kib_per_step")
	minInt(c.Steps, 1, "steps")
	minInt(c.Warmup, 0, "warmup")
	minInt(c.Runs, 1, "runs")
	if c.Ranks < 1 || c.Ranks > 64 {
		bad(at("ranks"), "ranks: must be in 1..64 (processes on this host), got %d", c.Ranks)
	}
	switch c.Launcher {
	case "", "local":
		if len(c.LauncherCommand) > 0 {
			bad(at("launcher_command"), "launcher_command: only with launcher: torchrun")
		}
	case "torchrun":
		if c.Ranks < 2 {
			bad(at("launcher"), "launcher: torchrun starts several ranks; set ranks: 2 or more")
		}
	default:
		bad(at("launcher"), "launcher: want local or torchrun, got %q", c.Launcher)
	}
	if c.RankSeed != "" && c.RankSeed != "per-rank" && c.RankSeed != "shared" {
		bad(at("rank_seed"), "rank_seed: want per-rank or shared, got %q", c.RankSeed)
	}
	if c.Garbage.Jitter < 0 || c.Garbage.Jitter > 1 {
		bad(at("garbage", "jitter"), "garbage.jitter: must be in 0..1, got %v", c.Garbage.Jitter)
	}
	if c.Seed < 0 {
		bad(at("seed"), "seed: must be >= 0, got %d", c.Seed)
	}
	if len(c.Variants) == 0 {
		bad(at("variants"), "variants: a case needs at least one variant (a GC policy to run)")
	}
	names, pathNames := map[string]int{}, map[string]int{}
	for i, v := range c.Variants {
		idx := fmt.Sprint(i)
		if v.Policy == "" {
			bad(at("variants", idx), "variants[%d]: policy missing", i)
			continue
		}
		if _, err := bench.ParsePolicy(v.Policy); err != nil {
			bad(at("variants", idx, "policy"), "variants[%d].policy: %v", i, err)
		}
		if !variantNameRE.MatchString(v.Name) || strings.Contains(v.Name, "..") {
			bad(at("variants", idx, "name"), "variants[%d].name: %q is not a valid variant name (letters, digits and . _ : , + = -; it names files)", i, v.Name)
		}
		if j, dup := names[v.Name]; dup {
			bad(at("variants", idx), "variants[%d]: name %q already used by variants[%d]; give one of them its own name: key", i, v.Name, j)
		}
		names[v.Name] = i
		if j, dup := pathNames[PathName(v.Name)]; dup && c.Variants[j].Name != v.Name {
			bad(at("variants", idx), "variants[%d]: name %q and variants[%d]'s %q would share the directory %s; give one of them another name: key", i, v.Name, j, c.Variants[j].Name, PathName(v.Name))
		}
		pathNames[PathName(v.Name)] = i
		errs = append(errs, c.validateEnv(v.Env, fmt.Sprintf("variants[%d].env", i), at, "variants", idx, "env")...)
	}
	errs = append(errs, c.validateEnv(c.Env, "env", at, "env")...)
	if c.CPUs != "" {
		if _, err := bench.ParseCPUList(c.CPUs); err != nil {
			bad(at("cpus"), "cpus: %v", err)
		}
	}
	for _, t := range []struct {
		d    Duration
		name string
	}{{c.Timeouts.Startup, "startup"}, {c.Timeouts.Silence, "silence"}, {c.Timeouts.Total, "total"}} {
		if t.d <= 0 {
			bad(at("timeouts", t.name), "timeouts.%s: must be positive, got %v", t.name, time.Duration(t.d))
		}
	}
	for _, key := range []string{"floors", "drift"} {
		values := c.Gate.Floors
		if key == "drift" {
			values = c.Gate.Drift
		}
		for _, m := range slices.Sorted(maps.Keys(values)) {
			if !contains(GateMetrics, m) {
				bad(at("gate", key, m), "gate.%s: unknown metric %q (want one of %s)", key, m, strings.Join(GateMetrics, ", "))
			} else if f := values[m]; f < 0 || f > 10 {
				bad(at("gate", key, m), "gate.%s.%s: must be between 0%% and 1000%%, got %v", key, m, f)
			}
		}
	}
	if c.Gate.Primary != nil {
		for i, m := range c.Gate.Primary {
			if !contains(GateMetrics, m) {
				bad(at("gate", "primary"), "gate.primary: unknown metric %q (want some of %s)", m, strings.Join(GateMetrics, ", "))
			} else if contains(c.Gate.Primary[:i], m) {
				bad(at("gate", "primary"), "gate.primary: %q named twice", m)
			}
		}
		if len(c.Gate.Primary) == 0 {
			bad(at("gate", "primary"), "gate.primary: names no metric (a gate that tests nothing cannot fail); leave it out for the default, %s", strings.Join(stats.DefaultPrimary, ", "))
		}
	}
	if c.Gate.Alpha <= 0 || c.Gate.Alpha >= 0.5 {
		bad(at("gate", "alpha"), "gate.alpha: must be in (0, 0.5), got %v", c.Gate.Alpha)
	}
	if f := c.Gate.SpikeFactor; f != 0 && f <= 1 {
		bad(at("gate", "spike_factor"), "gate.spike_factor: must be > 1 (or left out for the noise rule), got %v", f)
	}
	if s := c.Gate.SpikeSigmas; s <= 0 {
		bad(at("gate", "spike_sigmas"), "gate.spike_sigmas: must be > 0, got %v", s)
	}
	if s := c.Gate.SpikeGCSigmas; s <= 0 || s > c.Gate.SpikeSigmas {
		bad(at("gate", "spike_gc_sigmas"), "gate.spike_gc_sigmas: must be in (0, spike_sigmas], got %v", s)
	}
	if f := c.Gate.SpikeFloor; f < 0 || f >= 1 {
		bad(at("gate", "spike_floor"), "gate.spike_floor: must be in [0, 1), got %v", f)
	}
	errs = append(errs, c.validateExpect(at)...)
	if r := c.Reduced; r != nil {
		if r.Runs < 0 || r.Steps < 0 || r.Warmup < 0 {
			bad(at("reduced"), "reduced: runs, steps and warmup must be >= 0")
		}
	}
	for i, s := range c.Suites {
		if !caseNameRE.MatchString(s) {
			bad(at("suites", fmt.Sprint(i)), "suites[%d]: %q is not a valid suite name", i, s)
		}
	}
	return errs
}

func (c *Case) validateEnv(env map[string]string, label string, at func(path ...string) int, path ...string) []*Error {
	var errs []*Error
	for _, k := range slices.Sorted(maps.Keys(env)) {
		p := append(append([]string{}, path...), k)
		switch {
		case !envNameRE.MatchString(k):
			errs = append(errs, &Error{File: c.Source, Line: at(p...), Msg: fmt.Sprintf("%s: %q is not a valid environment variable name", label, k)})
		case contains(managedEnv, k):
			errs = append(errs, &Error{File: c.Source, Line: at(p...), Msg: fmt.Sprintf("%s: %s is set by the runner for every run and cannot be overridden", label, k)})
		case strings.ContainsRune(env[k], 0):
			errs = append(errs, &Error{File: c.Source, Line: at(p...), Msg: fmt.Sprintf("%s.%s: value contains a NUL byte", label, k)})
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Story is the description's first sentence on one line: what the case
// reproduces, for listings.
func (c *Case) Story() string {
	s := strings.Join(strings.Fields(c.Description), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
