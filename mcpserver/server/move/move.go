package move

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
)

// Source is the embedded store moved: store/sqlite, not served while it
// moves.
type Source interface {
	store.SecretKeys
	SQLDB() *sql.DB
}

// Target is the PostgreSQL store it moves to: store/pg, empty.
type Target interface {
	store.SecretKeys
	store.Transactor
	PgxPool() *pgxpool.Pool
}

// Options say what moves where.
type Options struct {
	From Source
	// Messages are the source's raw messages (nil: none).
	Messages *mailstore.Dir
	To       Target
	// Progress, when set, hears of each step.
	Progress func(format string, args ...any)
}

// Report says what moved.
type Report struct {
	// Tables counts the rows moved of each table.
	Tables map[string]int64
	// Messages and MessageBytes count the raw messages moved.
	Messages     int
	MessageBytes int64
	// Jobs counts the jobs not finished moved, by kind.
	Jobs map[string]int
}

// ErrTargetNotEmpty reports a target that holds rows already: a move
// never merges into a store.
var ErrTargetNotEmpty = errors.New("move: the PostgreSQL database is not empty")

// Move copies the source into the target, in one transaction of the
// target, and checks the copy. The source is only read.
func Move(ctx context.Context, o Options) (Report, error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	rep := Report{Tables: map[string]int64{}, Jobs: map[string]int{}}
	if err := o.From.CheckSecretKey(ctx); err != nil {
		return rep, fmt.Errorf("move: the source's secrets: %w", err)
	}
	src, dst := o.From.SQLDB(), o.To.PgxPool()
	lo := mailstore.NewLargeObjects(dst, "")
	if err := lo.Migrate(ctx); err != nil {
		return rep, err
	}
	tables, err := sourceTables(ctx, src)
	if err != nil {
		return rep, err
	}
	columns, err := targetColumns(ctx, dst)
	if err != nil {
		return rep, err
	}
	for _, t := range tables {
		if _, ok := columns[t.name]; !ok {
			return rep, fmt.Errorf("move: the target has no table %s: open it with this kobana first (it creates its tables)", t.name)
		}
		for _, c := range t.columns {
			if _, ok := columns[t.name][c]; !ok {
				return rep, fmt.Errorf("move: the target's table %s has no column %s", t.name, c)
			}
		}
	}
	if err := targetEmpty(ctx, dst, append(tableNames(tables), "inbox_messages")); err != nil {
		return rep, err
	}
	order, err := fkOrder(ctx, dst, tableNames(tables))
	if err != nil {
		return rep, err
	}
	srcQueue, err := queue.OpenSQLite(ctx, src, queue.Config{Workers: map[string]int{}})
	if err != nil {
		return rep, err
	}
	jobs, err := srcQueue.Pending(ctx)
	if err != nil {
		return rep, err
	}
	dstQueue, err := queue.OpenPostgres(ctx, dst, queue.Config{Workers: map[string]int{}})
	if err != nil {
		return rep, err
	}
	byName := map[string]table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	err = o.To.WithTx(ctx, func(stx store.Tx) error {
		ptx, ok := stx.(interface{ PgxTx() pgx.Tx })
		if !ok {
			return fmt.Errorf("move: the target's transaction %T is not PostgreSQL's", stx)
		}
		tx := ptx.PgxTx()
		for _, name := range order {
			n, err := copyTable(ctx, src, tx, byName[name], columns[name])
			if err != nil {
				return err
			}
			rep.Tables[name] = n
			progress("%s: %d rows", name, n)
		}
		rep.Messages, rep.MessageBytes = 0, 0
		if o.Messages != nil {
			err := o.Messages.Walk(ctx, func(s mailstore.Stored) error {
				n, err := moveMessage(ctx, o.Messages, lo, stx, s)
				rep.Messages++
				rep.MessageBytes += n
				return err
			})
			if err != nil {
				return fmt.Errorf("move: the raw messages: %w", err)
			}
			progress("raw messages: %d (%d bytes)", rep.Messages, rep.MessageBytes)
		}
		clear(rep.Jobs)
		for _, j := range jobs {
			args, err := queue.Args(j.Kind, j.EncodedArgs)
			if err != nil {
				return fmt.Errorf("move: job %d: %w", j.ID, err)
			}
			opts := &river.InsertOpts{Queue: j.Queue, MaxAttempts: j.MaxAttempts, Priority: j.Priority, Metadata: j.Metadata, Tags: j.Tags}
			if j.State == rivertype.JobStateScheduled || j.State == rivertype.JobStateRetryable {
				opts.ScheduledAt = j.ScheduledAt
			}
			if _, err := dstQueue.InsertTx(ctx, stx, args, opts); err != nil {
				return fmt.Errorf("move: job %d (%s): %w", j.ID, j.Kind, err)
			}
			rep.Jobs[j.Kind]++
		}
		progress("jobs not finished: %d", len(jobs))
		return nil
	})
	if err != nil {
		return rep, err
	}
	return rep, check(ctx, o, lo, rep, jobs)
}

