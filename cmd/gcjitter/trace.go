package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory to add the traced run to (created if needed)")
	caseName := fs.String("case", "", "case name of the run (default: the script's name)")
	steps := fs.Int("steps", 0, "steps to record after the warm-up (0: until the job ends); the job runs on untraced")
	warmup := fs.Int("warmup", 2, "leading steps recorded as warm-up (left out of the figures)")
	stepFn := fs.String("step-fn", "", "a step ends when this function returns, `module:qualname` (default: the optimizer's step; or the script calls gcjitter_step())")
	spikeRule := spikeFactorFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter trace -o DIR [flags] -- COMMAND [ARG ...]

Runs a training job unchanged (python train.py ..., or torchrun ...) with a
recorder injected at interpreter start, and adds what it recorded to the
results directory DIR as a run of variant "traced": every step's time and
every collection in it, in the worker's record stream, one stream per rank
under torchrun. A step ends when the optimizer's step returns, or the
function -step-fn names, or where the script calls gcjitter_step().
The job's standard streams pass through; gcjitter's own lines go to
standard error. Exit status: the job's; 3 when the job succeeded but no
step was recorded.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseCommandFlags(fs, args); done {
		return err
	}
	switch {
	case *out == "" || fs.NArg() == 0:
		fs.Usage()
		return cli.Silent(cli.Usage)
	case *steps < 0 || *warmup < 0:
		return cli.Usagef("-steps and -warmup must be >= 0")
	case *stepFn != "" && !strings.Contains(*stepFn, ":"):
		return cli.Usagef("-step-fn %q: want module:qualname (e.g. train:train_step)", *stepFn)
	}
	rule, err := spikeRule()
	if err != nil {
		return err
	}
	command := fs.Args()
	if *caseName == "" {
		*caseName = traceCaseName(command)
	}
	tr, err := runner.Trace(ctx, runner.TraceOptions{Out: *out, Case: *caseName, Command: command, Steps: *steps, Warmup: *warmup,
		StepFn: *stepFn, Spike: rule, Tool: cli.Version(), Stdin: os.Stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		if tr == nil {
			return cli.Usagef("%v", err)
		}
		return cli.InfraError(err)
	}
	for _, p := range tr.Incomplete {
		fmt.Fprintf(stderr, "gcjitter trace: %s: the process did not finish recording (the job stopped?); kept, not added\n", p)
	}
	for _, c := range tr.Runs {
		fmt.Fprintf(stderr, "gcjitter trace: %s: %d ranks x %d steps, p50 %s, p99 %s, collections gen0/gen1/gen2 %d/%d/%d -> %s\n",
			c.Run.ID, c.Run.Ranks, c.Summary.Steps, stats.MS(c.Summary.P50), stats.MS(c.Summary.P99),
			c.Summary.Collections[0], c.Summary.Collections[1], c.Summary.Collections[2], *out)
	}
	if tr.ExitCode != 0 {
		return cli.Silent(tr.ExitCode)
	}
	if len(tr.Runs) == 0 {
		return cli.InfraError(fmt.Errorf("the job ended without a recorded step: no optimizer step was seen; name the step function with -step-fn module:qualname or call gcjitter_step() at the end of each step"))
	}
	return nil
}

// traceCaseName names a traced run by its script: train.py -> train.
func traceCaseName(command []string) string {
	for _, a := range command {
		if strings.HasSuffix(a, ".py") {
			return strings.TrimSuffix(filepath.Base(a), ".py")
		}
	}
	return "traced"
}
