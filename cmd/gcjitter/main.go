// Command gcjitter benchmarks garbage-collection jitter in PyTorch training.
//
// Usage:
//
//	gcjitter run [flags] [case|file ...]   run cases, write a results directory
//	gcjitter compare [flags] OLD NEW        compare two results, tail-aware
//	gcjitter gate [flags] [case ...]        run and check against baselines
//	gcjitter golden update|show|diff ...    manage baselines
//	gcjitter ab -a SPEC -b SPEC case ...    A/B of two environments
//	gcjitter report [-format F] RESULTS [NEW] render a report
//	gcjitter cases list|show NAME          the built-in suite
//	gcjitter worker [flags]      run one worker process and summarise its records
//	gcjitter worker -script      print the embedded worker program
//	gcjitter version
//
// Exit codes: 0 success; 1 regression found; 2 bad usage or bad input;
// 3 infrastructure failure (worker crashed, hung, interpreter missing), with
// everything already measured kept.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes (contract, see DESIGN.md).
const (
	exitOK          = 0
	exitRegression  = 1
	exitUsage       = 2
	exitInfra       = 3
	exitInterrupted = 130
)

const usage = `usage: gcjitter <command> [flags]

commands:
  run        run cases (default: the quick suite) and write a results directory
  compare    compare two results (directories or benchfmt files); exit 1 on a regression
  gate       run and check against golden/<host-class>/ baselines; exit 1 on a regression
  golden     manage baselines: golden update [case ...] | show CASE | diff OLD NEW
  report     render results or a comparison: text, markdown, json, junit, html
  collect    add a run started by torchrun or a cluster launcher (per-rank streams) to a results directory
  ab         interleaved A/B of two environments (-a SPEC -b SPEC case ...); exit 1 when B regresses
  cases      list the built-in cases, or show one (cases list | cases show NAME)
  worker     run one worker process and summarise its records
  version    print the version

Run 'gcjitter <command> -h' for a command's flags.
`

// run is main without the process: tests call it with buffers.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "cases":
		return cmdCases(args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(args[1:], stdout, stderr)
	case "gate":
		return cmdGate(ctx, args[1:], stdout, stderr)
	case "golden":
		return cmdGolden(ctx, args[1:], stdout, stderr)
	case "ab":
		return cmdAB(ctx, args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "collect":
		return cmdCollect(args[1:], stdout, stderr)
	case "worker":
		return cmdWorker(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "gcjitter", version())
		return exitOK
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "gcjitter: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

// parseFlags parses a command's flags; when ok is false the command
// returns code at once (0 after -h, 2 after a bad flag, which the flag
// package has already reported).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}
