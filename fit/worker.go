package fit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/runner"
)

// Config is the worker configuration of knobs p: the fitted case's
// default variant (CaseYAML writes the same numbers).
func Config(p Params, steps int) bench.Config {
	cfg := bench.DefaultConfig()
	// Work 1, not 0: a case's zero size means "the worker's default".
	cfg.Model, cfg.Work, cfg.Policy = "none", 1, "default"
	cfg.Garbage, cfg.Cycles, cfg.Objects, cfg.GarbageEvery = "ring", p.Cycles, max(p.Objects, 1), p.Every
	if p.Cycles == 0 {
		cfg.Garbage = "none"
	}
	cfg.LongLived, cfg.Retain, cfg.LongLivedRefs, cfg.DeviceWaitMS = p.LongLived, p.Retain, p.Refs, p.WaitMS
	cfg.Steps, cfg.Warmup = steps, 5
	return cfg
}

// WorkerRunner runs trials as worker processes under python, their
// streams kept in dir.
func WorkerRunner(python, dir string) Runner {
	var n atomic.Int64
	return func(ctx context.Context, p Params, steps int) (Schedule, error) {
		script, err := bench.WriteWorker(bench.CacheDir())
		if err != nil {
			return Schedule{}, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Schedule{}, err
		}
		path := filepath.Join(dir, fmt.Sprintf("trial-%02d.jsonl", n.Add(1)))
		w := &runner.Worker{Python: python, Script: script, Args: Config(p, steps).Args(), RecordsPath: path,
			Env: append(os.Environ(), "PYTHONHASHSEED=0"), Startup: 2 * time.Minute, Silence: 2 * time.Minute}
		res, err := w.Run(ctx)
		if err != nil {
			return Schedule{}, err
		}
		if res.Failed() {
			return Schedule{}, fmt.Errorf("fit trial %s: %s", path, res.Reason())
		}
		return ScheduleOf(res.Stream), nil
	}
}

// CaseFrom parses a fitted case file (for -check), named path.
func CaseFrom(path string) (*cases.Case, error) {
	c, err := cases.Load(path)
	if err != nil {
		return nil, err
	}
	if c.Workload.Model != "none" || !strings.Contains(c.Description, "Fitted by gcjitter fit") {
		return c, fmt.Errorf("%s is not a case gcjitter fit wrote", path)
	}
	return c, nil
}

// ParamsOf reads a fitted case's knobs back.
func ParamsOf(c *cases.Case) Params {
	g := Garbage{Cycles: c.Garbage.Cycles, Objects: c.Garbage.Objects, Every: c.Garbage.Every}
	return Params{Garbage: g, Retain: c.Garbage.Retain, LongLived: c.Garbage.LongLived, Refs: c.Garbage.LongLivedRefs, WaitMS: c.Workload.DeviceWaitMS}
}
