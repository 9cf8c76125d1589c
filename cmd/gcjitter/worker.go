package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/runner"
)

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := bench.DefaultConfig()
	cfg.RegisterFlags(fs)
	python := fs.String("python", "", "interpreter (default: $GCJITTER_PYTHON, python3 on PATH, /usr/bin/python3; the first that imports torch)")
	out := fs.String("o", "gcjitter-records.jsonl", "record stream output file")
	hashSeed := fs.String("hash-seed", "0", "PYTHONHASHSEED for the worker")
	printScript := fs.Bool("script", false, "print the embedded worker program (one zipapp: python FILE runs it) and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: gcjitter worker [flags]\n\nRuns one worker process, writes its record stream to -o and prints a summary.\n\n")
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	case *printScript:
		_, err := stdout.Write(bench.WorkerSource)
		return err
	}
	if _, err := strconv.ParseUint(*hashSeed, 10, 32); err != nil {
		return cli.Usagef("-hash-seed must be an integer in 0..4294967295, got %q", *hashSeed)
	}
	py, err := runner.FindPython(ctx, *python, bench.NeedsTorch(cfg.Model, cfg.Device, 1))
	if err != nil {
		return cli.InfraError(err)
	}
	script, err := bench.WriteWorker(bench.CacheDir())
	if err != nil {
		return cli.InfraError(err)
	}
	w := &runner.Worker{Python: py, Script: script, Args: cfg.Args(), RecordsPath: *out,
		Env:    append(os.Environ(), "PYTHONHASHSEED="+*hashSeed),
		Stdout: stderr, // the workload's own output must not mix with our summary
	}
	res, err := w.Run(ctx)
	switch {
	case ctx.Err() != nil:
		return &cli.Error{Code: cli.Interrupted, Err: fmt.Errorf("interrupted; records so far are in %s", *out)}
	case err != nil:
		return cli.InfraError(err)
	case res.Failed() && res.Stream.Error != nil && res.Stream.Error.Kind == "usage":
		return cli.Usagef("%s", res.Stream.Error.Message)
	case res.Failed():
		msg := fmt.Sprintf("%s; records so far are in %s", res.Reason(), *out)
		if t := strings.TrimSpace(res.StderrTail); t != "" {
			msg += fmt.Sprintf("\nworker stderr (last lines):\n%s", runner.LastLines(t, 10))
		}
		return cli.InfraError(fmt.Errorf("%s", msg))
	}
	report.Worker(stdout, *out, res.Stream)
	return nil
}
