package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// floorFlags collects -floor metric=5% flags.
type floorFlags map[string]float64

func (f floorFlags) String() string { return fmt.Sprint(map[string]float64(f)) }

func (f floorFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want METRIC=FLOOR, e.g. p99=10%%")
	}
	scale := 1.0
	if strings.HasSuffix(v, "%") {
		v, scale = strings.TrimSuffix(v, "%"), 0.01
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 {
		return fmt.Errorf("floor %q: want a non-negative fraction like 5%% or 0.05", v)
	}
	f[k] = x * scale
	return nil
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gcjitter compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	floors := floorFlags{}
	fs.Var(floors, "floor", "floor of a metric, METRIC=FRACTION (e.g. p99=10%); repeatable; overrides the cases' gates")
	alpha := fs.Float64("alpha", 0, "family-wise significance level (default: the cases' gate, else 0.05)")
	spike := fs.Float64("spike-factor", 0, "results directories: a spike is a step above this many times its run's median (default: the case's)")
	defFloor := fs.Float64("default-floor", 0.05, "floor of units that are not gcjitter metrics (foreign benchfmt)")
	format := formatFlag(fs, "text", "output `format`: text, markdown, json, junit or html")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter compare [flags] OLD NEW

Compares two results: gcjitter results directories or benchfmt files from
any tool (each result line is one run). Runs are the statistical unit.
Exit status: 0 no regression, 1 a metric regressed, 2 bad input.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "usage: gcjitter compare [flags] OLD NEW")
		return exitUsage
	}
	if *alpha < 0 || *alpha >= 0.5 {
		fmt.Fprintf(stderr, "gcjitter compare: -alpha must be in (0, 0.5), got %v\n", *alpha)
		return exitUsage
	}
	if *spike != 0 && *spike <= 1 {
		fmt.Fprintf(stderr, "gcjitter compare: -spike-factor must be > 1, got %v\n", *spike)
		return exitUsage
	}
	for k := range floors {
		if _, ok := stats.MetricByName(k); !ok && !strings.Contains(k, "/") {
			fmt.Fprintf(stderr, "gcjitter compare: -floor %s: unknown metric (gcjitter's: p50, p90, p99, p99.9, max, spike-rate, gc-share, gen0..2-collections, gen0..2-pause; or a unit like sec/op)\n", k)
			return exitUsage
		}
	}
	var sides [2]*results.Data
	for i, path := range fs.Args() {
		d, err := results.Load(path, *spike)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter compare: %v\n", err)
			var ie *results.InputError
			if errors.As(err, &ie) {
				return exitUsage
			}
			return exitInfra
		}
		sides[i] = d
	}
	c := results.Compare(sides[0], sides[1], results.CompareOptions{Alpha: *alpha, Floors: floors, DefaultFloor: *defFloor})
	if len(c.Rows) == 0 {
		fmt.Fprintf(stderr, "gcjitter compare: %s and %s have no benchmark and unit in common\n", fs.Arg(0), fs.Arg(1))
		for _, n := range c.Notes {
			fmt.Fprintf(stderr, "  %s\n", n)
		}
		return exitUsage
	}
	d := &report.Doc{Kind: "compare", Title: "gcjitter compare", Generated: time.Now(), Comparison: c}
	if isResultsDir(fs.Arg(1)) {
		if m, err := results.ReadManifest(fs.Arg(1)); err == nil {
			d.Manifest = m
		}
	}
	if *format == "html" {
		if err := attachSteps(d, fs.Args()...); err != nil {
			fmt.Fprintf(stderr, "gcjitter compare: %v\n", err)
			return exitUsage
		}
	}
	if err := report.Render(stdout, *format, d); err != nil {
		fmt.Fprintf(stderr, "gcjitter compare: %v\n", err)
		return exitInfra
	}
	if c.Regressed() {
		return exitRegression
	}
	return exitOK
}
