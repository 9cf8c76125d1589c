package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Added is what adding one results directory did.
type Added struct {
	Night     string // the night's id (a hash of what identifies the invocation)
	HostClass string
	Runs      int // runs new to the store; 0 when the directory was there already
	Values    int // metric values new to the store
	Skipped   int // runs that did not complete (not recorded)
	Partial   string
}

// AddOptions are what a caller knows beyond the results directory.
type AddOptions struct {
	// Label is CI's commit or build label for the night.
	Label string
	// HostClass overrides the manifest's (and the class derived from its
	// host).
	HostClass string
}

// Add records the completed runs of the results directory dir, in one
// transaction: all of it or nothing. Adding a directory again changes
// nothing (a run already recorded is left as it is), so a nightly job may
// add after every attempt; runs a directory gained since (more adaptive
// rounds, a finished partial gate) are added.
func (s *Store) Add(ctx context.Context, dir string, o AddOptions) (*Added, error) {
	if _, err := os.Stat(filepath.Join(dir, results.ManifestFile)); err != nil {
		return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: not a gcjitter results directory (no %s): name directories that run, gate or ab wrote", dir, results.ManifestFile)}}
	}
	m, err := results.ReadManifest(dir)
	if err != nil {
		return nil, &results.InputError{Msgs: []string{err.Error()}}
	}
	return s.AddManifest(ctx, m, dir, o)
}

// NightID identifies a results directory's invocation: the host, the
// moment it started and its command line. Copies of one directory share
// it; two invocations never do.
func NightID(m *results.Manifest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", m.Host.Hostname, m.Started.UTC().Format(time.RFC3339Nano), strings.Join(m.Command, "\x00"), m.ShuffleSeed)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// AddManifest is Add of a manifest already read (source names it).
func (s *Store) AddManifest(ctx context.Context, m *results.Manifest, source string, o AddOptions) (*Added, error) {
	class := o.HostClass
	if class == "" {
		class = m.HostClass
	}
	if class == "" {
		var err error
		if class, err = golden.HostClass("", m.Host); err != nil {
			return nil, fmt.Errorf("%s: %v", source, err)
		}
	}
	a := &Added{Night: NightID(m), HostClass: class, Partial: m.Partial()}
	finished := ""
	if m.Finished != nil {
		finished = m.Finished.UTC().Format(time.RFC3339)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.bind(`INSERT INTO nights (id, started, finished, host_class, host, cpu_model, tool, label, partial, command, source, added)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		a.Night, m.Started.UTC().Format(time.RFC3339Nano), finished, class, m.Host.Hostname, m.Host.CPUModel, m.Tool,
		o.Label, a.Partial, strings.Join(m.Command, " "), source, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err)
	}
	// A night recorded partial and added again complete loses its mark.
	if _, err := tx.ExecContext(ctx, s.bind(`UPDATE nights SET partial = ?, finished = ? WHERE id = ?`), a.Partial, finished, a.Night); err != nil {
		return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err)
	}
	sizes := map[string]results.Case{}
	for _, c := range m.Cases {
		sizes[c.Name] = c
	}
	var runRows []any
	done := map[string]*results.Run{}
	for _, r := range m.Runs {
		if r.Status != results.StatusOK || r.Summary == nil {
			a.Skipped++
			continue
		}
		env := results.Env{}
		if r.Meta != nil {
			env = r.Meta.Env(m.Worker)
		}
		envJSON, _ := json.Marshal(env)
		variant := r.Variant
		if r.Side != "" && r.Of != "" {
			variant = r.Of
		}
		sum := r.Summary
		c, warmup, spike := sizes[r.Case], -1, ""
		if c.Name != "" {
			warmup = c.Warmup
			rule, _ := json.Marshal(c.SpikeRule())
			spike = string(rule)
		}
		done[r.ID] = r
		runRows = append(runRows, a.Night, r.ID, r.Case, variant, r.Side, r.Index, sum.Steps, warmup, spike, env.Key(), string(envJSON),
			sum.Collections[0], sum.Collections[1], sum.Collections[2], sum.Collected[0], sum.Collected[1], sum.Collected[2])
	}
	added, err := s.insertRuns(ctx, tx, runRows)
	if err != nil {
		return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err)
	}
	a.Runs = len(added)
	var vals []any
	for _, r := range m.Runs {
		if !added[r.ID] || done[r.ID] != r {
			continue // recorded before, or not completed
		}
		for _, mt := range stats.Metrics {
			v := mt.Value(*r.Summary)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			vals = append(vals, a.Night, r.ID, mt.Name, v)
		}
	}
	n, err := s.insertValues(ctx, tx, vals)
	if err != nil {
		return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err)
	}
	a.Values = n
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err)
	}
	return a, nil
}

// runColumns are the columns insertRuns writes, in order.
const runColumns = "night_id, run_id, case_name, variant, side, run_index, steps, warmup, spike, env_key, env, " +
	"gen0_collections, gen1_collections, gen2_collections, gen0_collected, gen1_collected, gen2_collected"

// runsPerInsert keeps a multi-row INSERT of runs (17 parameters a row)
// under both databases' limits.
const runsPerInsert = 500

// insertRuns writes runs' rows (runColumns each), many rows an INSERT, and
// returns the ids of those that were new: a run recorded before is left as
// it is, and its values are not added again.
func (s *Store) insertRuns(ctx context.Context, tx *sql.Tx, vals []any) (map[string]bool, error) {
	const width = 17
	added := map[string]bool{}
	for len(vals) > 0 {
		rows := min(len(vals)/width, runsPerInsert)
		q := "INSERT INTO runs (" + runColumns + ") VALUES " +
			strings.TrimSuffix(strings.Repeat("("+strings.TrimSuffix(strings.Repeat("?, ", width), ", ")+"), ", rows), ", ") +
			" ON CONFLICT (night_id, run_id) DO NOTHING RETURNING run_id"
		res, err := tx.QueryContext(ctx, s.bind(q), vals[:rows*width]...)
		if err != nil {
			return nil, err
		}
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				res.Close()
				return nil, err
			}
			added[id] = true
		}
		res.Close()
		if err := res.Err(); err != nil {
			return nil, err
		}
		vals = vals[rows*width:]
	}
	return added, nil
}

// valuesPerInsert keeps a multi-row INSERT's parameters (4 a row) under
// both databases' limits (SQLite 32766, PostgreSQL 65535).
const valuesPerInsert = 1000

// insertValues writes (night, run, metric, value) quadruples, many rows
// an INSERT: one statement a row is what makes a year of nights slow.
func (s *Store) insertValues(ctx context.Context, tx *sql.Tx, vals []any) (int, error) {
	total := 0
	for len(vals) > 0 {
		rows := min(len(vals)/4, valuesPerInsert)
		q := "INSERT INTO run_values (night_id, run_id, metric, value) VALUES " +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", rows), ", ") +
			" ON CONFLICT (night_id, run_id, metric) DO NOTHING"
		res, err := tx.ExecContext(ctx, s.bind(q), vals[:rows*4]...)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += int(n)
		vals = vals[rows*4:]
	}
	return total, nil
}
