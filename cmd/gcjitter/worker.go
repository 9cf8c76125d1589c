package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gcjitter worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := bench.DefaultConfig()
	cfg.RegisterFlags(fs)
	python := fs.String("python", "", "interpreter (default: $GCJITTER_PYTHON, python3 on PATH, /usr/bin/python3; the first that imports torch)")
	out := fs.String("o", "gcjitter-records.jsonl", "record stream output file")
	hashSeed := fs.String("hash-seed", "0", "PYTHONHASHSEED for the worker")
	printScript := fs.Bool("script", false, "print the embedded worker program and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: gcjitter worker [flags]\n\nRuns one worker process, writes its record stream to -o and prints a summary.\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gcjitter worker: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *printScript {
		stdout.Write(bench.WorkerSource)
		return exitOK
	}
	if _, err := strconv.ParseUint(*hashSeed, 10, 32); err != nil {
		fmt.Fprintf(stderr, "gcjitter worker: -hash-seed must be an integer in 0..4294967295, got %q\n", *hashSeed)
		return exitUsage
	}

	needTorch := cfg.Model != "none" || !slices.Contains([]string{"auto", "cpu"}, cfg.Device)
	py, err := runner.FindPython(ctx, *python, needTorch)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter worker: %v\n", err)
		return exitInfra
	}
	script, err := bench.WriteWorker(workerDir())
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter worker: %v\n", err)
		return exitInfra
	}
	w := &runner.Worker{
		Python:      py,
		Script:      script,
		Args:        cfg.Args(),
		Env:         append(os.Environ(), "PYTHONHASHSEED="+*hashSeed),
		RecordsPath: *out,
		Stdout:      stderr, // the workload's own output must not mix with our summary
	}
	res, err := w.Run(ctx)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "gcjitter worker: interrupted; records so far are in %s\n", *out)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter worker: %v\n", err)
		return exitInfra
	}
	if res.Failed() {
		if res.Stream.Error != nil && res.Stream.Error.Kind == "usage" {
			fmt.Fprintf(stderr, "gcjitter worker: %s\n", res.Stream.Error.Message)
			return exitUsage
		}
		fmt.Fprintf(stderr, "gcjitter worker: %s; records so far are in %s\n", res.Reason(), *out)
		if t := strings.TrimSpace(res.StderrTail); t != "" {
			fmt.Fprintf(stderr, "worker stderr (last lines):\n%s\n", lastLines(t, 10))
		}
		return exitInfra
	}
	summarise(stdout, *out, res.Stream)
	return exitOK
}

// workerDir is where the embedded worker is written for the interpreter to
// run: the user's cache, or the temporary directory where there is none.
func workerDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "gcjitter")
	}
	return filepath.Join(os.TempDir(), "gcjitter")
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// summarise prints what one run measured. Comparisons and verdicts are the
// stats package's job; this is a first look at a single run.
func summarise(w io.Writer, path string, s *bench.Stream) {
	m := s.Meta
	measured := s.Measured()
	fmt.Fprintf(w, "records:  %s\n", path)
	torch := m.Torch
	if torch == "" {
		torch = "none"
	}
	fmt.Fprintf(w, "python:   %s (%s), torch %s, device %s (%s)\n", m.Python.Version, m.Python.Executable, torch, m.Device.Kind, m.Device.Name)
	fmt.Fprintf(w, "workload: model %s, garbage %s, long-lived %d, policy %s, seed %d\n", m.Model, m.Garbage.Pattern, m.Garbage.LongLived, m.Policy, m.Seed)
	for _, note := range m.Notes {
		fmt.Fprintf(w, "note:     %s\n", note)
	}
	r := stats.Summarize(s, stats.DefaultSpikeFactor)
	fmt.Fprintf(w, "steps:    %d measured, %d warm-up\n", len(measured), len(s.Steps)-len(measured))
	if r.Steps > 0 {
		fmt.Fprintf(w, "step time: median %s, p90 %s, p99 %s, max %s\n", ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
		fmt.Fprintf(w, "GC share: %.2f%% of measured step time\n", 100*r.GCShare)
	}
	fmt.Fprintf(w, "collections (measured steps): gen0 %d, gen1 %d, gen2 %d; max pause gen0 %s, gen1 %s, gen2 %s\n",
		r.Collections[0], r.Collections[1], r.Collections[2], ms(r.MaxPauseNS[0]), ms(r.MaxPauseNS[1]), ms(r.MaxPauseNS[2]))
	if len(s.End.GCStats) >= 3 {
		g := s.End.GCStats
		fmt.Fprintf(w, "gc.get_stats() over all steps: gen0 %d, gen1 %d, gen2 %d collections\n", g[0].Collections, g[1].Collections, g[2].Collections)
	}
}

func ms(ns float64) string { return fmt.Sprintf("%.3f ms", ns/1e6) }
