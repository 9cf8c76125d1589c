// Command gcjitter benchmarks garbage-collection jitter in PyTorch training.
//
// Usage: gcjitter <command> [flags]; the commands are in usage below, their
// flags in gcjitter <command> -h and the README.
//
// Exit codes: 0 success; 1 regression found; 2 bad usage or bad input;
// 3 infrastructure failure (worker crashed, hung, interpreter missing), with
// everything already measured kept.
//
// Package main only wires: flags to the packages that hold the rules
// (cases, runner, gate, golden, results, report), their errors to exit
// codes (internal/cli.Code, the one place).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gcjitter/gcjitter/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: gcjitter <command> [flags]

commands:
  run        run cases (default: the quick suite) and write a results directory
  compare    compare two results (directories or benchfmt files); exit 1 on a regression
  gate       run and check against golden/<host-class>/ baselines; exit 1 on a regression
  golden     manage baselines: golden update [case ...] | show CASE | diff OLD NEW
  report     render results or a comparison: text, markdown, json, junit, html
  collect    add a run started by torchrun or a cluster launcher (per-rank streams) to a results directory
  import     add profiler traces (torch.profiler, torch_npu trace_view.json) to a results directory
  fit        a case whose default variant reproduces a traced run's GC schedule (fit -o case.yaml -check DIR)
  advise     the GC policy to set, from results with several: calmest tail within median and memory (advise -duration 8h DIR)
  trace      run your own training script unchanged, recording its steps and collections (trace -o DIR -- python train.py)
  ab         interleaved A/B of two environments (-a SPEC -b SPEC case ...); exit 1 when B regresses
  cases      list the built-in cases, or show one (cases list | cases show NAME)
  worker     run one worker process and summarise its records
  history    nights remembered: history add DIR... | show | detect | report (SQLite file or PostgreSQL)
  scale      predicted step times at N ranks from measured per-rank GC schedules, validated on the ranks measured here
  drift      how far each metric moves between sessions of this host (drift DIR DIR...): the gate's session drift, measured
  system     what on this host moves step times, with advice, against the baselines' host (changes nothing)
  version    print the version

Run 'gcjitter <command> -h' for a command's flags.
`

// A command runs with its arguments and returns an error that exitCode
// turns into the exit status; nil is success.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

var commands = map[string]command{
	"run": cmdRun, "cases": cmdCases, "compare": cmdCompare, "gate": cmdGate, "golden": cmdGolden,
	"ab": cmdAB, "report": cmdReport, "collect": cmdCollect, "trace": cmdTrace, "import": cmdImport, "fit": cmdFit, "advise": cmdAdvise, "worker": cmdWorker, "system": cmdSystem, "history": cmdHistory, "scale": cmdScale, "drift": cmdDrift,
	"version": func(_ context.Context, _ []string, stdout, _ io.Writer) error {
		fmt.Fprintln(stdout, "gcjitter", cli.Version())
		return nil
	},
}

// run is main without the process: tests call it with buffers.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.Usage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return cli.OK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gcjitter: unknown command %q\n%s", args[0], usage)
		return cli.Usage
	}
	return cli.Report(stderr, "gcjitter "+args[0], cmd(ctx, args[1:], stdout, stderr))
}
