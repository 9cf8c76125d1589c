package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/internal/cli"
)

// TestFlagsAfterArguments: every command reads a flag that follows its
// positional arguments (gcjitter fit DIR -o case.yaml), as Go tools and
// pflag users expect. An undefined flag placed last is the probe: a
// command that stopped at the first argument would never see it.
func TestFlagsAfterArguments(t *testing.T) {
	var lines [][]string
	for name := range commands {
		switch name {
		case "version":
			continue // takes no arguments
		case "trace":
			continue // the first argument starts the traced command: TestTraceFlagsEndAtCommand
		case "cases":
			lines = append(lines, []string{name, "list"}, []string{name, "show"})
		case "golden":
			for sub := range goldenCommands {
				lines = append(lines, []string{name, sub})
			}
		case "history":
			for sub := range historyCommands {
				lines = append(lines, []string{name, sub})
			}
		default:
			lines = append(lines, []string{name})
		}
	}
	slices.SortFunc(lines, func(a, b []string) int { return strings.Compare(strings.Join(a, " "), strings.Join(b, " ")) })
	for _, line := range lines {
		t.Run(strings.Join(line, "-"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(slices.Clone(line), "some-argument", "-no-such-flag")
			code := run(context.Background(), args, &stdout, &stderr)
			if code != cli.Usage || !strings.Contains(stderr.String(), "flag provided but not defined: -no-such-flag") {
				t.Errorf("gcjitter %s: exit %d, want %d naming the flag after the argument\nstderr:\n%s", strings.Join(args, " "), code, cli.Usage, stderr.String())
			}
		})
	}
}

// TestFlagsEndAtDoubleDash: after "--" an argument that looks like a flag
// is an argument.
func TestFlagsEndAtDoubleDash(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"compare", "--", "-not-a-flag", "-x"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "flag provided but not defined") || !strings.Contains(stderr.String(), "-not-a-flag") || code != cli.Usage {
		t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
	}
}

// TestTraceFlagsEndAtCommand: trace's flags end where the traced command
// begins: the command's own flags are its own, not gcjitter's.
func TestTraceFlagsEndAtCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"trace", "-o", t.TempDir(), "-no-such-flag"}, &stdout, &stderr)
	if code != cli.Usage || !strings.Contains(stderr.String(), "flag provided but not defined: -no-such-flag") {
		t.Fatalf("a bad flag before the command: exit %d\n%s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	run(context.Background(), []string{"trace", "-o", t.TempDir(), "/nonexistent/train", "-no-such-flag"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "flag provided but not defined") {
		t.Errorf("the traced command's flag was parsed as gcjitter's:\n%s", stderr.String())
	}
}
