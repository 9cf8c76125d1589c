package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdDrift(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter drift", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter drift DIR DIR...

Measures how far each metric moves between sessions of one host: the
results directories (or benchfmt files) of the same cases from two or more
sessions, best hours apart with other work between them, as a nightly's
are. Prints, per benchmark and metric, the runs' spread within a session,
the session drift beyond it (with its 90% upper bound) and the catalogue's
assumed drift, and the case setting (gate: {drift: ...}) that carries the
measurement into a gate against golden baselines.
Exit status: 0, or 2 for bad input.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "usage: gcjitter drift DIR DIR...")
		return cli.Silent(cli.Usage)
	}
	cache := &results.Cache{}
	var sessions []*results.Data
	for _, path := range fs.Args() {
		d, err := cache.Load(path, stats.SpikeRule{})
		if err != nil {
			return err
		}
		sessions = append(sessions, d)
	}
	drifts := results.SessionDrifts(sessions)
	if len(drifts) == 0 {
		return cli.Usagef("no benchmark is in two of the %d inputs: give sessions of the same cases", fs.NArg())
	}
	results.WriteDriftText(stdout, drifts)
	return nil
}
