// Package gate holds the rules of gcjitter's gate: planning a gate from
// baselines before anything runs (every baseline read and validated, the
// sizes to run, the device kind), and judging what ran (the GC-schedule
// layer exactly, the timing layer statistically, the unknown policy, an
// environment change). The command only wires flags to it.
package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/history"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Options say where the baselines are and what the user fixed by flags.
type Options struct {
	Dir, Class string       // baselines directory and host class
	Host       results.Host // this host, for the device kind
	// Flags that override a baseline's size: a positive Runs or Steps, a
	// Warmup >= 0. Otherwise the gate runs what the baseline measured.
	Runs, Steps, Warmup int
	// KeepSizes leaves the cases' sizes as they are: runs already made
	// (gate -from) have the sizes they have.
	KeepSizes bool
	// Drift, when set, is the session drift of every metric that drifts
	// (stats.DefaultDrift above 0), over the cases' own gate.drift: gate
	// -drift. 0 judges as if the baseline were measured in this session.
	Drift *float64
	// MaxRuns is the most runs per variant adaptive rounds may grow to
	// (-max-runs): the plan must be able to decide at that size.
	MaxRuns int
	// Detect is the change the plan must see in p50 and p99 with
	// stats.DetectPower (gate -detect 20%: 0.2); 0: a doubling.
	Detect float64
	// History, when set, holds each case's baseline from recent nights
	// (gate -baseline history:N) instead of the golden files; their
	// measured night-to-night drift is the session drift.
	History map[string]*history.Baseline
	// AllowBusy judges timings from runs the host disturbed (gate
	// -allow-busy): other load or a moved speed is then only warned of.
	AllowBusy bool
}

// Plan is a gate ready to run: every case with its baseline.
type Plan struct {
	Options
	Cases   []*cases.Case
	Goldens map[string]*golden.Golden
	Paths   map[string]string
	// TimingNote says what ResolveTiming decided for the timing layer and
	// why.
	TimingNote string
	// Speed is this host's calibration: measured before the runs, then
	// the session's own (results.Manifest.Calibration) once they ran.
	Speed *results.Calibration

	timingFlag string // -timing as given, so Judge can settle auto again
	// speedOnly: -timing auto reported timings only because this host's
	// measured speed differs from the baselines' on the same CPU model
	// (not another model, not an unmeasured speed): Policy.ForSpeed.
	speedOnly bool
	// mayGate: -timing auto reported timings only because the speeds could
	// not be told the same or apart (MayGate).
	mayGate bool

	runs *results.Cache   // every judgement's and report's runs: each stream read once
	pool []*golden.Golden // golden.Pool: the noise contamination is judged in
}

// runCache is the plan's cache of run summaries and steps, shared by its
// judgements (adaptive rounds judge again) and their reports, so that a
// gate reads each record stream at most once.
func (p *Plan) runCache() *results.Cache {
	if p.runs == nil {
		p.runs = &results.Cache{KeepSteps: true}
	}
	return p.runs
}

// MissingError lists the cases without a baseline on the host class: bad
// input, with the cases to make baselines for (as given, by index).
type MissingError struct {
	Class   string
	Missing []int // indices into the cases given
	Lines   []string
}

func (e *MissingError) Error() string { return strings.Join(e.Lines, "\n") }
func (e *MissingError) ExitCode() int { return cli.Usage }

// PlanError is a baseline that cannot be gated against as it is (bad
// input, exit 2): unreadable, moved, of another device kind.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string { return e.Msg }
func (e *PlanError) ExitCode() int { return cli.Usage }

