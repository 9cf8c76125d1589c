package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory to add the traced run to (created if needed)")
	caseName := fs.String("case", "", "case name of the run (default: the script's name, with its directory's for main.py or when another command's runs hold that case in DIR)")
	steps := fs.Int("steps", 0, "steps to record after the warm-up (0: until the job ends); the job runs on untraced")
	warmup := fs.Int("warmup", 2, "leading steps recorded as warm-up (left out of the figures)")
	policy := fs.String("policy", "", "GC policy to run the job under, as the worker's: default, disabled, threshold:T0,T1,T2, freeze, manual:N[:gen], collect-every-step, empty-cache-every-step, joined by + (default: the job's own settings, variant \"traced\")")
	stepFn := fs.String("step-fn", "", "a step ends when this function returns, `module:qualname` (default: the optimizer's step; or the script calls gcjitter_step())")
	spikeRule := spikeFactorFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter trace -o DIR [-policy P] [flags] -- COMMAND [ARG ...]

Runs a training job unchanged (python train.py ..., or torchrun ...) with a
recorder injected at interpreter start, and adds what it recorded to the
results directory DIR as a run of variant "traced" (with -policy P, of
variant P: the job traced under several policies is one case whose
variants report, compare and advise set side by side): every step's time and
every collection in it, in the worker's record stream, one stream per rank
under torchrun or per process of a torch.multiprocessing job, all of them
one run. A step ends when the optimizer's step returns, or the
function -step-fn names, or where the script calls gcjitter_step().
-policy is applied in every Python process of the job at interpreter
start (disabled, threshold, the automatic collector off for manual), and
at the step ends as the worker applies it (manual:N's collection and
collect-every-step's inside the step that ends, freeze once the warm-up
steps are done).
The job's standard streams pass through; gcjitter's own lines go to
standard error. Several optimizers stepping in turn (a GAN) make one step
per cycle, ending at the last of them. Exit status: the job's; 2 when
-step-fn names what is not there, -policy is not one, or the case holds
another command's runs (before the job starts); 3 when the job succeeded but no step was recorded.
A first SIGINT is the job's to handle (gcjitter waits as long as it runs);
a second sends it SIGTERM, a third SIGKILL.

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
	if *policy != "" {
		if _, err := bench.ParsePolicy(*policy); err != nil {
			return cli.Usagef("%v", &runner.PolicyError{Err: err})
		}
	}
	rule, err := spikeRule()
	if err != nil {
		return err
	}
	command := fs.Args()
	name, err := runner.TraceCaseName(*out, *caseName, command)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	tr, err := runner.Trace(ctx, runner.TraceOptions{Out: *out, Case: name, Command: command, Steps: *steps, Warmup: *warmup,
		StepFn: *stepFn, Policy: *policy, Spike: rule, Tool: cli.Version(), Stdin: os.Stdin, Stdout: stdout, Stderr: stderr})
	var bad *runner.StepFnError
	var badPolicy *runner.PolicyError
	switch {
	case errors.As(err, &bad), errors.As(err, &badPolicy):
		return cli.Usagef("%v", err)
	case err != nil && tr == nil:
		return cli.Usagef("%v", err)
	}
	for _, p := range tr.Incomplete {
		fmt.Fprintf(stderr, "gcjitter trace: %s: the process did not finish recording (the job stopped?); kept, not added\n", p)
	}
	for _, c := range tr.Runs {
		who := fmt.Sprintf("%d ranks", c.Run.Ranks)
		if tr.Processes > 0 {
			who = fmt.Sprintf("%d processes", tr.Processes)
		}
		fmt.Fprintf(stderr, "gcjitter trace: %s: %s x %d steps, p50 %s, p99 %s, collections gen0/gen1/gen2 %d/%d/%d -> %s\n",
			c.Run.ID, who, c.Summary.Steps, stats.MS(c.Summary.P50), stats.MS(c.Summary.P99),
			c.Summary.Collections[0], c.Summary.Collections[1], c.Summary.Collections[2], *out)
	}
	for _, l := range tr.Account(*stepFn) {
		fmt.Fprintf(stderr, "gcjitter trace: %s\n", l)
	}
	switch {
	case err != nil:
		return cli.InfraError(err)
	case tr.ExitCode != 0:
		return cli.Silent(tr.ExitCode)
	case len(tr.Runs) == 0:
		return cli.Silent(cli.Infra)
	}
	return nil
}
