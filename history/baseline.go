package history

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// MinBaselineNights is the fewest nights a history baseline stands on:
// fewer give too rough an estimate of how much nights differ (on data of
// known truth, 3 nights gave 6.3% false regressions at alpha 5%, 5 nights
// 2.3%: TestHistoryBaselineKnownTruth).
const MinBaselineNights = 5

// Baseline is the last nights of a case standing in for its golden file:
// the same experiment (steps, warm-up, spike rule) in the newest night's
// environment, with the night-to-night drift they showed.
type Baseline struct {
	Golden *golden.Golden
	Nights []string // their ids, oldest first
	From   string   // the store and the nights, for reports: "history:N (DSN, nights a..b)"
	// Drift is each variant's measured session drift by metric: the
	// standard deviation of the nights' mean log values beyond what their
	// runs' own spread explains (0 for exact counts).
	Drift map[string]map[string]float64
	// Speeds are the nights' calibrations of their hosts' speed, in the
	// order of Nights; nil for a night recorded without one.
	Speeds []*results.Calibration
}

// SpeedAgainst holds the nights to the speed rule (results.CompareSpeed)
// against this host's calibration: "" when every night ran at this host's
// speed, else why timings cannot be judged against them.
func (b *Baseline) SpeedAgainst(here *results.Calibration) string {
	var unknown, other []string
	lo, hi := 0.0, 0.0
	for i, c := range b.Speeds {
		sp := results.CompareSpeed(c, here)
		switch {
		case !sp.Known:
			unknown = append(unknown, b.Nights[i])
		case !sp.Comparable():
			other = append(other, b.Nights[i])
			if len(other) == 1 {
				lo, hi = sp.Ratio, sp.Ratio
			}
			lo, hi = min(lo, sp.Ratio), max(hi, sp.Ratio)
		}
	}
	switch {
	case !here.Known():
		return "this host's speed was not measured"
	case len(other) > 0:
		return fmt.Sprintf("%d of its %d nights ran at another speed than this host's, or one too noisy to tell (results.SpeedBand: the same only within ±%.0f%%; this host runs the calibration at %.2fx-%.2fx theirs)", len(other), len(b.Nights), 100*results.SpeedBand, lo, hi)
	case len(unknown) > 0:
		return fmt.Sprintf("%d of its %d nights were recorded without their host's speed, so whether this host is as fast is unknown", len(unknown), len(b.Nights))
	}
	return ""
}

type baselineRun struct {
	night              string
	started            time.Time
	host, tool, cpu    string
	calibration        string // results.Calibration as JSON, '' when not recorded
	variant            string
	steps, warmup      int
	spike, envKey, env string
	sched              golden.Schedule
	values             map[string]float64
}