// New reads and validates every case's baseline before anything runs and
// sets each case's size to its baseline's unless a flag fixed it.
func New(cs []*cases.Case, opt Options) (*Plan, error) {
	p := &Plan{Options: opt, Cases: cs, Goldens: map[string]*golden.Golden{}, Paths: map[string]string{}}
	missing := &MissingError{Class: opt.Class}
	for i, c := range cs {
		path := golden.Path(opt.Dir, opt.Class, c.Name)
		g, err := golden.Read(path)
		if opt.History != nil {
			b := opt.History[c.Name]
			if b == nil {
				return nil, &PlanError{fmt.Sprintf("no history baseline for case %s on host class %s", c.Name, opt.Class)}
			}
			g, path, err = b.Golden, b.From, nil
		}
		if errors.Is(err, golden.ErrMissing) {
			missing.Missing = append(missing.Missing, i)
			missing.Lines = append(missing.Lines, fmt.Sprintf("no baseline for case %s on host class %s (%s)", c.Name, opt.Class, path))
			continue
		}
		if err != nil {
			return nil, &PlanError{err.Error()}
		}
		if g.Case != c.Name || g.HostClass != opt.Class {
			return nil, &PlanError{fmt.Sprintf("%s holds case %s of host class %s, not %s of %s; it was moved or renamed: update it", path, g.Case, g.HostClass, c.Name, opt.Class)}
		}
		if kind, why := DeviceKind(c, opt.Host); kind != "" && kind != g.Env.Device {
			return nil, &PlanError{fmt.Sprintf("%s was made on %s (%s), but case %s would run on %s here (%s); nothing was run. Compare a host only with baselines of its own device kind: gate against this host's baselines (-host-class), or run on %s with -device %s where there is one",
				path, g.Env.Device, g.Env.DevName, c.Name, kind, why, g.Env.Device, g.Env.Device)}
		}
		p.Goldens[c.Name], p.Paths[c.Name] = g, path
		if opt.KeepSizes {
			continue
		}
		if opt.Steps <= 0 {
			c.Steps = g.Size.Steps
		}
		if opt.Warmup < 0 {
			c.Warmup = g.Size.Warmup
		}
		if opt.Runs <= 0 {
			c.Runs = g.Size.Runs
		}
		if err := g.SizeMismatch(path, c.Steps, c.Warmup, "the planned runs"); err != nil {
			return nil, &PlanError{err.Error() + "; nothing was run"}
		}
	}
	if len(missing.Missing) > 0 {
		last := len(missing.Lines) - 1
		missing.Lines[last] += map[bool]string{true: "; create it on this host with:", false: "; create them on this host with:"}[len(missing.Missing) == 1]
		return nil, missing
	}
	return p, nil
}

// DeviceKind is the device kind a case's workers will run on, known before
// any run, and why; "" when only the runs can tell. An explicit device is
// its kind. auto is cpu where the worker does not import torch or the host
// has no CUDA or NPU device; on a host with one it depends on the
// interpreter's torch build (a CPU-only torch falls back to cpu), which the
// check after the runs settles.
func DeviceKind(c *cases.Case, h results.Host) (kind, why string) {
	d := c.Workload.Device
	if d != "auto" && d != "" {
		kind, _, _ := strings.Cut(d, ":")
		return kind, "device " + d
	}
	if !c.NeedsTorch() {
		return "cpu", "device auto with model none, which runs without torch"
	}
	if len(h.GPUs) > 0 {
		return "", ""
	}
	for _, dev := range []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/davinci0", "/dev/davinci_manager"} {
		if _, err := os.Stat(dev); err == nil {
			return "", ""
		}
	}
	return "cpu", "device auto on a host without a CUDA or NPU device"
}

// Primary are the metrics each case tests (its gate.primary; cases that
// name none are left to stats.DefaultPrimary), for comparisons whose sides
// carry no manifest (baselines, the split sides of an A/B run).
func Primary(cs []*cases.Case) map[string][]string {
	out := map[string][]string{}
	for _, c := range cs {
		if len(c.Gate.Primary) > 0 {
			out[c.Name] = c.Gate.Primary
		}
	}
	return out
}

// Policy is how a judged gate fails.
type Policy struct {
	// Timing: "gate" (a timing regression fails) or "report" (shown, never
	// fails: for noisy shared hosts).
	Timing string
	// UnknownFails makes an unknown verdict fail instead of passing with a
	// warning.
	UnknownFails bool
	// ForSpeed: timings are reported only because the host differs from
	// the baselines' in model or speed (-timing auto), not because the user
	// asked (-timing report on a noisy host): the metrics the host's speed
	// cancels in still gate.
	ForSpeed bool
	// Check also evaluates the cases' expect: assertions.
	Check bool
}