// table is one table of the source: its name and columns.
type table struct {
	name    string
	columns []string
}

func tableNames(ts []table) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// sourceTables lists the source's tables and their columns: every table
// but SQLite's and River's own (the jobs move through River).
func sourceTables(ctx context.Context, db *sql.DB) ([]table, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'river_%' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("move: listing the source's tables: %w", err)
	}
	var out []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.name); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, t)
	}
	rows.Close()
	for i := range out {
		cols, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info($1) ORDER BY cid`, out[i].name)
		if err != nil {
			return nil, err
		}
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				cols.Close()
				return nil, err
			}
			out[i].columns = append(out[i].columns, c)
		}
		cols.Close()
	}
	return out, rows.Err()
}

// targetColumns lists the target's tables (in its search path) and the
// type of each column.
func targetColumns(ctx context.Context, db *pgxpool.Pool) (map[string]map[string]string, error) {
	rows, err := db.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()`)
	if err != nil {
		return nil, fmt.Errorf("move: listing the target's columns: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var t, c, typ string
		if err := rows.Scan(&t, &c, &typ); err != nil {
			return nil, err
		}
		if out[t] == nil {
			out[t] = map[string]string{}
		}
		out[t][c] = typ
	}
	return out, rows.Err()
}

// targetEmpty checks that the target's tables hold no row.
func targetEmpty(ctx context.Context, db *pgxpool.Pool, tables []string) error {
	var full []string
	for _, t := range tables {
		var any bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{t}.Sanitize()+`)`).Scan(&any); err != nil {
			return fmt.Errorf("move: looking into the target's %s: %w", t, err)
		}
		if any {
			full = append(full, t)
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: %s hold rows; move into a fresh database", ErrTargetNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// fkOrder orders tables so that each comes after those its foreign keys
// reference in the target.
func fkOrder(ctx context.Context, db *pgxpool.Pool, tables []string) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, fmt.Errorf("move: reading the target's foreign keys: %w", err)
	}
	deps := map[string][]string{}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			rows.Close()
			return nil, err
		}
		from, to = unqualified(from), unqualified(to)
		if from != to {
			deps[from] = append(deps[from], to)
		}
	}
	rows.Close()
	sort.Strings(tables)
	var out []string
	done := map[string]bool{}
	var visit func(t string, path []string) error
	visit = func(t string, path []string) error {
		if done[t] {
			return nil
		}
		if slices.Contains(path, t) {
			return fmt.Errorf("move: the target's foreign keys form a cycle through %s", t)
		}
		for _, d := range deps[t] {
			if slices.Contains(tables, d) {
				if err := visit(d, append(path, t)); err != nil {
					return err
				}
			}
		}
		done[t] = true
		out = append(out, t)
		return nil
	}
	for _, t := range tables {
		if err := visit(t, nil); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// unqualified drops the schema and quotes regclass may add.
func unqualified(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, `"`)
}

