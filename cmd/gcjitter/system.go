package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
)

func cmdSystem(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter system", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("golden", "golden", "baselines directory")
	hc := fs.String("host-class", "", "host class to check against (default: $GCJITTER_HOST_CLASS, or derived from this host)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter system [-golden DIR] [-host-class C]

Prints what this host is and what on it moves step times (frequency
governor, turbo, isolated CPUs, load, free disk), with advice, and how it
differs from the host the host class's baselines were made on. Changes
nothing; exit 0.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("system takes no arguments, got %q", fs.Args())
	}
	h := runner.ProbeHost(ctx)
	class, err := golden.HostClass(*hc, h)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	check := runner.CheckSystem(h, ".")
	// A second's watch says what keeps the host busy now (the load
	// average is a minute's, and counts waiting, not what runs).
	const watch = time.Second
	if other, busiest, ok := runner.OtherLoad(ctx, watch); ok {
		check.AddLoad(runner.SampledLoad{Over: watch, OtherCPUs: other, Busiest: busiest})
	}
	check.Class = class
	check.Speed = &results.Calibration{}
	for range 3 {
		check.Speed.Points = append(check.Speed.Points, runner.Calibrate())
	}
	var speedOrder []string
	speedCases := map[string][]string{}
	for _, g := range golden.ReadClass(*dir, class) {
		for _, d := range g.HostDiffers(h) {
			check.Differs = append(check.Differs, g.Case+": "+d)
		}
		check.Baselines++
		sp := results.CompareSpeed(g.Provenance.Calibration, check.Speed).String()
		if speedCases[sp] == nil {
			speedOrder = append(speedOrder, sp)
		}
		speedCases[sp] = append(speedCases[sp], g.Case)
	}
	for _, sp := range speedOrder {
		check.Speeds = append(check.Speeds, strings.Join(speedCases[sp], ", ")+": "+sp)
	}
	check.Classes = golden.Classes(*dir)
	check.Write(stdout)
	return nil
}
