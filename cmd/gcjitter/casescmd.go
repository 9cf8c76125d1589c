package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gcjitter/gcjitter/cases"
)

func cmdCases(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"list"}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprintln(stderr, "usage: gcjitter cases list | gcjitter cases show NAME|FILE")
		return exitOK
	case "list":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "usage: gcjitter cases list")
			return exitUsage
		}
		all, err := cases.Builtin()
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter cases: %v\n", err)
			return exitInfra
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSUITES\tMODEL\tVARIANTS\tRUNS x STEPS\tSTORY")
		for _, c := range all {
			var vs []string
			for _, v := range c.Variants {
				vs = append(vs, v.Name)
			}
			story := firstSentence(c.Description)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d x %d\t%s\n", c.Name, strings.Join(c.Suites, ","), c.Workload.Model,
				strings.Join(vs, " "), c.Runs, c.Steps, story)
		}
		tw.Flush()
		return exitOK
	case "show":
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: gcjitter cases show NAME|FILE")
			return exitUsage
		}
		c, err := cases.Load(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter cases show: %v\n", err)
			return exitUsage
		}
		stdout.Write(c.Text)
		return exitOK
	}
	fmt.Fprintf(stderr, "gcjitter cases: unknown subcommand %q (want list or show)\n", args[0])
	return exitUsage
}

// firstSentence is the description's first sentence on one line.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