// Outcome is a judged gate.
type Outcome struct {
	Plan       *Plan
	Policy     Policy
	Manifest   *results.Manifest
	Schedules  []*golden.Result
	Comparison *results.Comparison
	// ExpectText is the expectations' output (Policy.Check), ExpectOK
	// whether they all held.
	ExpectText string
	ExpectOK   bool
	Unknowns   int
	// speedUndecided are the speed-free metrics that regressed on a host
	// of another speed, each with its change (settle).
	speedUndecided []string
	// HostBusy says what disturbed the host during the runs when it made
	// the timing layer undecided (results.Comparison.HostBusy).
	HostBusy string
	// Failed: the gate fails (exit 1), for the reasons in Why.
	Failed bool
	Why    []string
}

// Judge checks the completed runs of m (in dir) against the plan's
// baselines: the schedule layer per case, then the timing layer over all.
func (p *Plan) Judge(m *results.Manifest, dir string, pol Policy) (*Outcome, error) {
	// The session measured its host's speed throughout: -timing auto is
	// settled on that, not on the one measurement before the runs.
	if p.timingFlag == TimingAuto && m.Calibration.Known() {
		p.Speed = m.Calibration
		pol.Timing, p.TimingNote = p.ResolveTiming(TimingAuto)
	}
	// At another speed (and no other load, which is said on its own) a
	// speed-free metric's regression is undecided, not a silent pass.
	pol.ForSpeed = p.timingFlag == TimingAuto && pol.Timing == TimingReport && p.speedOnly && !p.busy(m)
	o := &Outcome{Plan: p, Policy: pol, Manifest: m, ExpectOK: true}
	if pol.Check {
		var b bytes.Buffer
		o.ExpectOK = CheckExpectations(&b, p.Cases, m)
		o.ExpectText = b.String()
		if !o.ExpectOK {
			o.fail("an expectation failed")
		}
	}
	old := results.NewData(filepath.Join(p.Dir, p.Class))
	busyCensus := p.busy(m) && !p.AllowBusy
	var censusUndecided []string
	for _, c := range p.Cases {
		g, path := p.Goldens[c.Name], p.Paths[c.Name]
		res, err := golden.Check(g, path, m)
		if err != nil {
			return nil, err
		}
		o.Schedules = append(o.Schedules, res)
		if res.ScheduleFailed() {
			o.fail(fmt.Sprintf("the GC schedule of %s changed in the same environment", c.Name))
		}
		switch {
		case res.CensusFailed() && len(res.EnvChanges) > 0 && busyCensus && censusPriceNearFloor(res):
			// Priced by pauses timed beside other load, which slows a
			// collection more than a step (results.BusyPriceFactor).
			censusUndecided = append(censusUndecided, fmt.Sprintf("undecided: host busy: the heap census of %s grew by what its pauses, timed in disturbed runs, price within %g times the cost floor %s of the step; rerun on a quiet host to judge it", c.Name, results.BusyPriceFactor, strings.TrimPrefix(stats.Pct(stats.CostFloor), "+")))
		case res.CensusFailed() && len(res.EnvChanges) > 0:
			o.fail(fmt.Sprintf("the heap census of %s grew by what costs the step over %s: its collections walk a heavier heap", c.Name, strings.TrimPrefix(stats.Pct(stats.CostFloor), "+")))
		case res.CensusFailed():
			o.fail(fmt.Sprintf("the heap census of %s changed: its collections walk another heap", c.Name))
		}
		old.Merge(g.Data(path))
	}
	newData, err := p.runCache().Load(dir, stats.SpikeRule{})
	if err != nil {
		return nil, fmt.Errorf("reading the new results: %w", err)
	}
	byCost := envChanged(o.Schedules)
	o.Comparison = results.Compare(old, newData, results.CompareOptions{Primary: Primary(p.Cases), Drift: p.SessionDrift, OldFixed: true,
		CountsByCost: func(bench string) bool { return byCost[results.CaseOf(bench)] }})
	notes := append(p.HostCheck(), p.Contamination()...)
	if p.TimingNote != "" {
		notes = append(notes, p.TimingNote)
	}
	o.Comparison.Notes = append(notes, o.Comparison.Notes...)
	if n := countsByCostNote(p.Cases, byCost); n != "" {
		o.Comparison.Notes = append(o.Comparison.Notes, n)
	}
	o.Comparison.Notes = append(o.Comparison.Notes, censusUndecided...)
	o.Unknowns += len(censusUndecided)
	// Runs the host disturbed judge no timing: never regressed (a false
	// alarm teaches people to ignore the gate), never same either; reported
	// timings are worded so too.
	o.HostBusy = UndecideBusy(o.Comparison, m, p.AllowBusy, p.caseNames()...)
	o.settle()
	return o, nil
}

