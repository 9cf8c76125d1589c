package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// cmdCollect turns the per-rank record streams of a run started by torchrun
// or a cluster launcher (workers writing --records DIR/rank-{rank}.jsonl
// into a shared directory) into one run of a results directory, so that
// compare, report and golden read it like any other.
func cmdCollect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gcjitter collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory to add the run to (created if needed)")
	caseName := fs.String("case", "", "case name of the run")
	variant := fs.String("variant", "", "variant name (default: the workers' policy)")
	spike := fs.Float64("spike-factor", stats.DefaultSpikeFactor, "a spike is a step above this many times the median")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter collect -o DIR -case NAME [-variant V] STREAM ...

Adds one multi-rank run, given as its ranks' record streams (from workers
started by torchrun or a cluster launcher with --records DIR/rank-{rank}.jsonl),
to a results directory. Call it once per run; runs of one variant accumulate.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *out == "" || *caseName == "" || fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	streams := make([]*bench.Stream, 0, fs.NArg())
	paths := map[*bench.Stream]string{}
	for _, p := range fs.Args() {
		f, err := os.Open(p)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
			return exitUsage
		}
		s, err := bench.ReadStream(f, p)
		f.Close()
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "gcjitter collect: %s: %v\n", p, err)
			return exitUsage
		case len(s.Problems) > 0:
			fmt.Fprintf(stderr, "gcjitter collect: %v\n", s.Problems[0])
			return exitUsage
		case s.Meta == nil || !s.Complete():
			fmt.Fprintf(stderr, "gcjitter collect: %s: not a complete record stream (no meta or no end record): the rank did not finish\n", p)
			return exitUsage
		}
		streams = append(streams, s)
		paths[s] = p
	}
	slices.SortFunc(streams, func(a, b *bench.Stream) int { return a.Meta.Rank - b.Meta.Rank })
	for k, s := range streams {
		if s.Meta.Rank != k || s.Meta.WorldSize != len(streams) {
			fmt.Fprintf(stderr, "gcjitter collect: got ranks %v of world size %d: give one stream per rank, all of one run\n", ranksOf(streams), s.Meta.WorldSize)
			return exitUsage
		}
	}
	meta := streams[0].Meta
	if *variant == "" {
		*variant = meta.Policy
	}
	m, err := results.ReadManifest(*out)
	if errors.Is(err, os.ErrNotExist) {
		m = &results.Manifest{Schema: results.ManifestSchema, Tool: version(), Command: os.Args, Started: time.Now().UTC(),
			Python: meta.Python.Executable, PythonFrom: "external launcher"}
		err = nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
		return exitUsage
	}
	ci := slices.IndexFunc(m.Cases, func(c results.Case) bool { return c.Name == *caseName })
	if ci < 0 {
		m.Cases = append(m.Cases, results.Case{Name: *caseName, Source: "collected", Steps: meta.Steps, Warmup: meta.Warmup, SpikeFactor: *spike})
		ci = len(m.Cases) - 1
	}
	c := &m.Cases[ci]
	if !slices.ContainsFunc(c.Variants, func(v results.Variant) bool { return v.Name == *variant }) {
		c.Variants = append(c.Variants, results.Variant{Name: *variant, Policy: meta.Policy})
	}
	index := 0
	for _, r := range m.Runs {
		if r.Case == *caseName && r.Variant == *variant {
			index++
		}
	}
	c.Runs = max(c.Runs, index+1)
	id := fmt.Sprintf("%s/%s/run-%02d", *caseName, *variant, index+1)
	run := &results.Run{ID: id, Case: *caseName, Variant: *variant, Policy: meta.Policy, Index: index, Order: len(m.Runs),
		Seed: meta.Seed, Records: filepath.Join("runs", id+".jsonl"), Stderr: filepath.Join("runs", id+".stderr"),
		Status: results.StatusOK, Ranks: len(streams), Steps: len(streams[0].Steps),
		Meta: &results.RunMeta{Python: meta.Python.Version, Build: meta.Python.Build, Torch: meta.Torch, TorchNPU: meta.TorchNPU,
			CUDA: meta.CUDA, CANN: meta.CANN, Device: meta.Device.Kind, DevName: meta.Device.Name, Threads: meta.Threads, Notes: meta.Notes}}
	for k, st := range streams {
		data, err := os.ReadFile(paths[st])
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
			return exitInfra
		}
		dst := filepath.Join(*out, run.RankRecords(k))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
			return exitInfra
		}
		if err := atomicfile.Write(dst, data, 0o644); err != nil {
			fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
			return exitInfra
		}
	}
	sum, rs := stats.MultiRank(streams, *spike)
	run.Summary, run.RankSummary = &sum, &rs
	if err := results.WriteGlobalSeries(*out, run, rs.Series); err != nil {
		fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
		return exitInfra
	}
	m.Runs = append(m.Runs, run)
	if err := results.WriteManifest(*out, m); err != nil {
		fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
		return exitInfra
	}
	if err := results.WriteBench(*out, m); err != nil {
		fmt.Fprintf(stderr, "gcjitter collect: %v\n", err)
		return exitInfra
	}
	fmt.Fprintf(stdout, "%s: %d ranks x %d steps, global p50 %s, p99 %s, amplification %.2f\n", id, len(streams), sum.Steps, ms(sum.P50), ms(sum.P99), rs.Amplification)
	return exitOK
}

func ranksOf(streams []*bench.Stream) []int {
	var out []int
	for _, s := range streams {
		out = append(out, s.Meta.Rank)
	}
	return out
}
