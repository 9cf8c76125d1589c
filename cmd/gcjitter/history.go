package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/history"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

var historyCommands = map[string]command{"add": historyAdd, "show": historyShow, "detect": historyDetect, "report": historyReport, "prune": historyPrune}

func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: gcjitter history add|show|detect|report|prune ... (gcjitter history SUBCOMMAND -h for its flags)"
	switch {
	case len(args) == 0:
		fmt.Fprintln(stderr, usage)
		return cli.Silent(cli.Usage)
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		fmt.Fprintln(stderr, usage)
		return nil
	}
	cmd, ok := historyCommands[args[0]]
	if !ok {
		return cli.Usagef("unknown subcommand %q (want add, show, detect, report or prune)", args[0])
	}
	if err := cmd(ctx, args[1:], stdout, stderr); err != nil {
		return &cli.SubcommandError{Name: "gcjitter history " + args[0], Err: err}
	}
	return nil
}

// historyFlags are the flags the history subcommands share: the store and
// the selection of series.
type historyFlags struct {
	dsn, since string
	filter     history.Filter
	runs       bool // read the runs, not the nights' summaries (show -runs)
}

func newHistoryFlags(name, usage string, stderr io.Writer, selection bool) (*flag.FlagSet, *historyFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &historyFlags{}
	def := os.Getenv(history.DSNEnv)
	if def == "" {
		def = history.DefaultDSN
	}
	fs.StringVar(&f.dsn, "history", def, "the store: "+history.DSNHelp+" (default $"+history.DSNEnv+", else "+history.DefaultDSN+")")
	if selection {
		fs.StringVar(&f.filter.HostClass, "host-class", "", "only this host class")
		fs.StringVar(&f.filter.Case, "case", "", "only this case")
		fs.StringVar(&f.filter.Variant, "variant", "", "only this variant")
		fs.StringVar(&f.filter.Metric, "metric", "", "only this metric (default: show all; detect and report: the primary ones)")
		fs.StringVar(&f.since, "since", "", "only nights from then on (detect: only regressions first seen then): a date (2026-11-01), a duration (72h) or days (7d)")
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs, f
}

// open opens the store; a missing SQLite file is bad input for commands
// that only read.
func (f *historyFlags) open(ctx context.Context, mustExist bool) (*history.Store, error) {
	if mustExist && !strings.Contains(f.dsn, "://") {
		if _, err := os.Stat(f.dsn); err != nil {
			return nil, cli.Usagef("history %s: no such store (gcjitter history add DIR... -history %s makes one)", f.dsn, f.dsn)
		}
	}
	s, err := history.Open(ctx, f.dsn)
	if err != nil {
		return nil, cli.InfraError(err)
	}
	return s, nil
}

// query reads the selected series; metrics defaults to the primary ones
// when primary is set and no -metric is given.
func (f *historyFlags) query(ctx context.Context, s *history.Store, primary bool) ([]*history.Series, error) {
	var err error
	if f.filter.Since, err = history.Since(f.since, time.Now()); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return f.read(ctx, s, primary)
}

// read is query without -since: every night of the selected series, from
// the nights' summaries (or their runs, with f.runs).
func (f *historyFlags) read(ctx context.Context, s *history.Store, primary bool) ([]*history.Series, error) {
	if f.filter.Metric != "" {
		if _, ok := stats.MetricByName(f.filter.Metric); !ok {
			return nil, cli.Usagef("-metric %q: not a metric (%s)", f.filter.Metric, strings.Join(stats.MetricNames(), ", "))
		}
	}
	query := s.Query
	if f.runs {
		query = s.QueryRuns
	}
	series, err := query(ctx, f.filter)
	if err != nil {
		return nil, cli.InfraError(err)
	}
	if primary && f.filter.Metric == "" {
		series = history.PrimaryOnly(series, stats.DefaultPrimary)
	}
	if len(series) == 0 {
		return nil, cli.Usagef("history %s: no nights match", s)
	}
	return series, nil
}

func historyAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newHistoryFlags("gcjitter history add", `usage: gcjitter history add [flags] DIR...

Adds results directories (run, gate and ab write them) to the history
store, each in one transaction. Adding a directory again changes nothing.

`, stderr, false)
	label := fs.String("label", "", "CI's commit or build label for these nights")
	class := fs.String("host-class", "", "host class to record (default: the results', else derived from their host)")
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("name one or more results directories")
	}
	s, err := f.open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, dir := range fs.Args() {
		a, err := s.Add(ctx, dir, history.AddOptions{Label: *label, HostClass: *class})
		var input *results.InputError
		switch {
		case errors.As(err, &input):
			return &cli.Error{Code: cli.Usage, Err: err}
		case err != nil:
			return cli.InfraError(err)
		}
		printAdded(stdout, s.String(), dir, a)
	}
	return nil
}

