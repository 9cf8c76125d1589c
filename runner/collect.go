package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Collected is a multi-rank run started by an outside launcher (torchrun,
// a cluster's) and added to a results directory.
type Collected struct {
	Run     *results.Run
	Summary stats.RunSummary
	Ranks   stats.RankSummary
}

// Collect adds one run, given as its ranks' record streams, to the results
// directory out (made when it does not exist), as the runner would have
// written it: the streams copied in, the run summarised, the manifest and
// the benchfmt file rewritten. variant "" is the workers' policy. Bad
// streams are bad input (*results.InputError).
func Collect(out, caseName, variant string, streamPaths []string, rule stats.SpikeRule, tool string, command []string) (*Collected, error) {
	bad := func(format string, args ...any) error {
		return &results.InputError{Msgs: []string{fmt.Sprintf(format, args...)}}
	}
	streams := make([]*bench.Stream, 0, len(streamPaths))
	paths := map[*bench.Stream]string{}
	for _, p := range streamPaths {
		f, err := os.Open(p)
		if err != nil {
			return nil, bad("%v", err)
		}
		s, err := bench.ReadStream(f, p)
		f.Close()
		switch {
		case err != nil:
			return nil, bad("%s: %v", p, err)
		case len(s.Problems) > 0:
			return nil, bad("%v", s.Problems[0])
		case s.Meta == nil || !s.Complete():
			return nil, bad("%s: not a complete record stream (no meta or no end record): the rank did not finish", p)
		}
		streams = append(streams, s)
		paths[s] = p
	}
	slices.SortFunc(streams, func(a, b *bench.Stream) int { return a.Meta.Rank - b.Meta.Rank })
	for k, s := range streams {
		if s.Meta.Rank != k || s.Meta.WorldSize != len(streams) {
			return nil, bad("got ranks %v of world size %d: give one stream per rank, all of one run", ranksOf(streams), s.Meta.WorldSize)
		}
	}
	meta := streams[0].Meta
	if variant == "" {
		variant = meta.Policy
	}
	m, err := results.ReadManifest(out)
	if errors.Is(err, os.ErrNotExist) {
		m = &results.Manifest{Schema: results.ManifestSchema, Tool: tool, Command: command, Started: time.Now().UTC(),
			Python: meta.Python.Executable, PythonFrom: "external launcher"}
		err = nil
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	ci := slices.IndexFunc(m.Cases, func(c results.Case) bool { return c.Name == caseName })
	if ci < 0 {
		m.Cases = append(m.Cases, results.Case{Name: caseName, Source: "collected", Steps: meta.Steps, Warmup: meta.Warmup, Spike: rule.OrDefault()})
		ci = len(m.Cases) - 1
	}
	c := &m.Cases[ci]
	if !slices.ContainsFunc(c.Variants, func(v results.Variant) bool { return v.Name == variant }) {
		c.Variants = append(c.Variants, results.Variant{Name: variant, Policy: meta.Policy})
	}
	index := 0
	for _, r := range m.Runs {
		if r.Case == caseName && r.Variant == variant {
			index++
		}
	}
	c.Runs = max(c.Runs, index+1)
	id := fmt.Sprintf("%s/%s/run-%02d", caseName, variant, index+1)
	records, stderr := results.RunFiles(caseName, variant, index)
	run := &results.Run{ID: id, Case: caseName, Variant: variant, Policy: meta.Policy, Index: index, Order: len(m.Runs),
		Seed: meta.Seed, Records: records, Stderr: stderr,
		Status: results.StatusOK, Ranks: len(streams), Steps: len(streams[0].Steps),
		Meta: results.RunMetaOf(meta)}
	for k, st := range streams {
		data, err := os.ReadFile(paths[st])
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(out, run.RankRecords(k))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(dst, data, 0o644); err != nil {
			return nil, err
		}
	}
	sum, rs := stats.MultiRank(streams, rule)
	run.Summary, run.RankSummary = &sum, &rs
	if err := results.WriteGlobalSeries(out, run, rs.Series); err != nil {
		return nil, err
	}
	m.Runs = append(m.Runs, run)
	if err := results.WriteManifest(out, m); err != nil {
		return nil, err
	}
	if err := results.WriteBench(out, m); err != nil {
		return nil, err
	}
	return &Collected{Run: run, Summary: sum, Ranks: rs}, nil
}

func ranksOf(streams []*bench.Stream) []int {
	var out []int
	for _, s := range streams {
		out = append(out, s.Meta.Rank)
	}
	return out
}
