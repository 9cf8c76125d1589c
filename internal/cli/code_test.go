package cli_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
)

// TestCode pins DESIGN.md's exit codes for every error a domain package
// returns: Code finds them through ExitCode, so a type that loses its
// method (or a sentinel its code) falls to infrastructure, and this fails.
func TestCode(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, cli.OK},
		{"plain", errors.New("disk"), cli.Infra},
		{"usagef", cli.Usagef("bad"), cli.Usage},
		{"infra wraps usage", cli.InfraError(&results.InputError{Msgs: []string{"x"}}), cli.Infra},
		{"silent regression", cli.Silent(cli.Regression), cli.Regression},
		{"subcommand", &cli.SubcommandError{Name: "x", Err: &golden.UpdateError{Err: errors.New("x")}}, cli.Usage},
		{"canceled", fmt.Errorf("run: %w", context.Canceled), cli.Interrupted},
		{"interrupted", fmt.Errorf("run: %w", runner.ErrInterrupted), cli.Interrupted},
		{"results exist", fmt.Errorf("dir %w", runner.ErrResultsExist), cli.Usage},
		{"input", &results.InputError{Msgs: []string{"x"}}, cli.Usage},
		{"case file", &cases.Error{File: "c.yaml", Msg: "x"}, cli.Usage},
		{"case files", cases.Errors{{File: "c.yaml", Msg: "x"}}, cli.Usage},
		{"no such case", &cases.NotFoundError{Arg: "x"}, cli.Usage},
		{"baseline file", &golden.Error{File: "g.json", Msg: "x"}, cli.Usage},
		{"mismatch", &golden.MismatchError{Msg: "x"}, cli.Usage},
		{"update", &golden.UpdateError{Err: errors.New("x")}, cli.Usage},
		{"plan", &gate.PlanError{Msg: "x"}, cli.Usage},
		{"missing", &gate.MissingError{}, cli.Usage},
		{"locked", &runner.LockedError{Dir: "d"}, cli.Usage},
		{"launch", &runner.UsageError{Msg: "x"}, cli.Usage},
		{"preflight usage", &runner.PreflightError{Usage: true}, cli.Usage},
		{"preflight", &runner.PreflightError{}, cli.Infra},
		{"failed runs", &runner.FailedRunsError{Failed: 1, Total: 2}, cli.Infra},
	} {
		if got := cli.Code(c.err); got != c.want {
			t.Errorf("%s: Code(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
}
