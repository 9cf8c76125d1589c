// Package results is the on-disk form of a gcjitter run, read back by
// compare, report and the gate:
//
//	DIR/manifest.json            what ran, where, with what, and how each run ended
//	DIR/results.bench            one benchfmt line per completed run (benchstat reads it)
//	DIR/runs/CASE/VARIANT/run-NN.jsonl    each run's record stream, as it arrived
//	DIR/runs/CASE/VARIANT/run-NN.stderr   each worker's own stderr
//	DIR/runs/CASE/VARIANT/run-NN.rankK.jsonl, .rankK.stderr   the same per rank
//	DIR/runs/CASE/VARIANT/run-NN.global.jsonl   a multi-rank run's global step series
//	DIR/worker/gcjitter-worker-HASH.pyz   the exact worker that ran
//
// The manifest is rewritten atomically after every run, so a results
// directory is readable at any moment, even after gcjitter itself died.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/stats"
)

// ManifestSchema is the version of manifest.json.
const ManifestSchema = 1

// File names inside a results directory.
const (
	ManifestFile = "manifest.json"
	BenchFile    = "results.bench"
)

// Manifest describes one invocation of gcjitter run.
type Manifest struct {
	Schema     int        `json:"schema"`
	Tool       string     `json:"tool"` // gcjitter version
	Command    []string   `json:"command"`
	Started    time.Time  `json:"started"`
	Finished   *time.Time `json:"finished,omitempty"`
	Python     string     `json:"python"`
	PythonFrom string     `json:"python_from"` // which rule chose it
	Host       Host       `json:"host"`
	// Calibration is the host's speed, measured before the first run,
	// between rounds and after the last (runner.Calibrate).
	Calibration *Calibration `json:"calibration,omitempty"`
	HostClass   string       `json:"host_class,omitempty"` // -host-class or $GCJITTER_HOST_CLASS
	Worker      string       `json:"worker"`               // relative path of the worker program
	ShuffleSeed int64        `json:"shuffle_seed"`
	Cases       []Case       `json:"cases"`
	Runs        []*Run       `json:"runs"` // in the order they ran
	// Census are the census runs, one per single-rank variant, made after
	// the timed runs with the first run's seeds (runner.Session.Census):
	// their Summary.Walked is the heap each variant's collections walk.
	// Not in Runs: they are never timed.
	Census      []*Run `json:"census,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// StoppedBy says why the plan stopped before its last run, when the
	// first runs all failed the same way (runner.FailFastRuns).
	StoppedBy string `json:"stopped_by,omitempty"`
}

// Case is a case as it ran, after flag overrides.
type Case struct {
	Name     string          `json:"name"`
	Source   string          `json:"source"`
	Text     string          `json:"yaml"`
	Steps    int             `json:"steps"`
	Warmup   int             `json:"warmup"`
	Runs     int             `json:"runs"`
	Variants []Variant       `json:"variants"`
	Spike    stats.SpikeRule `json:"spike"`
	// SpikeFactor is how results before the noise rule recorded theirs; a
	// manifest that has only it keeps its factor rule when loaded.
	SpikeFactor float64 `json:"spike_factor,omitempty"`
	// Gate: the floors the case sets (others take stats.DefaultFloors) and
	// the family-wise alpha.
	Floors map[string]float64 `json:"floors,omitempty"`
	Alpha  float64            `json:"alpha"`
	// Primary are the metrics the case tests (gate.primary); empty:
	// stats.DefaultPrimary. The others are reported, not tested.
	Primary []string `json:"primary,omitempty"`
}

// RunFiles are a run's record stream and stderr paths, relative to the
// results directory (run index 0-based).
func RunFiles(caseName, variant string, index int) (records, stderr string) {
	base := filepath.Join("runs", cases.PathName(caseName), cases.PathName(variant), fmt.Sprintf("run-%02d", index+1))
	return base + ".jsonl", base + ".stderr"
}

// HostClassEnv names the host class when no -host-class flag does: the
// class recorded with results and the baselines a gate reads.
const HostClassEnv = "GCJITTER_HOST_CLASS"

// SpikeRule is the rule the case's runs were summarised with: the stored
// one, the factor of a manifest written before the noise rule, or the
// default.
func (c Case) SpikeRule() stats.SpikeRule {
	switch {
	case c.Spike != (stats.SpikeRule{}):
		return c.Spike
	case c.SpikeFactor > 1:
		return stats.SpikeRule{Factor: c.SpikeFactor}
	}
	return stats.DefaultSpikeRule
}

// Variant is one variant of a case.
type Variant struct {
	Name   string `json:"name"`
	Policy string `json:"policy"`
}

// Run statuses.
const (
	StatusPending     = "pending"
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusSkipped     = "skipped" // not started: an earlier interruption
)

// Run is one worker process.
type Run struct {
	ID         string     `json:"id"`
	Case       string     `json:"case"`
	Variant    string     `json:"variant"`
	Policy     string     `json:"policy"`
	Index      int        `json:"index"` // within its variant, 0-based
	Order      int        `json:"order"` // position in the interleaved order
	Seed       int64      `json:"seed"`
	HashSeed   uint32     `json:"hash_seed"`
	Args       []string   `json:"args"`
	Records    string     `json:"records"`
	Stderr     string     `json:"stderr"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason,omitempty"`
	ExitCode   int        `json:"exit_code"`
	StderrTail string     `json:"stderr_tail,omitempty"`
	Steps      int        `json:"steps_recorded"`
	Started    *time.Time `json:"started,omitempty"`
	Seconds    float64    `json:"seconds"`
	// OtherCPUs is how many of the host's CPUs, on average while the run
	// ran, processes other than the run's own kept busy (steal included);
	// nil where the host cannot say. A baseline made beside other load is
	// slow in every run alike, which no comparison of its runs can see.
	OtherCPUs *float64          `json:"other_cpus,omitempty"`
	Summary   *stats.RunSummary `json:"summary,omitempty"`
	// Ranks is the number of processes of a multi-rank run (0 or 1: one),
	// and RankSummary what the ranks did to each other.
	Ranks       int                `json:"ranks,omitempty"`
	RankSummary *stats.RankSummary `json:"rank_summary,omitempty"`
	// Global is the multi-rank run's global step series (JSON lines of
	// stats.GlobalStep), relative to the results directory.
	Global string   `json:"global,omitempty"`
	Meta   *RunMeta `json:"meta,omitempty"`
	// Side and Of: the A/B side the run is on and the variant it doubles
	// (cases.Variant), for gcjitter ab's runs.
	Side string `json:"side,omitempty"`
	Of   string `json:"of,omitempty"`
}