// copyTable copies every row of one table, converting each value to its
// target column's type.
func copyTable(ctx context.Context, src *sql.DB, tx pgx.Tx, t table, types map[string]string) (int64, error) {
	quoted := make([]string, len(t.columns))
	for i, c := range t.columns {
		quoted[i] = `"` + c + `"`
	}
	query := `SELECT ` + strings.Join(quoted, ", ") + ` FROM "` + t.name + `"`
	if t.name == "signing_keys" {
		// The key a store keeps itself when opened without one is not
		// moved: the target is opened with the key from outside that the
		// secrets are sealed with, and keeps none.
		query += ` WHERE purpose <> '` + store.SecretsKeyPurpose + `'`
	}
	rows, err := src.QueryContext(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("move: reading %s: %w", t.name, err)
	}
	defer rows.Close()
	var all [][]any
	for rows.Next() {
		vals := make([]any, len(t.columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, fmt.Errorf("move: reading %s: %w", t.name, err)
		}
		for i, c := range t.columns {
			v, err := convert(vals[i], types[c])
			if err != nil {
				return 0, fmt.Errorf("move: %s.%s: %w", t.name, c, err)
			}
			vals[i] = v
		}
		all = append(all, vals)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("move: reading %s: %w", t.name, err)
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.columns, pgx.CopyFromRows(all))
	if err != nil {
		return n, fmt.Errorf("move: writing %s: %w", t.name, err)
	}
	return n, nil
}

// convert turns a value SQLite returned into one of the PostgreSQL
// column's type.
func convert(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "text", "character varying":
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case "bigint", "integer", "smallint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		}
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case "boolean":
		if x, ok := v.(int64); ok {
			return x != 0, nil
		}
	case "double precision", "real", "numeric":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
	}
	return nil, fmt.Errorf("a %T value (%.40v) for a column of type %s", v, v, typ)
}

// moveMessage copies one raw message into a large object in tx.
func moveMessage(ctx context.Context, src *mailstore.Dir, lo *mailstore.LargeObjects, tx store.Tx, s mailstore.Stored) (int64, error) {
	msg, err := src.Open(ctx, s.Workspace, s.ID)
	if err != nil {
		return 0, err
	}
	defer msg.Close()
	sp, err := lo.NewSpool(msg.Size() + 1)
	if err != nil {
		return 0, err
	}
	defer sp.Remove()
	n, err := sp.ReadFrom(io.NewSectionReader(msg, 0, msg.Size()))
	if err != nil {
		return n, err
	}
	return n, lo.KeepTx(ctx, tx, &mailstore.Incoming{Body: sp}, s.Workspace, s.ID)
}

// check checks the moved copy: the rows of each table counted in the
// target (as many as were copied, and as the source holds), each raw message read back with the source's digest, the jobs
// counted, the secrets opened with the target's key.
func check(ctx context.Context, o Options, lo *mailstore.LargeObjects, rep Report, jobs []*rivertype.JobRow) error {
	dst := o.To.PgxPool()
	for t, n := range rep.Tables {
		var got int64
		if err := dst.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{t}.Sanitize()).Scan(&got); err != nil {
			return fmt.Errorf("move: checking %s: %w", t, err)
		}
		if got != n {
			return fmt.Errorf("move: the target's %s holds %d rows, the source %d", t, got, n)
		}
	}
	if o.Messages != nil {
		err := o.Messages.Walk(ctx, func(s mailstore.Stored) error {
			want, err := digest(ctx, func() (mailstore.Message, error) { return o.Messages.Open(ctx, s.Workspace, s.ID) })
			if err != nil {
				return err
			}
			got, err := digest(ctx, func() (mailstore.Message, error) { return lo.Open(ctx, s.Workspace, s.ID) })
			if err != nil {
				return fmt.Errorf("move: reading back message %s/%s: %w", s.Workspace, s.ID, err)
			}
			if got != want {
				return fmt.Errorf("move: message %s/%s reads back different bytes", s.Workspace, s.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var pending int
	if err := dst.QueryRow(ctx, `SELECT COUNT(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&pending); err != nil {
		return fmt.Errorf("move: counting the target's jobs: %w", err)
	}
	if pending < len(jobs) {
		return fmt.Errorf("move: the target has %d jobs not finished, the source %d", pending, len(jobs))
	}
	if err := o.To.CheckSecretKey(ctx); err != nil {
		return fmt.Errorf("move: the target's secrets: %w", err)
	}
	return nil
}

// digest is the SHA-256 of a message.
func digest(ctx context.Context, open func() (mailstore.Message, error)) ([32]byte, error) {
	m, err := open()
	if err != nil {
		return [32]byte{}, err
	}
	defer m.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(m, 0, m.Size())); err != nil {
		return [32]byte{}, err
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}
