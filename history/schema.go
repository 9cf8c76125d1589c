package history

import (
	"context"
	"database/sql"
)

// migrations are the store's schema, in order: migration i brings a store
// from version i to i+1. They are written once for both SQLite and
// PostgreSQL (portable types, text keys, no autoincrement), and never
// edited once released: a change is a new migration.
var migrations = []string{
	// 1: nights, their runs, and every metric of every run.
	`CREATE TABLE nights (
		id         TEXT PRIMARY KEY,
		started    TEXT NOT NULL,
		finished   TEXT NOT NULL DEFAULT '',
		host_class TEXT NOT NULL,
		host       TEXT NOT NULL,
		cpu_model  TEXT NOT NULL DEFAULT '',
		tool       TEXT NOT NULL,
		label      TEXT NOT NULL DEFAULT '',
		partial    TEXT NOT NULL DEFAULT '',
		command    TEXT NOT NULL DEFAULT '',
		source     TEXT NOT NULL,
		added      TEXT NOT NULL
	);
	CREATE TABLE runs (
		night_id   TEXT NOT NULL REFERENCES nights(id),
		run_id     TEXT NOT NULL,
		case_name  TEXT NOT NULL,
		variant    TEXT NOT NULL,
		side       TEXT NOT NULL DEFAULT '',
		run_index  INTEGER NOT NULL,
		steps      INTEGER NOT NULL,
		env_key    TEXT NOT NULL,
		env        TEXT NOT NULL,
		gen0_collections BIGINT NOT NULL,
		gen1_collections BIGINT NOT NULL,
		gen2_collections BIGINT NOT NULL,
		gen0_collected   BIGINT NOT NULL,
		gen1_collected   BIGINT NOT NULL,
		gen2_collected   BIGINT NOT NULL,
		PRIMARY KEY (night_id, run_id)
	);
	CREATE TABLE run_values (
		night_id TEXT NOT NULL,
		run_id   TEXT NOT NULL,
		metric   TEXT NOT NULL,
		value    DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (night_id, run_id, metric)
	)`,
	// 2: the indexes the series queries walk (host class, then time; a
	// case's runs).
	`CREATE INDEX nights_by_class ON nights (host_class, started);
	CREATE INDEX runs_by_case ON runs (case_name, variant)`,
	// 3: each run's warm-up and spike rule, so that recent nights can
	// stand as a gate's baseline (gate -baseline history:N runs the same
	// experiment). -1 and '' on runs recorded before.
	`ALTER TABLE runs ADD COLUMN warmup INTEGER NOT NULL DEFAULT -1;
	ALTER TABLE runs ADD COLUMN spike TEXT NOT NULL DEFAULT ''`,
	// 4: each night's summary of each series (what detection, show and
	// the dashboards read, so a year is read without its runs): a row a
	// night, case, variant, side and environment key, its metrics a JSON
	// object of each metric's [runs, median, lo, hi, min, max] (lo and hi
	// null with too few runs for an interval); each night's environments
	// by key (a summary row carries only the key); and a run's metrics in
	// its own row as a JSON object ({"p50": 4.1e7, ...}). A row a run and a
	// row a group instead of one a value is what makes a night's ingest
	// cheap (SQLite: 98 ms a night before, with a row a value). backfills[4]
	// moves the values of run_values into runs.metrics, summarises every
	// night and drops run_values. runs_by_case goes: a night's 1,000 runs
	// touched 100 places of it, a third of a night's ingest on SQLite; a
	// case's runs are found through its class's nights (nights_by_class)
	// and each night's runs (the primary key), and series no longer read
	// runs at all.
	`CREATE TABLE night_summaries (
		night_id  TEXT NOT NULL,
		case_name TEXT NOT NULL,
		variant   TEXT NOT NULL,
		side      TEXT NOT NULL,
		env_key   TEXT NOT NULL,
		metrics   TEXT NOT NULL,
		PRIMARY KEY (night_id, case_name, variant, side, env_key)
	);
	CREATE TABLE night_envs (
		night_id TEXT NOT NULL,
		env_key  TEXT NOT NULL,
		env      TEXT NOT NULL,
		PRIMARY KEY (night_id, env_key)
	);
	ALTER TABLE runs ADD COLUMN metrics TEXT NOT NULL DEFAULT '{}';
	DROP INDEX runs_by_case`,
	// 5: each night's calibration of its host's speed (results.Calibration
	// as JSON; '' for nights recorded before): a history baseline is held
	// to the speed rule the golden files are (results.CompareSpeed).
	`ALTER TABLE nights ADD COLUMN calibration TEXT NOT NULL DEFAULT ''`,
}

// backfills are the data a migration computes in Go (medians and
// benchmath's intervals are not SQL), run in the migration's transaction
// after its statements: backfills[i] after migration i (1-based).
var backfills = map[int]func(ctx context.Context, s *Store, tx *sql.Tx) error{
	4: backfillSummaries,
}