// censusPriceNearFloor: every costly census change of res was priced
// (from the new runs' pauses) within results.BusyPriceFactor of the cost
// floor, so a neighbour's load could have made it of a price under it.
func censusPriceNearFloor(res *golden.Result) bool {
	for _, d := range res.Census {
		if !d.Costly() {
			continue
		}
		if !results.PriceWithinBusyFactor(d.Cost) {
			return false
		}
	}
	return true
}

func (p *Plan) caseNames() []string {
	names := make([]string, len(p.Cases))
	for i, c := range p.Cases {
		names[i] = c.Name
	}
	return names
}

// HostCheck says how this host differs from the ones the baselines were
// made on (golden.Golden.HostDiffers), each difference once, naming the
// baselines it concerns: said before the runs and kept in the reports,
// since a timing verdict across hosts measures the hosts too.
func (p *Plan) HostCheck() []string {
	var differs byCase
	for _, c := range p.Cases {
		for _, d := range p.Goldens[c.Name].HostDiffers(p.Host) {
			differs.add("host differs from the baseline's ({cases}): "+d, c.Name)
		}
	}
	return differs.sentences("")
}

// busy says whether the session m or a baseline of the plan ran beside
// other load (results.Run.Busy, golden update -allow-busy).
func (p *Plan) busy(m *results.Manifest) bool {
	if n, _ := results.BusyOf(m.Runs, m.Host.CPUs); n > 0 {
		return true
	}
	for _, c := range p.Cases {
		if g := p.Goldens[c.Name]; g != nil && g.Provenance.Busy() {
			return true
		}
	}
	return false
}

// SessionDrift is the session drift the gate allows a benchmark's metric:
// the baseline was measured in another session, whose shift more runs
// tonight cannot average away. A history baseline measured it; a golden
// file's is the case's gate.drift or the catalogue's (gate -drift over
// both).
func (p *Plan) SessionDrift(bench, metric string) float64 {
	if p.Drift == nil && p.History != nil {
		if b := p.History[results.CaseOf(bench)]; b != nil {
			return b.Drift[bench][metric]
		}
	}
	if p.Drift != nil {
		if stats.DefaultDrift[metric] > 0 {
			return *p.Drift
		}
		return 0
	}
	for _, c := range p.Cases {
		if c.Name == results.CaseOf(bench) {
			return c.Gate.SessionDrift(metric)
		}
	}
	return stats.DefaultDrift[metric]
}

// settle applies the policy to the timing layer's verdicts.
func (o *Outcome) settle() {
	for _, r := range o.Comparison.Rows {
		if r.Verdict == stats.Unknown {
			o.Unknowns++
		}
	}
	if o.Comparison.Regressed() && o.Policy.Timing != TimingReport {
		o.fail("a timing metric regressed")
	}
	// Memory does not depend on the host's speed or load: a leak fails a
	// gate whose timings are reported only. The GC share and cost
	// (stats.Metric.SpeedFree) cancel a uniformly slower host, but a
	// throttled or shared one slows a cache-resident collection more than
	// a step (the unchanged tree read gc-share +26% at 0.45x on a CI host):
	// at another speed their regression is undecided, not a pass, and
	// -unknown fail fails on it.
	if o.Policy.Timing == TimingReport {
		for _, r := range o.Comparison.Rows {
			m, ok := stats.MetricByName(r.Metric)
			if !ok || r.Verdict != stats.Regressed {
				continue
			}
			switch {
			case m.Memory:
				o.fail(fmt.Sprintf("%s %s regressed (memory is judged whatever -timing says)", r.Bench, r.Metric))
			case m.SpeedFree && o.Policy.ForSpeed:
				o.Unknowns++
				o.speedUndecided = append(o.speedUndecided, fmt.Sprintf("%s %s %s [%s, %s]", r.Bench, r.Metric, stats.Pct(r.Change), stats.Pct(r.ChangeLo), stats.Pct(r.ChangeHi)))
			}
		}
	}
	if o.Unknowns > 0 && o.Policy.UnknownFails {
		o.fail(fmt.Sprintf("%d metrics are unknown (-unknown fail)", o.Unknowns))
	}
}

