package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdCollect(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory to add the run to (created if needed)")
	caseName := fs.String("case", "", "case name of the run")
	variant := fs.String("variant", "", "variant name (default: the workers' policy)")
	spikeRule := spikeFactorFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter collect -o DIR -case NAME [-variant V] STREAM ...

Adds one multi-rank run, given as its ranks' record streams (from workers
started by torchrun or a cluster launcher with --records DIR/rank-{rank}.jsonl),
to a results directory. Call it once per run; runs of one variant accumulate.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	switch {
	case *out == "" || *caseName == "" || fs.NArg() == 0:
		fs.Usage()
		return cli.Silent(cli.Usage)
	}
	rule, err := spikeRule()
	if err != nil {
		return err
	}
	c, err := runner.Collect(*out, *caseName, *variant, fs.Args(), rule, cli.Version(), os.Args)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d ranks x %d steps, global p50 %s, p99 %s, amplification %.2f\n",
		c.Run.ID, c.Run.Ranks, c.Summary.Steps, stats.MS(c.Summary.P50), stats.MS(c.Summary.P99), c.Ranks.Amplification)
	return nil
}
