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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Progress hears about runs as they go. Implementations must be cheap:
// Step is called for every step record.
type Progress interface {
	Begin(runs []*results.Run) // every planned run, before the first starts
	RunStart(n, total int, r *results.Run)
	Step(r *results.Run, done, total int)
	RunEnd(n, total int, r *results.Run)
}

// Session executes a plan into a results directory.
type Session struct {
	Dir        string
	Python     string
	PythonFrom string
	Tool       string   // gcjitter version, for provenance
	Command    []string // the command line, for provenance
	Seed       int64    // the shuffle seed the plan was made with
	HostClass  string   // recorded with the results
	Progress   Progress // nil: silent
	Grace      time.Duration
	// Census runs each single-rank variant once more after the timed
	// runs, counting the objects every collection walks
	// (results.Manifest.Census).
	Census bool
	// Cold starts every run in a fresh interpreter; otherwise single-rank
	// runs fork from a warm server (Warm) where the platform allows.
	Cold bool
	Log  io.Writer // what the user must read (a warm server that failed); nil: nothing
	warm *Warm
	// stopPrestart ends the start of the first run's server begun beside
	// the preflight (prestart).
	stopPrestart func()
}

// ErrResultsExist is returned when the results directory already holds a
// run: bad input (pass a new -o).
var ErrResultsExist error = &cli.Error{Code: cli.Usage, Err: errors.New("already holds results")}

// LockedError is returned when another gcjitter is writing the directory.
type LockedError struct{ Dir string }

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is being written by another gcjitter process; wait for it or pass another -o", e.Dir)
}

func (e *LockedError) ExitCode() int { return cli.Usage }