func printAdded(w io.Writer, store, dir string, a *history.Added) {
	what := fmt.Sprintf("%d runs, %d values", a.Runs, a.Values)
	if a.Runs == 0 {
		what = "already there, nothing new"
	}
	if a.Partial != "" {
		what += " (" + a.Partial + ")"
	}
	fmt.Fprintf(w, "%s: night %s of %s added to %s: %s\n", dir, a.Night, a.HostClass, store, what)
}

func historyShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newHistoryFlags("gcjitter history show", `usage: gcjitter history show [flags]

Prints the selected series night by night: each night's median over its
runs with benchstat's 95% interval, and what changed in the environment.
With -runs, every run's value too, read from the runs (nights whose runs
were pruned are left out).

`, stderr, true)
	fs.BoolVar(&f.runs, "runs", false, "read the runs and print each run's value (nights whose runs were pruned are not shown)")
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	s, err := f.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := f.query(ctx, s, false)
	if err != nil {
		return err
	}
	history.WriteSeries(stdout, series)
	return nil
}

func historyDetect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newHistoryFlags("gcjitter history detect", `usage: gcjitter history detect [flags]

Finds change points in each series (E-divisive means with a permutation
test, on the nights' medians): the first night after each shift, its size
with a 95% interval, its p-value and the environment changes then.
Detection reads every night of the series; -since says which findings are
news. Exit status: 1 when a regression's first night is at or after -since
(default: any), 0 otherwise.

`, stderr, true)
	alpha := fs.Float64("alpha", 0.05, "significance of each split")
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if !(*alpha > 0 && *alpha < 1) {
		return cli.Usagef("-alpha must be in (0, 1), got %v", *alpha)
	}
	from, err := history.Since(f.since, time.Now())
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if f.filter.Metric != "" {
		if _, ok := stats.MetricByName(f.filter.Metric); !ok {
			return cli.Usagef("-metric %q: not a metric (%s)", f.filter.Metric, strings.Join(stats.MetricNames(), ", "))
		}
	}
	s, err := f.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	// A host class at a time: a fleet's store in one class's memory.
	findings, n, err := s.DetectAll(ctx, f.filter, stats.DefaultPrimary, history.DetectOptions{ChangePointOptions: stats.ChangePointOptions{Alpha: *alpha}})
	if err != nil {
		return cli.InfraError(err)
	}
	if n == 0 {
		return cli.Usagef("history %s: no nights match", s)
	}
	history.WriteFindings(stdout, findings)
	if regs := history.Regressions(findings, from); len(regs) > 0 {
		fmt.Fprintf(stderr, "gcjitter history detect: %d regressions\n", len(regs))
		return cli.Silent(cli.Regression)
	}
	return nil
}

func historyReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newHistoryFlags("gcjitter history report", `usage: gcjitter history report [flags]

Writes a trend dashboard per host class (history-CLASS.html in -o): every
case and variant's primary metrics night by night, change points and
environment changes marked. One self-contained file each, no script.

`, stderr, true)
	format := fs.String("format", "html", "html (the only format; history show and detect print text)")
	out := fs.String("o", ".", "directory for the pages")
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if *format != "html" {
		return cli.Usagef("-format %q: history report writes html (history show and history detect print text)", *format)
	}
	s, err := f.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := f.query(ctx, s, true)
	if err != nil {
		return err
	}
	findings := history.Detect(series, history.DetectOptions{})
	paths, err := history.WriteDashboards(*out, s.String(), series, findings, nil)
	if err != nil {
		return cli.InfraError(err)
	}
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return nil
}

func historyPrune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newHistoryFlags("gcjitter history prune", `usage: gcjitter history prune -keep-runs AGE [flags]

Deletes the runs of nights older than AGE, in one transaction. Their
summaries stay: show, detect and report read the same nights as before;
show -runs and gate -baseline history:N read only the nights kept.

`, stderr, false)
	keep := fs.String("keep-runs", "", "keep the runs of nights started this recently: days (90d) or a duration (2160h)")
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if *keep == "" {
		return cli.Usagef("-keep-runs is required (e.g. -keep-runs 90d)")
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected arguments %q", fs.Args())
	}
	cutoff, err := history.KeepRuns(*keep, time.Now())
	if err != nil {
		return cli.Usagef("%v", err)
	}
	s, err := f.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.PruneRuns(ctx, cutoff)
	if err != nil {
		return cli.InfraError(err)
	}
	fmt.Fprintf(stdout, "%s: deleted %d runs of %d nights started before %s; their summaries stay\n", s, p.Runs, p.Nights, cutoff.UTC().Format(time.RFC3339))
	return nil
}
