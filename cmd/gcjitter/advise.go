package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/gcjitter/gcjitter/advise"
	"github.com/gcjitter/gcjitter/internal/cli"
)

func cmdAdvise(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", advise.DefaultDuration, "the job's length, e.g. 8h: memory must last it")
	var limit cli.MemLimitFlag
	fs.Var(&limit, "mem-limit", cli.MemLimitUsage)
	format := fs.String("format", "text", "output `format`: text or json")
	caseName := fs.String("case", "", "the `case` to advise on when the results hold several")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter advise [-duration D] [-mem-limit SIZE] [-format text|json] DIR...

Recommends one GC policy from results with several (a run of a case with
variants, a fitted case, or several trace runs of one job): the calmest
tail whose median is not worse than default's and whose memory lasts the
job within the limit; says which constraint binds when a calmer tail is
ruled out, and how to set the policy (Python, Megatron-LM, NeMo,
torchtitan). docs/policy.md.
Exit status: 0 a policy recommended, 1 none qualifies, 2 bad input.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	switch {
	case fs.NArg() == 0:
		return cli.Usagef("advise needs one or more results directories")
	case *format != "text" && *format != "json":
		return cli.Usagef("-format %s: advise writes text or json", *format)
	case *duration <= 0:
		return cli.Usagef("-duration must be > 0, got %v", *duration)
	}
	a, err := advise.FromResults(fs.Args(), advise.Options{Case: *caseName, Constraints: advise.Constraints{Duration: *duration}, LimitOf: limit.Limit})
	if err != nil {
		return err
	}
	if *format == "json" {
		err = a.JSON(stdout)
	} else {
		err = a.Text(stdout)
	}
	if err != nil {
		return cli.InfraError(err)
	}
	if a.Pick == nil {
		return cli.Silent(cli.Regression)
	}
	return nil
}
