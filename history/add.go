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
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Added is what adding one results directory did.
type Added struct {
	Night     string // the night's id (a hash of what identifies the invocation)
	HostClass string
	Runs      int // runs new to the store; 0 when the directory was there already
	Values    int // metric values new to the store (in the new runs)
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
	// One connection for the transaction: PostgreSQL's COPY runs on the
	// driver's own connection, inside the same transaction.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer tx.Rollback()
	fail := func(err error) (*Added, error) { return nil, fmt.Errorf("history %s: adding %s: %v", s, source, err) }
	if s.postgres {
		// COPY cannot skip rows that are there, so two hosts adding one
		// night at once take turns (SQLite's immediate transactions do).
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7306130, hashtext($1))`, a.Night); err != nil {
			return fail(err)
		}
	}
	calibration := ""
	if m.Calibration.Known() {
		b, err := json.Marshal(m.Calibration)
		if err != nil {
			return fail(err)
		}
		calibration = string(b)
	}
	res, err := tx.ExecContext(ctx, s.bind(`INSERT INTO nights (id, started, finished, host_class, host, cpu_model, tool, label, partial, command, source, added, calibration)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		a.Night, m.Started.UTC().Format(time.RFC3339Nano), finished, class, m.Host.Hostname, m.Host.CPUModel, m.Tool,
		o.Label, a.Partial, strings.Join(m.Command, " "), source, time.Now().UTC().Format(time.RFC3339), calibration)
	if err != nil {
		return fail(err)
	}
	newNight, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	// A night recorded partial and added again complete loses its mark.
	if _, err := tx.ExecContext(ctx, s.bind(`UPDATE nights SET partial = ?, finished = ? WHERE id = ?`), a.Partial, finished, a.Night); err != nil {
		return fail(err)
	}
	existing, err := s.storedRuns(ctx, tx, a.Night)
	if err != nil {
		return fail(err)
	}
	sizes := map[string]results.Case{}
	for _, c := range m.Cases {
		sizes[c.Name] = c
	}
	// A night new to the store is summarised from the manifest; one that
	// gained runs, from everything the store then holds of it.
	sums := newNightSummaries(a.Night)
	var runRows [][]any
	envs := map[results.Env][2]string{}        // an environment's JSON and key
	spikes := map[string]string{}              // a case's spike rule's JSON
	row := make([]float64, len(stats.Metrics)) // a run's values; add copies them
	for _, r := range m.Runs {
		if r.Status != results.StatusOK || r.Summary == nil {
			a.Skipped++
			continue
		}
		if existing[r.ID] {
			continue // recorded before (or twice in the manifest): left as it is
		}
		existing[r.ID] = true
		env := results.Env{}
		if r.Meta != nil {
			env = r.Meta.Env(m.Worker)
		}
		e, ok := envs[env]
		if !ok { // once a night, not once a run
			j, _ := json.Marshal(env)
			e = [2]string{string(j), env.Key()}
			envs[env] = e
		}
		envJSON, envKey := e[0], e[1]
		variant := r.Variant
		if r.Side != "" && r.Of != "" {
			variant = r.Of
		}
		sum := r.Summary
		c, warmup, spike := sizes[r.Case], -1, ""
		if c.Name != "" {
			warmup = c.Warmup
			if spike, ok = spikes[r.Case]; !ok {
				rule, _ := json.Marshal(c.SpikeRule())
				spike = string(rule)
				spikes[r.Case] = spike
			}
		}
		metrics := []byte{'{'}
		for i, mt := range stats.Metrics {
			v := mt.Value(*sum)
			row[i] = v
			if math.IsNaN(v) || math.IsInf(v, 0) {
				row[i] = math.NaN()
				continue // not measured (no device memory on a CPU)
			}
			if len(metrics) > 1 {
				metrics = append(metrics, ',')
			}
			metrics = strconv.AppendQuote(metrics, mt.Name)
			metrics = append(metrics, ':')
			metrics = strconv.AppendFloat(metrics, v, 'g', -1, 64)
			a.Values++
		}
		metrics = append(metrics, '}')
		runRows = append(runRows, []any{a.Night, r.ID, r.Case, variant, r.Side, r.Index, sum.Steps, warmup, spike, envKey, "",
			sum.Collections[0], sum.Collections[1], sum.Collections[2], sum.Collected[0], sum.Collected[1], sum.Collected[2], string(metrics)})
		sums.add(summaryGroup{Case: r.Case, Variant: variant, Side: r.Side, EnvKey: envKey}, envJSON, row)
	}
	fresh := len(existing) == len(runRows)
	if err := s.bulkInsert(ctx, conn, tx, "runs", runColumns, runRows); err != nil {
		return fail(err)
	}
	a.Runs = len(runRows)
	switch {
	case len(runRows) == 0:
	case newNight == 1:
		err = sums.insert(ctx, s, conn, tx) // nothing to replace: the bulk path
	case fresh:
		err = sums.write(ctx, s, tx) // runs pruned, added again
	default:
		// The new runs' environments first: summarizeStored reads them
		// from night_envs (a run's own env is written empty).
		if len(sums.envs) > 0 {
			envOnly := &nightSummaries{night: a.Night, values: map[summaryGroup][][]float64{}, envs: sums.envs}
			err = envOnly.write(ctx, s, tx)
		}
		if err == nil {
			err = summarizeStored(ctx, s, tx, a.Night)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return a, nil
}

// storedRuns are the ids of the runs the store holds of a night.
func (s *Store) storedRuns(ctx context.Context, tx *sql.Tx, night string) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, s.bind(`SELECT run_id FROM runs WHERE night_id = ?`), night)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// runColumns are the columns of runs that Add writes, in order. A run's
// env is written empty: its environment is its night's in night_envs, by
// its env_key (runEnv reads either), once a night instead of once a run.
var runColumns = []string{"night_id", "run_id", "case_name", "variant", "side", "run_index", "steps", "warmup", "spike", "env_key", "env",
	"gen0_collections", "gen1_collections", "gen2_collections", "gen0_collected", "gen1_collected", "gen2_collected", "metrics"}