// Baseline reads the newest n complete nights of caseName on class that
// ran in the newest night's environment with its size, as a baseline.
func (s *Store) Baseline(ctx context.Context, class, caseName string, n int) (*Baseline, error) {
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT n.id, n.started, n.host, n.tool, n.cpu_model, n.calibration, r.run_id, r.variant, r.steps, r.warmup, r.spike, r.env_key, `+runEnv+`,
		r.gen0_collections, r.gen1_collections, r.gen2_collections, r.gen0_collected, r.gen1_collected, r.gen2_collected, r.metrics
		FROM runs r JOIN nights n ON n.id = r.night_id
		WHERE n.host_class = ? AND r.case_name = ? AND r.side = '' AND n.partial = ''
		ORDER BY n.started, n.id, r.variant, r.run_index, r.run_id`), class, caseName)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer rows.Close()
	var runs []*baselineRun
	for rows.Next() {
		var r baselineRun
		var id, started string
		var raw []byte
		if err := rows.Scan(&r.night, &started, &r.host, &r.tool, &r.cpu, &r.calibration, &id, &r.variant, &r.steps, &r.warmup, &r.spike, &r.envKey, &r.env,
			&r.sched.Collections[0], &r.sched.Collections[1], &r.sched.Collections[2],
			&r.sched.Collected[0], &r.sched.Collected[1], &r.sched.Collected[2], &raw); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		if r.values, err = decodeMetrics(raw); err != nil {
			return nil, fmt.Errorf("history %s: night %s run %s: %v", s, r.night, id, err)
		}
		r.started, _ = time.Parse(time.RFC3339Nano, started)
		runs = append(runs, &r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	if len(runs) == 0 {
		return nil, &NoBaselineError{fmt.Sprintf("history %s holds no complete night of case %s on host class %s", s, caseName, class)}
	}
	newest := runs[len(runs)-1]
	// The nights of the newest night's experiment, newest n of them.
	var nights []string
	for i := len(runs) - 1; i >= 0 && len(nights) < n; i-- {
		r := runs[i]
		if r.envKey != newest.envKey || r.steps != newest.steps || r.warmup != newest.warmup || r.spike != newest.spike {
			continue
		}
		if len(nights) == 0 || nights[len(nights)-1] != r.night {
			nights = append(nights, r.night)
		}
	}
	slices.Reverse(nights)
	if len(nights) < MinBaselineNights {
		return nil, &NoBaselineError{fmt.Sprintf("history %s holds %d complete nights of case %s on host class %s in its newest environment (%s) and size (%d steps); a history baseline needs at least %d",
			s, len(nights), caseName, class, newest.envKey, newest.steps, MinBaselineNights)}
	}
	return buildBaseline(s.String(), class, caseName, runs, nights, newest)
}

// NoBaselineError: the history cannot stand as this baseline (bad input).
type NoBaselineError struct{ Msg string }

func (e *NoBaselineError) Error() string { return e.Msg }

func buildBaseline(store, class, caseName string, runs []*baselineRun, nights []string, newest *baselineRun) (*Baseline, error) {
	keep := map[string]int{}
	for i, id := range nights {
		keep[id] = i
	}
	g := &golden.Golden{Schema: golden.Schema, Case: caseName, HostClass: class,
		Provenance: golden.Provenance{Tool: newest.tool, Date: newest.started.UTC().Format(time.RFC3339), Host: newest.host, CPUModel: newest.cpu},
		Size:       golden.Size{Steps: newest.steps, Warmup: max(newest.warmup, 0)}}
	if err := json.Unmarshal([]byte(newest.env), &g.Env); err != nil {
		return nil, fmt.Errorf("history %s: night %s: environment %q: %v", store, newest.night, newest.env, err)
	}
	if newest.spike != "" {
		if err := json.Unmarshal([]byte(newest.spike), &g.Size.Spike); err != nil {
			return nil, fmt.Errorf("history %s: night %s: spike rule %q: %v", store, newest.night, newest.spike, err)
		}
	}
	first := newest.started
	variants := map[string]*golden.Variant{}
	scheds := map[string][]golden.Schedule{}
	// perNight[variant][metric][night] are the night's values.
	perNight := map[string]map[string][][]float64{}
	for _, r := range runs {
		i, ok := keep[r.night]
		if !ok || r.envKey != newest.envKey || r.steps != newest.steps {
			continue
		}
		v := variants[r.variant]
		if v == nil {
			v = &golden.Variant{Name: r.variant}
			variants[r.variant] = v
			g.Variants = append(g.Variants, golden.Variant{}) // placeholder: filled in order below
			perNight[r.variant] = map[string][][]float64{}
		}
		v.Runs = append(v.Runs, r.values)
		if r.started.Before(first) {
			first = r.started
		}
		scheds[r.variant] = append(scheds[r.variant], r.sched)
		for metric, x := range r.values {
			if perNight[r.variant][metric] == nil {
				perNight[r.variant][metric] = make([][]float64, len(nights))
			}
			perNight[r.variant][metric][i] = append(perNight[r.variant][metric][i], x)
		}
		if r.night == newest.night && r.variant == newest.variant {
			g.Size.Runs++
		}
	}
	g.Variants = g.Variants[:0]
	var order []string
	for _, r := range runs {
		if v := variants[r.variant]; v != nil && !slices.Contains(order, r.variant) {
			order = append(order, r.variant)
		}
	}
	speeds := make([]*results.Calibration, len(nights))
	for _, r := range runs {
		if i, ok := keep[r.night]; ok && speeds[i] == nil && r.calibration != "" {
			var c results.Calibration
			if err := json.Unmarshal([]byte(r.calibration), &c); err != nil {
				return nil, fmt.Errorf("history %s: night %s: calibration: %v", store, r.night, err)
			}
			speeds[i] = &c
		}
	}
	b := &Baseline{Golden: g, Nights: nights, Drift: map[string]map[string]float64{}, Speeds: speeds,
		From: fmt.Sprintf("history:%d (%s, nights of %s to %s)", len(nights), store, first.UTC().Format(time.DateOnly), newest.started.UTC().Format(time.DateOnly))}
	for _, name := range order {
		v := variants[name]
		if ss := scheds[name]; !slices.ContainsFunc(ss, func(s golden.Schedule) bool { return s != ss[0] }) {
			s := ss[0]
			v.Schedule = &s
		}
		g.Variants = append(g.Variants, *v)
		bench := results.BenchName(caseName, name)
		b.Drift[bench] = map[string]float64{}
		for _, m := range stats.Metrics {
			if !m.Exact {
				b.Drift[bench][m.Name] = stats.SessionDrift(perNight[name][m.Name]).SD
			}
		}
	}
	if g.Size.Runs == 0 {
		g.Size.Runs = len(g.Variants[0].Runs) / len(nights)
	}
	return b, nil
}

// BaselineSpec parses gate -baseline: "golden" (0) or "history:N" (N
// nights, at least MinBaselineNights).
func BaselineSpec(s string) (nights int, err error) {
	if s == "golden" || s == "" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(s, "history:")
	if ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= MinBaselineNights {
			return n, nil
		}
	}
	return 0, fmt.Errorf("-baseline %q: want golden (the committed files) or history:N, the last N >= %d nights of the store", s, MinBaselineNights)
}

// Baselines reads each case's history baseline from the store dsn names.
func Baselines(ctx context.Context, dsn, class string, caseNames []string, n int) (map[string]*Baseline, error) {
	s, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := map[string]*Baseline{}
	for _, name := range caseNames {
		if out[name], err = s.Baseline(ctx, class, name, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}
