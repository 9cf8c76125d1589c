package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdCompare(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	floors := cases.FloorFlags{}
	fs.Var(floors, "floor", "floor of a metric, METRIC=FRACTION (e.g. p99=10%); repeatable; overrides the cases' gates")
	alpha := fs.Float64("alpha", 0, "family-wise significance level (default: the cases' gate, else 0.05)")
	spikeRule := spikeFactorFlag(fs)
	defFloor := fs.Float64("default-floor", 0.05, "floor of units that are not gcjitter metrics (foreign benchfmt)")
	format := report.FormatFlag(fs, "text", "output `format`: text, markdown, json, junit or html")
	ref := fs.String("ref", "", "compare every variant of one results directory DIR with this `variant` of its case")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter compare [flags] OLD NEW
       gcjitter compare -ref VARIANT [flags] DIR

Compares two results: gcjitter results directories or benchfmt files from
any tool (each result line is one run); or, with -ref, every policy of one
results directory with its case's variant VARIANT. Runs are the
statistical unit.
Exit status: 0 no regression, 1 a metric regressed, 2 bad input.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if *ref != "" {
		return compareVariants(fs, *ref, *format, results.CompareOptions{Alpha: *alpha, Floors: floors, DefaultFloor: *defFloor}, stdout)
	}
	switch {
	case fs.NArg() != 2:
		fmt.Fprintln(stderr, "usage: gcjitter compare [flags] OLD NEW")
		return cli.Silent(cli.Usage)
	case *alpha < 0 || *alpha >= 0.5:
		return cli.Usagef("-alpha must be in (0, 0.5), got %v", *alpha)
	}
	rule, err := spikeRule()
	if err != nil {
		return err
	}
	for k := range floors {
		if _, ok := stats.MetricByName(k); !ok && !strings.Contains(k, "/") {
			return cli.Usagef("-floor %s: unknown metric (gcjitter's: %s; or a unit like sec/op)", k, strings.Join(stats.MetricNames(), ", "))
		}
	}
	// Each stream is read at most once: summaries where they are current,
	// and the HTML charts' steps kept from the runs summarised now.
	cache := &results.Cache{KeepSteps: *format == "html"}
	sides, err := loadSides(cache, fs.Args(), rule)
	if err != nil {
		return err
	}
	if same, err := results.SameInput(fs.Arg(0), fs.Arg(1)); err == nil && same {
		fmt.Fprintf(stderr, "gcjitter compare: warning: %s and %s are the same input: every verdict will be same or unknown\n", fs.Arg(0), fs.Arg(1))
	}
	c := results.CompareSessions(sides[0], sides[1], results.CompareOptions{Alpha: *alpha, Floors: floors, DefaultFloor: *defFloor})
	if len(c.Rows) == 0 {
		return cli.Usagef("%s and %s have no benchmark and unit in common\n  %s", fs.Arg(0), fs.Arg(1), strings.Join(c.Notes, "\n  "))
	}
	d := &report.Doc{Kind: "compare", Title: "gcjitter compare", Generated: time.Now(), Comparison: c}
	if report.IsResultsDir(fs.Arg(1)) {
		if m, err := results.ReadManifest(fs.Arg(1)); err == nil {
			d.Manifest = m
		}
	}
	if *format == "html" {
		if err := report.AttachStepsFrom(d, cache.LoadSteps, fs.Args()...); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if err := report.Render(stdout, *format, d); err != nil {
		return cli.InfraError(err)
	}
	if c.Regressed() {
		return cli.Silent(cli.Regression)
	}
	return nil
}

// loadSides loads compare's two inputs: results directories and benchfmt
// files through the cache, baselines (a golden file or a host class's
// directory, golden.IsBaselines) as the sessions they were made in.
func loadSides(cache *results.Cache, paths []string, rule stats.SpikeRule) ([2]*results.Data, error) {
	if !golden.IsBaselines(paths[0]) && !golden.IsBaselines(paths[1]) {
		return cache.LoadPair(paths, rule)
	}
	var sides [2]*results.Data
	for i, p := range paths {
		var err error
		if golden.IsBaselines(p) {
			if sides[i], err = golden.SessionData(p); err != nil {
				return sides, cli.Usagef("%v", err)
			}
		} else if sides[i], err = cache.Load(p, rule); err != nil {
			return sides, err
		}
	}
	return sides, nil
}

// compareVariants is compare -ref: one results directory's policies, each
// against the reference variant; exit 1 when one regressed.
func compareVariants(fs *flag.FlagSet, ref, format string, opt results.CompareOptions, stdout io.Writer) error {
	if fs.NArg() != 1 || !report.IsResultsDir(fs.Arg(0)) {
		return cli.Usagef("compare -ref %s takes one results directory, got %s", ref, strings.Join(fs.Args(), " "))
	}
	dir := fs.Arg(0)
	m, err := results.ReadManifest(dir)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	d := &report.Doc{Kind: "compare", Title: "gcjitter compare: every variant against " + ref, Generated: time.Now(), Manifest: m}
	if err := report.CompareVariants(d, dir, ref, opt); err != nil {
		return cli.Usagef("%v", err)
	}
	if format == "html" {
		if err := report.AttachSteps(d, dir); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if err := report.Render(stdout, format, d); err != nil {
		return cli.InfraError(err)
	}
	if d.Comparison.Regressed() {
		return cli.Silent(cli.Regression)
	}
	return nil
}