// runEnv is a run's environment (JSON) in a query of runs r: its own
// (runs added before schema 4) or its night's of its key.
const runEnv = "COALESCE(NULLIF(r.env, ''), (SELECT e.env FROM night_envs e WHERE e.night_id = r.night_id AND e.env_key = r.env_key), '')"

// decodeMetrics reads a run's metrics column.
func decodeMetrics(raw []byte) (map[string]float64, error) {
	var m map[string]float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("a run's metrics %.40q: %v", raw, err)
	}
	return m, nil
}

// sqliteRowsPerInsert is the rows of one prepared INSERT on SQLite: 50
// rows of 18 columns are well under its 32,766 parameters.
const sqliteRowsPerInsert = 50

// bulkInsert writes rows into table with each store's bulk path, inside
// tx: COPY on PostgreSQL (pgx's CopyFrom, on tx's connection), prepared
// statements of many rows on SQLite (in process, a row costs no round
// trip, and a prepared statement no parsing). The rows must be new:
// neither path skips a conflict.
func (s *Store) bulkInsert(ctx context.Context, conn *sql.Conn, tx *sql.Tx, table string, columns []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if s.postgres {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("COPY needs pgx's connection, got %T", dc)
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
			return err
		})
	}
	// A statement of many rows, prepared once and executed per chunk: the
	// per-execution cost of database/sql and the driver (locks, argument
	// conversion, a step) is paid once per chunk, not once per row.
	per := min(len(rows), sqliteRowsPerInsert)
	var args []any
	for len(rows) > 0 {
		n := min(len(rows), per)
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" ("+strings.Join(columns, ", ")+") VALUES "+
			strings.TrimSuffix(strings.Repeat("("+strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ")+"), ", n), ", "))
		if err != nil {
			return err
		}
		for len(rows) >= n {
			args = args[:0]
			for _, r := range rows[:n] {
				args = append(args, r...)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				stmt.Close()
				return err
			}
			rows = rows[n:]
		}
		stmt.Close()
		per = len(rows) // the rest, in one statement
	}
	return nil
}
