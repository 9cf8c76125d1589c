package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/scale"
)

func cmdScale(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ranksFlag := fs.String("ranks", "8,64,512,4096", "comma-separated `numbers` of ranks to predict")
	format := fs.String("format", "text", "output `format`: text, json or html")
	out := fs.String("o", "", "write to this file (default: standard output)")
	steps := fs.Int("steps", 10000, "simulated steps per job")
	boot := fs.Int("boot", 0, "bootstrap replicates for the intervals (0: enough for their level, 400 at 95%)")
	seed := fs.Uint64("seed", 1, "the simulation's seed")
	collective := fs.String("collective", "tree", "how the all-reduce grows with ranks: tree (2*ceil(log2 N) hops) or ring (2(N-1) hops)")
	hop := fs.String("hop-latency", "10us", "the collective's latency per hop (a `duration`), or \"measured\": the measured collective's median over its hops at the measured world size")
	bw := fs.Float64("bandwidth", 0, "the collective's bandwidth in bytes/s for its size term (0: latency only)")
	noise := fs.String("host-noise", scale.NoiseAuto, "how the ranks' noise scales: independent (each host of the measured world size draws its own: the slowest of more hosts), shared (one host's noise at any N: what collections and the collective alone do) or auto (independent where the measured ranks had a CPU each, shared where they contended for CPUs)")
	bytesFlag := fs.Float64("bytes", 262144, "the all-reduce's size in bytes, with -bandwidth (the worker's default: 65,536 floats)")
	allowUnvalidated := fs.Bool("allow-unvalidated", false, "exit 0 when a validation is beyond tolerance (its case's predictions still say \"not validated\"); without it such a report exits 1")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter scale [-ranks 8,64,512,4096] [-format text|json|html] [-o FILE] [-allow-unvalidated] DIR...

Predicts each policy's global step-time distribution at N ranks from the
per-rank streams of results directories (multi-rank runs, single-rank
runs, collected or imported jobs): each rank's own step time replayed with
its measured collections, allocator-driven ones at a random phase per rank
(ranks drift apart), scheduled ones on the same steps; the global step is
the slowest rank plus the collective, whose cost grows with N. Before the
predictions, it validates the model on every measured multi-rank job
(from its own ranks, each run from the others, and from single-rank
runs of the same case); a case's variant with a validation beyond
tolerance is "not validated" and the command exits 1, unless
-allow-unvalidated. See docs/scale.md.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return cli.Silent(cli.Usage)
	}
	var ranks []int
	for _, f := range strings.Split(*ranksFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1_000_000 {
			return cli.Usagef("-ranks %q: want a comma-separated list of numbers of ranks from 1 to 1000000", *ranksFlag)
		}
		ranks = append(ranks, n)
	}
	switch *format {
	case "text", "json", "html":
	default:
		return cli.Usagef("-format %q: want text, json or html", *format)
	}
	if *collective != "tree" && *collective != "ring" {
		return cli.Usagef("-collective %q: want tree or ring", *collective)
	}
	if !slices.Contains(scale.NoiseModes, *noise) {
		return cli.Usagef("-host-noise %q: want %s", *noise, strings.Join(scale.NoiseModes, ", "))
	}
	if *steps < 100 || *boot < 0 {
		return cli.Usagef("-steps must be at least 100 and -boot at least 0")
	}
	groups, warnings, err := scale.Load(fs.Args())
	if err != nil {
		return err // results.InputError: exit 2
	}
	opt := scale.Options{Steps: *steps, Boot: *boot, Seed: *seed, HostNoise: *noise,
		Collective: scale.Collective{Kind: *collective, Bandwidth: *bw, Bytes: *bytesFlag}}
	if *hop == "measured" {
		opt.Collective.HopLatency = scale.MeasuredHopLatency(groups, opt.Collective)
	} else {
		d, err := time.ParseDuration(*hop)
		if err != nil || d < 0 {
			return cli.Usagef("-hop-latency %q: want a duration (10us) or measured", *hop)
		}
		opt.Collective.HopLatency = float64(d.Nanoseconds())
	}
	rep := scale.Build(groups, ranks, opt)
	rep.Warnings = append(warnings, rep.Warnings...)
	if err := writeScale(rep, *format, *out, stdout, stderr); err != nil {
		return err
	}
	return scaleVerdict(rep, *allowUnvalidated, stderr)
}

// writeScale writes the report in format to out, or to stdout.
func writeScale(rep *scale.Report, format, out string, stdout, stderr io.Writer) error {
	var b bytes.Buffer
	var err error
	switch format {
	case "json":
		err = rep.JSON(&b)
	case "html":
		err = rep.HTML(&b)
	default:
		err = rep.Text(&b)
	}
	if err != nil {
		return err
	}
	if out == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	if err := atomicfile.Write(out, b.Bytes(), 0o644); err != nil {
		return cli.InfraError(err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", out)
	return nil
}

// scaleVerdict is the exit of a report: 1 when a validation failed (its
// predictions are not validated, and README's "validated first" would
// otherwise be a claim), 0 with -allow-unvalidated. The failures go to
// stderr as well, where -o or -format json would hide them.
func scaleVerdict(rep *scale.Report, allow bool, stderr io.Writer) error {
	failed := rep.Failed()
	if len(failed) == 0 {
		return nil
	}
	for _, v := range failed {
		fmt.Fprintf(stderr, "gcjitter scale: not validated: %s\n", v.Failure())
	}
	if allow {
		fmt.Fprintln(stderr, "gcjitter scale: -allow-unvalidated: exit 0; those predictions say \"not validated\"")
		return nil
	}
	fmt.Fprintln(stderr, "gcjitter scale: exit 1: a prediction is not validated (-allow-unvalidated to report anyway with exit 0)")
	return cli.Silent(cli.Regression)
}
