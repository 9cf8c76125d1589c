package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
)

// isResultsDir reports whether path is a gcjitter results directory.
func isResultsDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, results.ManifestFile))
	return err == nil
}

// attachSteps loads the step series of the sides that are results
// directories, for the HTML charts.
func attachSteps(d *report.Doc, paths ...string) error {
	d.Steps = map[string][2]*results.Steps{}
	for i, p := range paths {
		if p == "" || !isResultsDir(p) {
			continue
		}
		steps, err := results.LoadSteps(p)
		if err != nil {
			return err
		}
		side := i
		if len(paths) == 1 {
			side = 0
		}
		for bench, s := range steps {
			pair := d.Steps[bench]
			pair[side] = s
			d.Steps[bench] = pair
		}
	}
	return nil
}

// writeReports writes d into dir as base.<ext> for each format, atomically.
func writeReports(dir, base string, d *report.Doc, formats ...string) ([]string, error) {
	var paths []string
	for _, f := range formats {
		var b bytes.Buffer
		if err := report.RenderColor(&b, f, d, false); err != nil { // files: never coloured
			return paths, err
		}
		path := filepath.Join(dir, base+report.Ext(f))
		if err := atomicfile.Write(path, b.Bytes(), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// formatValue is -format: flag parsing itself refuses a format that does
// not exist (exit 2), so no command checks it again.
type formatValue string

func (f *formatValue) String() string { return string(*f) }

func (f *formatValue) Set(s string) error {
	if !slices.Contains(report.Formats, s) {
		return fmt.Errorf("want one of %s", strings.Join(report.Formats, ", "))
	}
	*f = formatValue(s)
	return nil
}

// formatFlag registers -format with its default and usage.
func formatFlag(fs *flag.FlagSet, def, usage string) *string {
	f := formatValue(def)
	fs.Var(&f, "format", usage)
	return (*string)(&f)
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gcjitter report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := formatFlag(fs, "html", "output `format`: text, markdown, json, junit or html")
	out := fs.String("o", "", "write to this file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter report [-format F] [-o FILE] RESULTS [NEW]

Renders one results directory (its runs: step series, quantiles,
histograms, environment), or the comparison of two inputs (results
directories or benchfmt files) like gcjitter compare.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return exitUsage
	}
	d := &report.Doc{Kind: "run", Generated: time.Now(), Title: "gcjitter: " + strings.Join(fs.Args(), " vs ")}
	last := fs.Arg(fs.NArg() - 1)
	if isResultsDir(last) {
		m, err := results.ReadManifest(last)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter report: %v\n", err)
			return exitUsage
		}
		d.Manifest = m
	} else if fs.NArg() == 1 {
		fmt.Fprintf(stderr, "gcjitter report: %s is not a results directory; give two inputs to compare benchfmt files\n", last)
		return exitUsage
	}
	if fs.NArg() == 2 {
		d.Kind = "compare"
		var sides [2]*results.Data
		for i, p := range fs.Args() {
			data, err := results.Load(p, 0)
			if err != nil {
				fmt.Fprintf(stderr, "gcjitter report: %v\n", err)
				return exitUsage
			}
			sides[i] = data
		}
		d.Comparison = results.Compare(sides[0], sides[1], results.CompareOptions{})
	}
	if *format == "html" {
		if err := attachSteps(d, fs.Args()...); err != nil {
			fmt.Fprintf(stderr, "gcjitter report: %v\n", err)
			return exitUsage
		}
	}
	// Rendered whole before anything is written; coloured only when it goes
	// to a terminal, never into a file.
	var b bytes.Buffer
	if err := report.RenderColor(&b, *format, d, *out == "" && report.ColorFor(stdout)); err != nil {
		fmt.Fprintf(stderr, "gcjitter report: %v\n", err)
		return exitInfra
	}
	if *out == "" {
		stdout.Write(b.Bytes())
		return exitOK
	}
	if err := atomicfile.Write(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "gcjitter report: %v\n", err)
		return exitInfra
	}
	return exitOK
}
