// Package history remembers nights: every run's metrics, GC schedule and
// environment from results directories, kept in a store that many nights
// (and, with PostgreSQL, many CI hosts) share. Series read back from it feed
// change-point detection (stats.ChangePoints), the trend dashboard and
// gates against recent nights.
//
// A store is an embedded SQLite file (modernc.org/sqlite, pure Go) by
// default, or a PostgreSQL database for a fleet (postgres:// or
// postgresql:// DSNs, through github.com/jackc/pgx/v5). One schema serves
// both, brought up to date by numbered migrations when a store is opened.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver
)

// DSNHelp says what -history takes, for flags and errors.
const DSNHelp = "a SQLite file (e.g. results/history.db) or a PostgreSQL URL (postgres://user@host/db)"

// Store is an open history store.
type Store struct {
	db       *sql.DB
	postgres bool
	dsn      string // for messages, without a password
}

// Open opens (creating where needed) the store dsn names and brings its
// schema up to date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if dsn == "" {
		return nil, fmt.Errorf("no history store named: give %s", DSNHelp)
	}
	s := &Store{dsn: Redact(dsn)}
	var err error
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		s.postgres = true
		s.db, err = sql.Open("pgx", dsn)
	} else {
		if dir := filepath.Dir(dsn); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("history %s: %v", dsn, err)
			}
		}
		// WAL lets readers go on while a writer adds a night; the busy
		// timeout makes a second writer wait its turn instead of failing;
		// immediate transactions take the write lock at BEGIN, so two
		// writers never deadlock upgrading a read lock. synchronous=NORMAL
		// is WAL's recommended setting: a commit is atomic and the file
		// never corrupt, but the last nights added before a power cut may
		// be lost (history add again restores them), and a commit costs
		// no fsync.
		s.db, err = sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(60000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate")
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s.dsn, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("history %s: %w", s.dsn, err)
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// String names the store (without a password).
func (s *Store) String() string { return s.dsn }

// Redact is dsn without its password, for messages.
func Redact(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 {
		return dsn
	}
	userinfo := dsn[scheme+3 : at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return dsn[:scheme+3] + user + ":xxxxx" + dsn[at:]
	}
	return dsn
}

// SchemaVersion is the version a store is brought to: the number of
// migrations.
func SchemaVersion() int { return len(migrations) }

// migrate applies the migrations the store has not had, each in its own
// transaction with its version row, so a store is never half-migrated.
// On PostgreSQL an advisory lock keeps two CI hosts opening one database
// at once from applying a migration twice; SQLite's immediate transaction
// does the same.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %v", err)
	}
	for {
		done, err := s.migrateOne(ctx)
		if err != nil || done {
			return err
		}
	}
}

func (s *Store) migrateOne(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if s.postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7306129)`); err != nil {
			return false, err
		}
	}
	var version int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return false, err
	}
	if version > len(migrations) {
		return false, fmt.Errorf("the store is at schema version %d, this gcjitter knows %d: use a newer gcjitter", version, len(migrations))
	}
	if version == len(migrations) {
		return true, nil
	}
	for _, stmt := range strings.Split(migrations[version], ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("migration %d: %v", version+1, err)
		}
	}
	if fill := backfills[version+1]; fill != nil {
		if err := fill(ctx, s, tx); err != nil {
			return false, fmt.Errorf("migration %d: %v", version+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.bind(`INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`),
		version+1, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return false, fmt.Errorf("migration %d: %v", version+1, err)
	}
	return false, tx.Commit()
}

// bind rewrites ? placeholders as PostgreSQL's $n.
func (s *Store) bind(q string) string {
	if !s.postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Version is the store's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

var errNoRows = errors.New("no rows")