// Execute runs the plan, writing every record, the manifest and the benchfmt
// file as it goes. A run that fails is recorded as failed and the others go
// on; when ctx ends the run in progress is stopped, what it measured kept,
// and the rest are marked skipped. The error is for the results directory
// itself (cannot create, lock or write it); the manifest is returned either
// way when it exists.
func (s *Session) Execute(ctx context.Context, cs []*cases.Case, plan []PlannedRun) (*results.Manifest, error) {
	_, statErr := os.Stat(s.Dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	unlock, err := lockDir(s.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(s.Dir, results.ManifestFile)); err == nil {
		return nil, fmt.Errorf("results directory %s %w; pass a new -o", s.Dir, ErrResultsExist)
	}
	script, err := bench.WriteWorker(filepath.Join(s.Dir, "worker"))
	if err != nil {
		return nil, err
	}
	var prestarted <-chan struct{}
	if !s.Cold && WarmSupported() {
		s.warm = NewWarm(s.Log)
		s.stopPrestart, prestarted = s.prestart(ctx, script, plan)
	}
	err = s.preflight(ctx, script, plan)
	if err == nil && prestarted != nil {
		// The host's load and first speed point are read with no import
		// beside them, as before the prestart: the first run would wait
		// for this server anyway.
		select {
		case <-prestarted:
		case <-ctx.Done():
		}
	}
	if err != nil || ctx.Err() != nil {
		s.closeWarm()
		if created {
			// Nothing ran: leave no results directory behind.
			os.RemoveAll(s.Dir)
		}
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	m := &results.Manifest{
		Schema:      results.ManifestSchema,
		Tool:        s.Tool,
		Command:     s.Command,
		Started:     time.Now().UTC(),
		Python:      s.Python,
		PythonFrom:  s.PythonFrom,
		Host:        ProbeHost(ctx),
		Worker:      filepath.Join("worker", filepath.Base(script)),
		ShuffleSeed: s.Seed,
		HostClass:   s.HostClass,
	}
	for _, c := range cs {
		rc := results.Case{Name: c.Name, Source: c.Source, Text: string(c.Text), Steps: c.Steps,
			Warmup: c.Warmup, Runs: c.Runs, Spike: c.Gate.SpikeRule(), Alpha: c.Gate.Alpha, Primary: c.Gate.Primary}
		for k, v := range c.Gate.Floors {
			if rc.Floors == nil {
				rc.Floors = map[string]float64{}
			}
			rc.Floors[k] = float64(v)
		}
		for _, v := range c.Variants {
			rc.Variants = append(rc.Variants, results.Variant{Name: v.Name, Policy: v.Policy})
		}
		m.Cases = append(m.Cases, rc)
	}
	return m, s.execute(ctx, m, script, plan)
}

// Extend runs more of the cases kept in m, into the same directory: the
// rounds of runner.PlanMore, appended to the manifest, the cases' run
// counts raised to match (adaptive rounds). cs are the cases m was made
// from; their Runs are raised too.
func (s *Session) Extend(ctx context.Context, m *results.Manifest, cs []*cases.Case, plan []PlannedRun) error {
	unlock, err := lockDir(s.Dir)
	if err != nil {
		return err
	}
	defer unlock()
	for _, p := range plan {
		for i := range m.Cases {
			if m.Cases[i].Name == p.Case.Name {
				m.Cases[i].Runs = max(m.Cases[i].Runs, p.Index+1)
			}
		}
	}
	for _, c := range cs {
		for _, rc := range m.Cases {
			if rc.Name == c.Name {
				c.Runs = rc.Runs
			}
		}
	}
	m.Finished = nil
	return s.execute(ctx, m, filepath.Join(s.Dir, m.Worker), plan)
}

// execute appends the plan's runs to the manifest and runs them in order.
func (s *Session) execute(ctx context.Context, m *results.Manifest, script string, plan []PlannedRun) error {
	if s.warm == nil && !s.Cold && WarmSupported() {
		s.warm = NewWarm(s.Log) // Extend's: Execute made one before its preflight
	}
	defer s.closeWarm()
	first := len(m.Runs)
	for i, p := range plan {
		cfg := p.Case.WorkerConfig(p.Variant)
		m.Runs = append(m.Runs, &results.Run{
			ID: p.ID, Case: p.Case.Name, Variant: p.Variant.Name, Policy: p.Variant.Policy,
			Index: p.Index, Order: first + i, Seed: p.Case.Seed, HashSeed: p.HashSeed, Args: cfg.Args(),
			Records: p.RecordsPath(), Stderr: p.StderrPath(), Status: results.StatusPending, Ranks: max(p.Case.Ranks, 1),
			Side: p.Variant.Side, Of: p.Variant.Of,
		})
	}
	if err := s.save(m); err != nil {
		return err
	}
	if s.Progress != nil {
		s.Progress.Begin(m.Runs[first:])
	}

	var repeated failFast
	var lastCal time.Time
	calibrate := func() {
		if m.Calibration == nil {
			m.Calibration = &results.Calibration{}
		}
		m.Calibration.Points = append(m.Calibration.Points, Calibrate())
		lastCal = time.Now()
	}
	for i, p := range plan {
		r := m.Runs[first+i]
		switch {
		case ctx.Err() != nil:
			r.Status, r.Reason = results.StatusSkipped, "not started: interrupted"
			continue
		case m.StoppedBy != "":
			r.Status, r.Reason = results.StatusSkipped, "not started: "+m.StoppedBy
			continue
		}
		if i == 0 || (newRound(plan[i-1], p) && time.Since(lastCal) >= CalibrateEvery) {
			calibrate()
		}
		if err := s.runOne(ctx, script, p, r, i, len(plan)); err != nil {
			stopOn(ctx, m, r, err)
			// Best effort: the error that stopped the plan may stop this
			// write too (a full disk), and the last saved manifest stands.
			s.save(m)
			return err
		}
		if cause := repeated.add(r); cause != "" {
			m.StoppedBy = fmt.Sprintf("the first %d runs failed the same way (%s)", FailFastRuns, cause)
		}
		if err := s.save(m); err != nil {
			return err
		}
	}
	if ctx.Err() == nil && m.StoppedBy == "" && len(plan) > 0 {
		calibrate()
		if s.Census {
			if err := s.census(ctx, m, script, plan); err != nil {
				// The timed runs and the last speed point stand: saved
				// finished, with the census run that met it failed.
				now := time.Now().UTC()
				m.Finished = &now
				s.save(m)
				return err
			}
		}
	}
	m.Interrupted = ctx.Err() != nil
	now := time.Now().UTC()
	m.Finished = &now
	return s.save(m)
}

// stopOn records, in m, a plan stopped by err at run r (the results
// directory or the host failed, not a worker): r failed with err as its
// reason (unless it had ended: a multi-rank run whose global series could
// not be written), the runs after it not started, so that the saved
// manifest says which run met it and no run is left "pending" as if
// still to come.
func stopOn(ctx context.Context, m *results.Manifest, r *results.Run, err error) {
	m.StoppedBy = fmt.Sprintf("run %s failed outside its worker (%v)", r.ID, err)
	switch r.Status {
	case results.StatusPending:
		r.Status, r.Reason = results.StatusFailed, err.Error()
	case results.StatusOK:
		m.StoppedBy = fmt.Sprintf("the results directory failed after run %s (%v)", r.ID, err)
	}
	why := "not started: " + m.StoppedBy
	if ctx.Err() != nil {
		m.Interrupted, why = true, "not started: interrupted"
	}
	for _, x := range m.Runs {
		if x.Status == results.StatusPending {
			x.Status, x.Reason = results.StatusSkipped, why
		}
	}
	now := time.Now().UTC()
	m.Finished = &now
}

// census makes the census run of every single-rank variant of the plan
// that completed a run and has none yet: the seeds of its first run, the
// same steps, with --census. The schedule is deterministic, so the census
// sees the collections the timed runs had; its record stream goes beside
// theirs.
func (s *Session) census(ctx context.Context, m *results.Manifest, script string, plan []PlannedRun) error {
	progress, warm := s.Progress, s.warm
	s.Progress = nil // not a timed run: no place in the progress of the plan
	// Census runs start cold, whatever the timed runs did: the census is
	// compared exactly with baselines made either way, and a warm child's
	// heap is proved the cold one's for the built-in cases only
	// (docs/worker.md).
	s.warm = nil
	defer func() { s.Progress, s.warm = progress, warm }()
	for _, p := range plan {
		c := p.Case
		if c.Ranks > 1 || c.Launcher != "" || p.Index != 0 || ctx.Err() != nil {
			continue
		}
		id := p.ID + "/census"
		if slices.ContainsFunc(m.Census, func(r *results.Run) bool { return r.ID == id }) {
			continue
		}
		cfg := c.WorkerConfig(p.Variant)
		cfg.Census = true
		records := filepath.Join(filepath.Dir(p.RecordsPath()), "census.jsonl")
		r := &results.Run{ID: id, Case: c.Name, Variant: p.Variant.Name, Policy: p.Variant.Policy,
			Seed: c.Seed, HashSeed: p.HashSeed, Args: cfg.Args(), Records: records,
			Stderr: strings.TrimSuffix(records, ".jsonl") + ".stderr", Status: results.StatusPending, Ranks: 1}
		if err := s.runOne(ctx, script, p, r, 0, 0); err != nil {
			if r.Status == results.StatusPending {
				r.Status, r.Reason = results.StatusFailed, err.Error()
			}
			m.Census = append(m.Census, r)
			return err
		}
		m.Census = append(m.Census, r)
	}
	return s.save(m)
}

// CalibrateEvery is the least time between two measurements of the host's
// speed at round boundaries (besides the one before the first run and the
// one after the last): a measurement takes about 0.2 s, so the suite's
// many short rounds pay at most a few percent for it.
const CalibrateEvery = 10 * time.Second

// newRound says whether run b starts a round (or a case) after run a.
func newRound(a, b PlannedRun) bool { return a.Case != b.Case || a.Index != b.Index }

// FailFastRuns is how many runs failing the same way, before any run of
// the plan completed, stop it: the cause is the host's or the
// environment's (a device that is gone, a library that crashes), and every
// other run would meet it in turn.
const FailFastRuns = 3

// failFast watches the first runs of a plan for one repeated cause.
type failFast struct {
	cause string
	same  int
	off   bool // a run completed, or two causes differed
}

// add takes a run that ended and returns the cause when FailFastRuns runs
// in a row, from the first, failed with it.
func (f *failFast) add(r *results.Run) string {
	if f.off {
		return ""
	}
	if r.Status != results.StatusFailed {
		f.off = true
		return ""
	}
	cause := failureCause(r)
	if f.same > 0 && cause != f.cause {
		f.off = true
		return ""
	}
	f.cause, f.same = cause, f.same+1
	if f.same >= FailFastRuns {
		f.off = true
		return r.Reason
	}
	return ""
}

// failureCause is a failed run's reason without its numbers (steps done,
// addresses, times), so the same fault in two runs compares equal: each
// number (a run of digits, a hex address) becomes one #, whatever its
// length: a slower host dies after 93 steps where a faster one got to 129.
func failureCause(r *results.Run) string {
	return digitRuns.ReplaceAllString(r.Reason+"\n"+LastLines(r.StderrTail, 1), "#")
}

var digitRuns = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+`)

func (s *Session) runOne(ctx context.Context, script string, p PlannedRun, r *results.Run, n, total int) error {
	c := p.Case
	if err := os.MkdirAll(filepath.Join(s.Dir, filepath.Dir(r.Records)), 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	ranks := max(c.Ranks, 1)
	port := 0
	if ranks > 1 {
		var err error
		if port, err = FreePort(); err != nil {
			return err
		}
	}
	python := s.pythonFor(p)
	steps := c.Steps + c.Warmup
	var progress func(bench.Record) // rank 0's steps
	if s.Progress != nil {
		progress = func(rec bench.Record) {
			if st, ok := rec.(*bench.Step); ok {
				s.Progress.Step(r, st.Index+1, steps)
			}
		}
	}
	var runRanks func(context.Context) ([]*Result, error)
	if c.Launcher == "torchrun" {
		g, stderr, err := s.launched(c, r, python, script, port, p.HashSeed, p.Variant.Env, progress)
		if err != nil {
			return err
		}
		defer stderr.Close()
		runRanks = g.Run
	} else {
		workers := make([]*Worker, ranks)
		var group *WarmGroup
		if ranks > 1 && s.warm != nil {
			group = NewWarmGroup(ranks)
		}
		for k := range ranks {
			stderr, err := os.Create(filepath.Join(s.Dir, r.RankStderr(k)))
			if err != nil {
				return fmt.Errorf("results directory: %w", err)
			}
			defer stderr.Close()
			var rankEnv map[string]string
			if ranks > 1 {
				rankEnv = GroupEnv(k, ranks, port)
			}
			workers[k] = s.worker(p, script, r.Args, rankEnv)
			workers[k].RecordsPath = filepath.Join(s.Dir, r.RankRecords(k))
			workers[k].Stdout, workers[k].Stderr, workers[k].Group = stderr, stderr, group
		}
		workers[0].OnRecord = progress
		runRanks = func(ctx context.Context) ([]*Result, error) { return RunGroup(ctx, workers) }
	}
	if s.Progress != nil {
		s.Progress.RunStart(n, total, r)
	}
	start := time.Now()
	r.Started = &start
	before, sampled := sampleCPU()
	res, err := runRanks(ctx)
	r.Seconds = time.Since(start).Seconds()
	if after, ok := sampleCPU(); sampled && ok {
		var unreaped time.Duration
		for _, x := range res {
			if x != nil {
				unreaped += x.UnreapedCPU
			}
		}
		other := otherCPUs(before, after, unreaped)
		r.OtherCPUs = &other
	}
	if len(res) == 0 || res[0] == nil { // could not start or write at all
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Interrupted while its warm server started: the session
			// ends as any interrupted one, its manifest saved.
			r.Status, r.Reason = results.StatusInterrupted, "interrupted before its first step"
			return nil
		}
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
			r.Status, r.Reason = results.StatusFailed, err.Error()
			return nil
		}
		return err
	}
	r.Steps = len(res[0].Stream.Steps)
	r.ExitCode = res[0].ExitCode
	if m := res[0].Stream.Meta; m != nil {
		r.Meta = results.RunMetaOf(m)
		// A warm run has its server's hash seed (Warm), not the plan's.
		if seed, err := strconv.ParseUint(m.HashSeed, 10, 32); err == nil && m.Start == "warm" {
			r.HashSeed = uint32(seed)
		}
	}
	failed := firstFailure(res)
	interrupted := slices.ContainsFunc(res, func(x *Result) bool { return x != nil && errors.Is(x.Stopped, context.Canceled) })
	if interrupted && measuredWhole(res) {
		// Interrupted after every rank's end record, in its exit: every
		// step is measured, and the stop made its exit status. The run
		// counts, as it would have a moment earlier.
		interrupted, failed = false, -1
		r.Reason = "interrupted in its exit, after its end record: kept"
	}
	switch {
	case err != nil:
		// Records could not be written: the disk, not the worker, failed.
		r.Status, r.Reason = results.StatusFailed, err.Error()
		return err
	case interrupted:
		r.Status, r.Reason = results.StatusInterrupted, fmt.Sprintf("interrupted after %d steps", r.Steps)
	case failed >= 0:
		r.Status, r.Reason = results.StatusFailed, res[failed].Reason()
		if ranks > 1 && res[failed].Launcher == "" {
			r.Reason = fmt.Sprintf("rank %d: %s; the other ranks were stopped", failed, r.Reason)
		}
		r.StderrTail = LastLines(res[failed].StderrTail, 20)
	case ranks == 1:
		r.Status = results.StatusOK
		sum := stats.Summarize(res[0].Stream, c.Gate.SpikeRule())
		r.Summary = &sum
	default:
		r.Status = results.StatusOK
		streams := make([]*bench.Stream, ranks)
		for k := range res {
			streams[k] = res[k].Stream
		}
		sum, rs := stats.MultiRank(streams, c.Gate.SpikeRule())
		r.Summary, r.RankSummary = &sum, &rs
		if err := results.WriteGlobalSeries(s.Dir, r, rs.Series); err != nil {
			return err
		}
	}
	if s.Progress != nil {
		s.Progress.RunEnd(n, total, r)
	}
	return nil
}

// pythonFor is the interpreter of p's runs.
func (s *Session) pythonFor(p PlannedRun) string {
	if p.Variant.Python != "" {
		return p.Variant.Python
	}
	return s.Python
}

// worker is a worker process of p (a rank's, with rankEnv) as far as its
// case and the session say: its interpreter, arguments, environment,
// timeouts and warm server, but not its files.
func (s *Session) worker(p PlannedRun, script string, args []string, rankEnv map[string]string) *Worker {
	c := p.Case
	return &Worker{
		Python: s.pythonFor(p), Script: script, Args: args,
		Env:     WorkerEnv(ParentEnv(), p.HashSeed, threadsFor(c), c.Env, p.Variant.Env, rankEnv),
		Grace:   s.Grace,
		Startup: time.Duration(c.Timeouts.Startup), Silence: time.Duration(c.Timeouts.Silence), Total: time.Duration(c.Timeouts.Total),
		Warm: s.warm, Torch: c.NeedsTorch(), WarmScope: c.Name,
	}
}

// prestart starts the warm server of the plan's first run while the
// preflight imports torch in a process of its own (on an idle second core
// the two imports overlap: 1-4 s on CPU hosts, 14-19 s on a GPU host);
// stop ends it and waits, before the pool may close. A multi-rank or
// launched first run starts its own.
func (s *Session) prestart(ctx context.Context, script string, plan []PlannedRun) (stop func(), ready <-chan struct{}) {
	done := make(chan struct{})
	if s.warm == nil || len(plan) == 0 || plan[0].Case.Ranks > 1 || plan[0].Case.Launcher != "" {
		close(done)
		return func() {}, done
	}
	w := s.worker(plan[0], script, nil, nil)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(done)
		w.Prestart(ctx)
	}()
	return func() {
		cancel()
		<-done
	}, done
}

// closeWarm stops a prestart still under way, then the pool's servers.
func (s *Session) closeWarm() {
	if s.stopPrestart != nil {
		s.stopPrestart()
		s.stopPrestart = nil
	}
	if s.warm != nil {
		s.warm.Close()
		s.warm = nil
	}
}

// launched is the run's group under torchrun: one launcher process, its
// output in the run's stderr file, each rank writing its own stream.
// The caller closes the returned stderr file.
func (s *Session) launched(c *cases.Case, r *results.Run, python, script string, port int, hashSeed uint32, variantEnv map[string]string, onRecord func(bench.Record)) (*Launched, *os.File, error) {
	ranks := max(c.Ranks, 1)
	stderr, err := os.Create(filepath.Join(s.Dir, r.Stderr))
	if err != nil {
		return nil, nil, fmt.Errorf("results directory: %w", err)
	}
	g := &Launched{
		Command: TorchrunCommand(c.LauncherCommand, python, ranks, port),
		Script:  script, Args: r.Args,
		Env:      WorkerEnv(ParentEnv(), hashSeed, threadsFor(c), c.Env, variantEnv, nil),
		Template: filepath.Join(s.Dir, strings.TrimSuffix(r.Records, ".jsonl")+".rank{rank}.jsonl"),
		Stdout:   stderr, Stderr: stderr, Grace: s.Grace,
		Startup: time.Duration(c.Timeouts.Startup), Silence: time.Duration(c.Timeouts.Silence), Total: time.Duration(c.Timeouts.Total),
	}
	for k := range ranks {
		g.RecordsPaths = append(g.RecordsPaths, filepath.Join(s.Dir, r.RankRecords(k)))
	}
	if onRecord != nil {
		g.OnRecord = func(rank int, rec bench.Record) {
			if rank == 0 {
				onRecord(rec)
			}
		}
	}
	return g, stderr, nil
}

// measuredWhole reports whether every rank's stream is whole (its end
// record written, no error record) and ended by the interrupt: its exit
// status 0 or the stop's own signal, not a crash, a timeout, a lost
// server or another rank's failure.
func measuredWhole(res []*Result) bool {
	for _, x := range res {
		if x == nil || !x.Stream.Complete() || x.Stream.Error != nil {
			return false
		}
		if x.Stopped != nil && !errors.Is(x.Stopped, context.Canceled) {
			return false
		}
		if x.ExitCode != 0 && x.Signal != "SIGTERM" && x.Signal != "SIGKILL" {
			return false
		}
	}
	return len(res) > 0
}

// firstFailure is the rank that failed first: one that failed on its own,
// not because the group stopped it; -1 when none failed.
func firstFailure(res []*Result) int {
	for k, x := range res {
		if x != nil && x.StoppedGroup && x.Failed() {
			return k
		}
	}
	first := -1
	for k, x := range res {
		if x == nil || !x.Failed() {
			continue
		}
		var re *RankError
		if !errors.As(x.Stopped, &re) {
			return k
		}
		if first < 0 {
			first = k
		}
	}
	return first
}

func (s *Session) save(m *results.Manifest) error {
	if err := results.WriteManifest(s.Dir, m); err != nil {
		return fmt.Errorf("writing the manifest: %w", err)
	}
	if err := results.WriteBench(s.Dir, m); err != nil {
		return fmt.Errorf("writing %s: %w", results.BenchFile, err)
	}
	return nil
}

// threadsFor is the intra-op thread count a case's workers get: the case's,
// or half the CPUs this process may use. Using them all makes OpenMP's
// barriers wait on a thread preempted by the runner or the OS: on 2 cores a
// GPT step with 2 threads had p90 8x its median, with 1 thread 1.3x.
func threadsFor(c *cases.Case) int {
	if c.Workload.Threads > 0 {
		return c.Workload.Threads
	}
	if c.CPUs != "" {
		if cpus, err := bench.ParseCPUList(c.CPUs); err == nil {
			return len(cpus)
		}
	}
	return max(1, numCPU()/2)
}

// lockDir takes an exclusive advisory lock on dir/.lock. The kernel drops
// it when the process dies, so a crash never leaves a stale lock behind.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{dir}
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	f.Truncate(0)
	f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return func() { f.Close() }, nil
}