func (o *Outcome) fail(why string) {
	o.Failed = true
	o.Why = append(o.Why, why)
}

// Warnings are what the user should read even when the gate passes.
func (o *Outcome) Warnings() []string {
	var out []string
	if o.Unknowns > 0 && !o.Policy.UnknownFails {
		out = append(out, unknownWarning(o.Unknowns))
	}
	if len(o.speedUndecided) > 0 {
		out = append(out, fmt.Sprintf("undecided at another speed: %s read worse than the baseline's; a slower collector moves them, and so does a throttled or shared host, which slows a collection more than a step; gate at the baselines' speed (or against baselines made on this host) to decide",
			strings.Join(o.speedUndecided, "; ")))
	}
	// Other load slows a side's runs alike: a regression or an improvement
	// in its timings may be the host's.
	limit := results.BusyLimit(o.Manifest.Host.CPUs)
	if o.HostBusy != "" {
		out = append(out, busyWarning(o.HostBusy))
	} else if busy, most := results.BusyOf(o.Manifest.Runs, o.Manifest.Host.CPUs); busy > 0 {
		out = append(out, fmt.Sprintf("the host was busy during %d of %d runs: other processes kept up to %.2f CPUs busy (over %.2f of %d), so their timings are partly the host's", busy, len(o.Manifest.Runs), most, limit, o.Manifest.Host.CPUs))
	}
	for _, c := range o.Plan.Cases {
		if g := o.Plan.Goldens[c.Name]; g != nil && g.Provenance.Busy() {
			out = append(out, fmt.Sprintf("the baseline of %s was made beside other load (up to %.2f CPUs, golden update -allow-busy): a regression as slow as that load would pass", c.Name, *g.Provenance.OtherCPUs))
		}
	}
	return out
}

// Report is the judged gate as package report renders and writes it:
// where its baselines are, and their tails from their quantile sketches
// (baselines keep no steps).
func (o *Outcome) Report() *report.Gate {
	where := o.Plan.Dir
	if o.Plan.History != nil {
		where = "the history: " + o.Plan.Paths[o.Plan.Cases[0].Name]
	}
	sketches := map[string]*stats.Sketch{}
	for _, c := range o.Plan.Cases {
		for _, v := range o.Plan.Goldens[c.Name].Variants {
			if v.Quantiles != nil {
				sketches[results.BenchName(c.Name, v.Name)] = v.Quantiles
			}
		}
	}
	return &report.Gate{Class: o.Plan.Class, Baselines: where, ExpectText: o.ExpectText, Schedules: o.Schedules,
		TimingReported: o.Policy.Timing == TimingReport, Comparison: o.Comparison, Manifest: o.Manifest,
		Sketches: sketches, LoadSteps: o.Plan.runCache().LoadSteps}
}

// envChanged are the cases whose environment changed from their
// baseline's (another interpreter, torch, thresholds).
func envChanged(schedules []*golden.Result) map[string]bool {
	changed := map[string]bool{}
	for _, s := range schedules {
		if len(s.EnvChanges) > 0 {
			changed[s.Golden.Case] = true
		}
	}
	return changed
}

