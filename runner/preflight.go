package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/cli"
)

// preflightTimeout bounds one pre-flight: an interpreter start and a torch
// import (with torch_npu's, which is slow on a cold cache).
const preflightTimeout = 3 * time.Minute

// PreflightError is what every run of a plan would have met first, found
// before any ran: Usage when the worker calls it bad input (no torch, no
// such device), else the same failure that would have failed every run in
// turn (a torch that cannot import, say).
type PreflightError struct {
	Usage bool
	Msg   string
}

func (e *PreflightError) Error() string { return e.Msg }

func (e *PreflightError) ExitCode() int {
	if e.Usage {
		return cli.Usage
	}
	return cli.Infra
}

// preflight runs the worker once with --preflight per distinct interpreter,
// device and environment of the plan: the arguments are validated, torch
// (and torch_npu) imported as a run would, the device resolved. A plan that
// cannot run is refused whole, before its first run.
func (s *Session) preflight(ctx context.Context, script string, plan []PlannedRun) error {
	seen := map[string]bool{}
	for _, p := range plan {
		python := s.Python
		if p.Variant.Python != "" {
			python = p.Variant.Python
		}
		cfg := p.Case.WorkerConfig(p.Variant)
		extra := map[string]string{}
		maps.Copy(extra, p.Case.Env)
		maps.Copy(extra, p.Variant.Env)
		key := python + "\x00" + cfg.Device + "\x00" + fmt.Sprint(bench.NeedsTorch(cfg.Model, cfg.Device, max(p.Case.Ranks, 1)))
		for _, k := range slices.Sorted(maps.Keys(extra)) {
			key += "\x00" + k + "=" + extra[k]
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		args := append([]string{script}, cfg.Args()...)
		args = append(args, "--preflight")
		pctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		cmd := exec.CommandContext(pctx, python, args...)
		cmd.Env = WorkerEnv(ParentEnv(), p.HashSeed, threadsFor(p.Case), p.Case.Env, p.Variant.Env, nil)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		err := cmd.Run()
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			continue
		}
		msg := strings.TrimSpace(LastLines(stderr.String(), 1))
		msg = strings.TrimPrefix(msg, "gcjitter-worker: ")
		var exit *exec.ExitError
		usage := errors.As(err, &exit) && exit.ExitCode() == bench.ExitUsage
		if msg == "" {
			msg = err.Error()
		}
		return &PreflightError{Usage: usage, Msg: fmt.Sprintf("%s (case %s, variant %s, %s): every run would fail; nothing was run", msg, p.Case.Name, p.Variant.Name, python)}
	}
	return nil
}