// RunMeta is the part of a run's meta record that identifies its
// environment.
type RunMeta struct {
	Python       string `json:"python"`
	Build        string `json:"build"`
	FreeThreaded bool   `json:"free_threaded,omitempty"`
	Torch        string `json:"torch,omitempty"`
	TorchNPU     string `json:"torch_npu,omitempty"`
	CUDA         string `json:"cuda,omitempty"`
	CANN         string `json:"cann,omitempty"`
	Device       string `json:"device"`
	DevName      string `json:"device_name"`
	Threads      int    `json:"threads"`
	// Notes are the worker's remarks, e.g. a policy not applicable here.
	Notes []string `json:"notes,omitempty"`
	// GCThresholds: Env.GCThresholds.
	GCThresholds string `json:"gc_thresholds,omitempty"`
	// Start: bench.Meta.Start, "warm" or "cold".
	Start string `json:"start,omitempty"`
}

// WriteManifest writes m to dir atomically.
func WriteManifest(dir string, m *Manifest) error {
	m.AttachWork()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, ManifestFile), append(data, '\n'), 0o644)
}

// AttachWork gives every run's summary what its GC cost is measured per
// (stats.GCCost): the objects a full collection of its variant walks, from
// the session's census run of the variant. Derived, so set again whenever
// a manifest is read or written.
func (m *Manifest) AttachWork() {
	for _, r := range m.Runs {
		if r.Summary != nil {
			m.AttachWorkTo(r.Summary, r.Case, r.Variant)
		}
	}
}

// AttachWorkTo is AttachWork for one summary of caseName's variant (one
// summarised again from its records).
func (m *Manifest) AttachWorkTo(s *stats.RunSummary, caseName, variant string) {
	s.FullWalk = 0
	for _, c := range m.Census {
		if c.Case == caseName && c.Variant == variant && c.Status == StatusOK && c.Summary != nil && c.Summary.Collections[2] > 0 {
			s.FullWalk = float64(c.Summary.Walked[2]) / float64(c.Summary.Collections[2])
		}
	}
}

// ReadManifest reads dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not a gcjitter manifest: %v", path, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: manifest schema %d, this gcjitter reads %d", path, m.Schema, ManifestSchema)
	}
	m.AttachWork()
	return &m, nil
}

// RankRecords is rank k's record stream, relative to the results
// directory: Records itself for a single-rank run.
func (r *Run) RankRecords(k int) string {
	if r.Ranks <= 1 {
		return r.Records
	}
	return strings.TrimSuffix(r.Records, ".jsonl") + fmt.Sprintf(".rank%d.jsonl", k)
}

// WriteGlobalSeries writes a multi-rank run's global step series next to
// its rank streams, atomically, and records where in r.
func WriteGlobalSeries(dir string, r *Run, series []stats.GlobalStep) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for i := range series {
		if err := enc.Encode(&series[i]); err != nil {
			return err
		}
	}
	rel := strings.TrimSuffix(r.Records, ".jsonl") + ".global.jsonl"
	if err := atomicfile.Write(filepath.Join(dir, rel), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the global step series: %w", err)
	}
	r.Global = rel
	return nil
}

// RankStderr is rank k's stderr file.
func (r *Run) RankStderr(k int) string {
	if r.Ranks <= 1 {
		return r.Stderr
	}
	return strings.TrimSuffix(r.Stderr, ".stderr") + fmt.Sprintf(".rank%d.stderr", k)
}

// Partial says, in words, why the runs of m cover less than was planned:
// "" when every planned run ended (completed or failed). Reports carry it
// so that a gate cut short by Ctrl-C or CI's timeout is read as partial.
func (m *Manifest) Partial() string {
	ended := 0
	for _, r := range m.Runs {
		if r.Status == StatusOK || r.Status == StatusFailed {
			ended++
		}
	}
	if ended == len(m.Runs) && !m.Interrupted && m.StoppedBy == "" {
		return "" // a plan stopped at its last run still lacks what comes after it (the census, the last speed point)
	}
	why := "cut short"
	switch {
	case m.Interrupted:
		why = "interrupted"
	case m.StoppedBy != "":
		why = "stopped because " + m.StoppedBy
	}
	return fmt.Sprintf("partial: %s after %d of %d runs; the verdicts are on the runs that completed", why, ended, len(m.Runs))
}