// countsByCostNote says which cases' collection counts are judged by their
// cost: after an environment change a changed count is the change's
// mechanism (the schedule layer names it), and fails only through what it
// costs the step (stats.CostFloor); the timing rows still gate, so an
// upgrade that makes p99 worse fails.
func countsByCostNote(cs []*cases.Case, byCost map[string]bool) string {
	var names []string
	for _, c := range cs {
		if byCost[c.Name] {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("collection counts of %s are judged by their cost: the environment changed, so a changed count is its mechanism (shown above), and fails only where its extra collections x their pause cost over %s of the step",
		strings.Join(names, ", "), strings.TrimPrefix(stats.Pct(stats.CostFloor), "+"))
}

// CheckExpectations evaluates every case's expect: list on the runs of m
// that completed and prints one line each; false when one failed.
func CheckExpectations(w io.Writer, cs []*cases.Case, m *results.Manifest) bool {
	ok := true
	for _, c := range cs {
		if len(c.Expect) == 0 {
			continue
		}
		runs := map[string][]stats.RunSummary{}
		device := ""
		for _, r := range m.Runs {
			if r.Case != c.Name || r.Summary == nil {
				continue
			}
			runs[r.Variant] = append(runs[r.Variant], *r.Summary)
			if device == "" && r.Meta != nil {
				device = r.Meta.Device
			}
		}
		fmt.Fprintf(w, "\ncheck %s (on %s):\n", c.Name, device)
		for _, o := range c.Check(runs, device) {
			fmt.Fprintf(w, "  %s\n", o.Text)
			ok = ok && o.OK
		}
	}
	return ok
}

// UpdateCommand is the golden update command that makes missing baselines
// the way a gate would have run them: flags are the gate's own that shaped
// the runs (name and value; a boolean's value "true"), args the cases as
// given. It works as printed (shell-quoted).
func UpdateCommand(dir, class string, flags [][2]string, args []string) string {
	cmd := []string{"gcjitter", "golden", "update", "-golden", dir, "-host-class", class}
	for _, f := range flags {
		if f[1] == "true" {
			cmd = append(cmd, "-"+f[0])
		} else {
			cmd = append(cmd, "-"+f[0], f[1])
		}
	}
	cmd = append(cmd, args...)
	for i, a := range cmd {
		cmd[i] = shellQuote(a)
	}
	return strings.Join(cmd, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Kept are the manifest of a results directory and its cases as they
// ran (from the case text the manifest keeps, with the variants that
// ran), those named or all.
func Kept(dir string, names []string) (*results.Manifest, []*cases.Case, error) {
	m, err := results.ReadManifest(dir)
	if err != nil {
		return nil, nil, &PlanError{err.Error()}
	}
	var cs []*cases.Case
	for _, rc := range m.Cases {
		if len(names) > 0 && !slices.Contains(names, rc.Name) {
			continue
		}
		c, err := cases.Parse([]byte(rc.Text), rc.Source)
		if err != nil {
			return nil, nil, &PlanError{fmt.Sprintf("%s: case %s: %v", dir, rc.Name, err)}
		}
		c.Runs, c.Steps, c.Warmup = rc.Runs, rc.Steps, rc.Warmup
		// The variants that ran: a -filter run kept some of the text's, and
		// its expectations on the others are skipped, as when it ran. (An
		// A/B directory names its variants by side: none match, and its
		// cases stay as written.)
		ran := slices.DeleteFunc(slices.Clone(c.Variants), func(v cases.Variant) bool {
			return !slices.ContainsFunc(rc.Variants, func(r results.Variant) bool { return r.Name == v.Name })
		})
		if len(ran) > 0 {
			c.Variants = ran
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, nil, &PlanError{fmt.Sprintf("%s holds none of the cases %s", dir, strings.Join(names, ", "))}
	}
	return m, cs, nil
}

// Contamination names the baselines whose runs disagree beyond the host's
// noise (golden.Contaminated in the class's golden.Pool: the host was disturbed while they
// were made), with the golden update that remakes each: said before the
// runs and kept in the reports, since their timings judge nothing.
func (p *Plan) Contamination() []string {
	var out []string
	for _, c := range p.Cases {
		if bad := p.contamination(c); bad != "" {
			out = append(out, bad)
		}
	}
	return out
}

func (p *Plan) contamination(c *cases.Case) string {
	if p.History != nil {
		return "" // nights, not one session's runs
	}
	if p.pool == nil {
		var planned []*golden.Golden
		for _, pc := range p.Cases {
			planned = append(planned, p.Goldens[pc.Name])
		}
		p.pool = golden.Pool(p.Dir, p.Class, planned...)
	}
	bad := golden.Contaminated(p.pool, c.Name)
	if len(bad) == 0 {
		return ""
	}
	what := make([]string, len(bad))
	for i, b := range bad {
		what[i] = b.String()
	}
	g := p.Goldens[c.Name]
	size := [][2]string{{"runs", fmt.Sprint(g.Size.Runs)}, {"steps", fmt.Sprint(g.Size.Steps)}, {"warmup", fmt.Sprint(g.Size.Warmup)}}
	return fmt.Sprintf("the baseline %s is contaminated: its runs disagree beyond the host's noise (the host was disturbed while it was made): %s; remake it on a quiet host: %s",
		p.Paths[c.Name], strings.Join(what, "; "), UpdateCommand(p.Dir, p.Class, size, []string{c.Name}))
}
