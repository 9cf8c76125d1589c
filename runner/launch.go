package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
)

// Launch says how a measuring command runs its cases.
type Launch struct {
	Out       string // results directory; "" makes gcjitter-results/<label>-<time>
	Label     string // the suite's name, for a default directory of several cases
	Python    string // the -python flag
	Seed      int64  // the interleaved order's seed
	HostClass string
	Tool      string
	Command   []string
	Progress  Progress
	// Census: after the timed runs, one census run per single-rank
	// variant (Session.Census), for the gate's exact heap layer.
	Census bool
	// Cold starts every run in a fresh interpreter (Session.Cold).
	Cold bool
	// Log gets what the user must read: where results go, host warnings,
	// failed runs and what to do about them ("gcjitter: ..." lines).
	Log io.Writer
}

// Errors of a launch that carry exit codes: usage (bad input) and
// interrupted; the rest are infrastructure failures.
var (
	// ErrInterrupted: ctx ended; completed runs are kept.
	ErrInterrupted error = &cli.Error{Code: cli.Interrupted, Err: errors.New("interrupted")}
)

// UsageError is a launch that cannot start as asked (bad input).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }
func (e *UsageError) ExitCode() int { return cli.Usage }

// FailedRunsError says that some runs failed; the others are kept. Its
// details were logged run by run.
type FailedRunsError struct{ Failed, Total int }

func (e *FailedRunsError) Error() string {
	return fmt.Sprintf("%d of %d runs failed", e.Failed, e.Total)
}

// Run picks the interpreter, plans the interleaved runs and executes them
// into the results directory, which it returns with the manifest (nil when
// nothing could start). Every failure has been logged when it returns.
func (l *Launch) Run(ctx context.Context, cs []*cases.Case) (*results.Manifest, string, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(l.Log, "gcjitter: "+format+"\n", args...) }
	needTorch, casePython := false, ""
	for _, c := range cs {
		needTorch = needTorch || c.NeedsTorch()
		if c.Python != "" {
			if casePython != "" && casePython != c.Python {
				err := &UsageError{fmt.Sprintf("cases name different interpreters (%s, %s); run them separately or pass -python", casePython, c.Python)}
				logf("%v", err)
				return nil, "", err
			}
			casePython = c.Python
		}
	}
	py, from, err := ChoosePython(ctx, l.Python, casePython, needTorch)
	if ctx.Err() != nil {
		logf("interrupted before any run started")
		return nil, "", ErrInterrupted
	}
	if err != nil {
		logf("%v", err)
		return nil, "", err
	}
	dir := l.Out
	if dir == "" {
		label := l.Label
		if len(cs) == 1 {
			label = cs[0].Name
		}
		dir = filepath.Join("gcjitter-results", label+"-"+time.Now().Format("20060102-150405"))
	}
	if free, need := FreeBytes(dir), PlannedBytes(cs); free >= 0 && free < need {
		err := &UsageError{fmt.Sprintf("not enough free disk for the record streams: the planned runs write up to %s, %s is free where %s goes; free space or pass another -o; nothing was run",
			bytesText(need), bytesText(free), dir)}
		logf("%v", err)
		return nil, "", err
	}
	plan := Plan(cs, l.Seed)
	s := &Session{Dir: dir, Python: py, PythonFrom: from, Tool: l.Tool, Command: l.Command, Seed: l.Seed,
		Progress: l.Progress, HostClass: l.HostClass, Census: l.Census, Cold: l.Cold, Log: l.Log}
	if s.HostClass == "" {
		s.HostClass = os.Getenv(results.HostClassEnv)
	}
	logf("%d runs of %d case(s) with %s; results in %s", len(plan), len(cs), py, dir)
	m, err := s.Execute(ctx, cs, plan)
	return m, dir, l.finish(m, dir, err, 0)
}

// More runs rounds[name] more rounds of each named case into the results
// directory dir that Run made (adaptive rounds), appending to m; cs are
// the cases Run was given. Its errors are Run's.
func (l *Launch) More(ctx context.Context, m *results.Manifest, dir string, cs []*cases.Case, rounds map[string]int) error {
	plan := PlanMore(cs, l.Seed, rounds)
	if len(plan) == 0 {
		return nil
	}
	s := &Session{Dir: dir, Python: m.Python, PythonFrom: m.PythonFrom, Tool: l.Tool, Command: l.Command, Seed: l.Seed,
		Progress: l.Progress, HostClass: m.HostClass, Cold: l.Cold, Log: l.Log}
	first := len(m.Runs)
	fmt.Fprintf(l.Log, "gcjitter: %d more runs (adaptive rounds)\n", len(plan))
	return l.finish(m, dir, s.Extend(ctx, m, cs, plan), first)
}

// finish logs what the runs of m from first on came to and returns the
// launch's error for them.
func (l *Launch) finish(m *results.Manifest, dir string, err error, first int) error {
	logf := func(format string, args ...any) { fmt.Fprintf(l.Log, "gcjitter: "+format+"\n", args...) }
	if m != nil && first == 0 {
		for _, w := range m.Host.Warnings {
			logf("warning: %s", w)
		}
	}
	if err != nil {
		logf("%v", err)
		var le *LockedError
		if errors.As(err, &le) || errors.Is(err, ErrResultsExist) {
			return err
		}
		if m != nil && slices.ContainsFunc(m.Runs, func(r *results.Run) bool { return r.Status == results.StatusOK }) {
			logf("completed runs are kept in %s; fix the cause (free space, permissions) and run again with another -o", dir)
		}
		return err
	}
	failed, firstFailed := 0, (*results.Run)(nil)
	for _, r := range m.Runs[first:] {
		if r.Status != results.StatusFailed {
			continue
		}
		failed++
		if firstFailed == nil {
			firstFailed = r
		}
		if m.StoppedBy != "" {
			continue // one cause: named once, below
		}
		logf("run %s failed: %s (records: %s, stderr: %s)", r.ID, r.Reason, filepath.Join(dir, r.Records), filepath.Join(dir, r.Stderr))
		if r.StderrTail != "" {
			fmt.Fprintf(l.Log, "  %s\n", strings.ReplaceAll(LastLines(r.StderrTail, 5), "\n", "\n  "))
		}
	}
	switch {
	case m.Interrupted:
		logf("interrupted; completed runs are kept in %s", dir)
		return ErrInterrupted
	case m.StoppedBy != "":
		logf("stopped: %s; the other %d runs were not started, as every one would likely fail the same way (the first's stderr: %s). Fix the cause and run again",
			m.StoppedBy, len(m.Runs)-first-failed, filepath.Join(dir, firstFailed.Stderr))
		if firstFailed.StderrTail != "" {
			fmt.Fprintf(l.Log, "  %s\n", strings.ReplaceAll(LastLines(firstFailed.StderrTail, 5), "\n", "\n  "))
		}
		return &FailedRunsError{failed, len(m.Runs) - first}
	case failed > 0:
		logf("%d of %d runs failed; the others are kept in %s", failed, len(m.Runs)-first, dir)
		logf("compare and report read the runs that completed; after fixing the cause, run the failed variants again with -filter '%s'", failedVariants(m))
		return &FailedRunsError{failed, len(m.Runs) - first}
	}
	return nil
}

// failedVariants is a -filter expression matching the variants with a
// failed run, so the user can rerun just those.
func failedVariants(m *results.Manifest) string {
	var names []string
	for _, r := range m.Runs {
		if r.Status == results.StatusFailed && !slices.Contains(names, r.Variant) {
			names = append(names, r.Variant)
		}
	}
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(names, "|") + ")$"
}
