package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/advise"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/scale"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := report.FormatFlag(fs, "", "output `format`: text, markdown, json, junit or html (default: text on standard output, else by the -o file's extension, else html)")
	out := fs.String("o", "", "write to this file (default: standard output)")
	ref := fs.String("ref", report.DefaultReference, "one results directory: compare every variant of a case with this variant (none: no comparison)")
	var memLimit results.MemLimitFlag
	fs.Var(&memLimit, "mem-limit", results.MemLimitUsage)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter report [-format F] [-o FILE] [-mem-limit SIZE] RESULTS [NEW]

Renders one results directory (its policies side by side: each variant
against the reference variant -ref with its verdicts, step timelines,
tails, histograms, environment), or the comparison of two inputs
(results directories or benchfmt files) like gcjitter compare. The exit
status is 0 whatever the verdicts (gcjitter compare and gate judge).

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return cli.Silent(cli.Usage)
	}
	if *format == "" {
		// A page of HTML is never what a terminal wants.
		*format = cmp.Or(report.FormatOf(*out), "html")
		if *out == "" {
			*format = "text"
		}
	}
	d := &report.Doc{Kind: "run", Generated: time.Now(), Title: "gcjitter: " + strings.Join(fs.Args(), " vs ")}
	last := fs.Arg(fs.NArg() - 1)
	if report.IsResultsDir(last) {
		m, err := results.ReadManifest(last)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		m.Host.MemLimit, m.Host.MemLimitFrom = memLimit.Limit(m.Host)
		d.Manifest = m
		if *format == "html" && slices.ContainsFunc(m.Runs, func(r *results.Run) bool { return r.Ranks > 1 }) {
			if d.Scale, err = scale.ChartsFor([]string{last}); err != nil {
				fmt.Fprintf(stderr, "gcjitter report: the chart at scale is left out: %v\n", err)
			}
		}
	} else if fs.NArg() == 1 {
		return cli.Usagef("%s is not a results directory; give two inputs to compare benchfmt files", last)
	}
	if fs.NArg() == 1 && *ref != "none" && *ref != "" {
		err := report.CompareVariants(d, last, *ref, results.CompareOptions{})
		// Without -ref, a directory with no "default" variant (or only
		// that one) is shown without a comparison.
		if err != nil && cli.FlagSet(fs, "ref") {
			return cli.Usagef("%v", err)
		}
		if err == nil && *ref == report.DefaultReference {
			d.Answers = advise.Answers(last, d.Manifest, advise.Options{LimitOf: memLimit.Limit})
		}
	}
	cache := &results.Cache{KeepSteps: *format == "html"} // each stream read once
	if fs.NArg() == 2 {
		d.Kind = "compare"
		sides, err := cache.LoadPair(fs.Args(), stats.SpikeRule{})
		if err != nil {
			return cli.Usagef("%v", err)
		}
		d.Comparison = results.Compare(sides[0], sides[1], results.CompareOptions{})
	}
	if *format == "html" {
		if err := report.AttachStepsFrom(d, cache.LoadSteps, fs.Args()...); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	// Rendered whole before anything is written; coloured only when it goes
	// to a terminal, never into a file.
	var b bytes.Buffer
	if err := report.RenderColor(&b, *format, d, *out == "" && report.ColorFor(stdout)); err != nil {
		return cli.InfraError(err)
	}
	if *out == "" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	return atomicfile.Write(*out, b.Bytes(), 0o644)
}
