package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/cli"
)

func cmdCases(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		args = []string{"list"}
	}
	const usage = "usage: gcjitter cases list | gcjitter cases show NAME|FILE"
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprintln(stderr, usage)
		return nil
	case "list", "show":
		// No flags, but one placed anywhere is named, as in every command.
		if done, err := cli.ParseFlags(noFlags("gcjitter cases "+args[0], usage, stderr), args[1:]); done {
			return err
		}
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "usage: gcjitter cases list")
			return cli.Silent(cli.Usage)
		}
		all, err := cases.Builtin()
		if err != nil {
			return cli.InfraError(err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSUITES\tMODEL\tVARIANTS\tRUNS x STEPS\tSTORY")
		for _, c := range all {
			var vs []string
			for _, v := range c.Variants {
				vs = append(vs, v.Name)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d x %d\t%s\n", c.Name, strings.Join(c.Suites, ","), c.Workload.Model,
				strings.Join(vs, " "), c.Runs, c.Steps, c.Story())
		}
		return tw.Flush()
	case "show":
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: gcjitter cases show NAME|FILE")
			return cli.Silent(cli.Usage)
		}
		c, err := cases.Load(args[1])
		if err != nil {
			return &cli.SubcommandError{Name: "gcjitter cases show", Err: cli.Usagef("%v", err)}
		}
		_, err = stdout.Write(c.Text)
		return err
	}
	return cli.Usagef("unknown subcommand %q (want list or show)", args[0])
}
