package backup

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/internal/version"
	"github.com/kobana/workflow/mcpserver/store"
)

// The files of a backup directory.
const (
	DatabaseFile = "kobana.db"
	MessagesDir  = "kobana-messages"
	ManifestFile = "manifest.json"
)

// Format is the version of the backup layout Manifest.Format names.
const Format = 1

// Manifest is what a backup says of itself (manifest.json, written last:
// a directory without it is not a complete backup).
type Manifest struct {
	Format    int          `json:"format"`
	Kobana    version.Info `json:"kobana"`
	CreatedAt time.Time    `json:"created_at"`
	// Database is the database file and its SHA-256.
	Database       string `json:"database"`
	DatabaseSHA256 string `json:"database_sha256"`
	// KeyFingerprint names the secret key the copy's sealed secrets open
	// with (store.KeyFingerprint); the key is not in the backup.
	KeyFingerprint string `json:"key_fingerprint"`
	// Tables counts the rows of each table of the copy.
	Tables map[string]int64 `json:"tables"`
	// Messages counts the raw messages copied, MessageBytes their bytes.
	Messages     int   `json:"messages"`
	MessageBytes int64 `json:"message_bytes"`
	// Purged lists e-mails whose raw message retention purged while the
	// backup ran: the copy's record still says it is there.
	Purged []string `json:"purged_during_backup,omitempty"`
}

// Source is the store a backup copies: the embedded store (store/sqlite),
// whose Backup writes a consistent copy and whose SQLDB counts its rows.
type Source interface {
	store.Store
	store.Directory
	store.SecretKeys
	Backup(ctx context.Context, path string) error
	SQLDB() *sql.DB
}

// Options say what Backup copies and where.
type Options struct {
	Store Source
	// Messages are the store's raw messages (kobana-messages beside its
	// file).
	Messages *mailstore.Dir
	// SecretKey is the key the store was opened with (KOBANA_SECRET_KEY);
	// Backup refuses without one, since the store's own key cannot leave
	// with the backup.
	SecretKey []byte
	// Dir is the backup directory; it must not exist, or be empty.
	Dir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ErrNoSecretKey reports a backup asked of a store opened without a
// secret key from outside: its sealed secrets open only with the key it
// keeps in its own database, which a backup must not carry.
var ErrNoSecretKey = errors.New("the store was opened without a secret key from outside (KOBANA_SECRET_KEY): its secrets are sealed with the key it keeps in its own database, which a backup must not carry; move them to a key of yours first (kobana admin rotate-secret-key)")

// Backup writes a backup of a running store to o.Dir: the database's
// snapshot, then every raw message, then the manifest. The key is checked
// first: it must open the store's sealed secrets.
func Backup(ctx context.Context, o Options) (Manifest, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if len(o.SecretKey) == 0 {
		return Manifest{}, ErrNoSecretKey
	}
	if err := o.Store.CheckSecretKey(ctx); err != nil {
		return Manifest{}, err
	}
	if err := emptyDir(o.Dir); err != nil {
		return Manifest{}, err
	}
	m := Manifest{Format: Format, Kobana: version.Read(), CreatedAt: now().UTC(), Database: DatabaseFile, KeyFingerprint: store.KeyFingerprint(o.SecretKey)}
	dbPath := filepath.Join(o.Dir, DatabaseFile)
	if err := o.Store.Backup(ctx, dbPath); err != nil {
		return m, err
	}
	dest, err := mailstore.OpenDir(filepath.Join(o.Dir, MessagesDir))
	if err != nil {
		return m, err
	}
	if o.Messages != nil {
		err = o.Messages.Walk(ctx, func(s mailstore.Stored) error {
			n, err := copyMessage(ctx, o.Messages, dest, s.Workspace, s.ID)
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, inbox.ErrPurged) {
				return nil // purged since the walk saw it; checked below
			}
			m.Messages++
			m.MessageBytes += n
			return err
		})
		if err != nil {
			return m, fmt.Errorf("backup: copying the raw messages: %w", err)
		}
	}
	if m.Purged, err = missingMessages(ctx, dbPath, o.Store, dest); err != nil {
		return m, err
	}
	if m.Tables, err = tableCounts(ctx, o.Store.SQLDB(), dbPath); err != nil {
		return m, err
	}
	if m.DatabaseSHA256, err = fileSHA256(dbPath); err != nil {
		return m, err
	}
	return m, writeManifest(o.Dir, m)
}

// emptyDir makes dir, or checks it is empty.
func emptyDir(dir string) error {
	if dir == "" {
		return errors.New("backup: no directory to write to")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("backup: %s is not empty", dir)
	}
	return nil
}

// copyMessage copies one raw message into dest, durably, and returns its
// size.
func copyMessage(ctx context.Context, src, dest *mailstore.Dir, ws, id string) (int64, error) {
	msg, err := src.Open(ctx, ws, id)
	if err != nil {
		return 0, err
	}
	defer msg.Close()
	sp, err := dest.NewSpool(msg.Size() + 1)
	if err != nil {
		return 0, err
	}
	defer sp.Remove()
	n, err := sp.ReadFrom(io.NewSectionReader(msg, 0, msg.Size()))
	if err != nil {
		return n, fmt.Errorf("copying message %s/%s: %w", ws, id, err)
	}
	if n != msg.Size() {
		return n, fmt.Errorf("copying message %s/%s: read %d of %d bytes", ws, id, n, msg.Size())
	}
	return n, dest.Keep(ctx, &mailstore.Incoming{Body: sp}, ws, id)
}

// missingMessages lists the e-mails of the copy whose raw message should
// be there and is not — in the backup's messages, nor among the copy's
// blobs (the demo's). They were purged while the backup ran.
func missingMessages(ctx context.Context, dbPath string, st Source, dest *mailstore.Dir) ([]string, error) {
	var missing []string
	err := eachEmail(ctx, st, func(ws string, e inbox.Email) error {
		if e.Purged {
			return nil
		}
		if msg, err := dest.Open(ctx, ws, e.ID); err == nil {
			msg.Close()
			return nil
		}
		if _, err := st.GetBlob(ctx, ws, e.ID); err == nil {
			return nil // kept in the store itself (the demo's e-mails)
		}
		missing = append(missing, ws+"/"+e.ID)
		return nil
	})
	sort.Strings(missing)
	return missing, err
}

// eachEmail calls fn with every e-mail record of every workspace.
func eachEmail(ctx context.Context, st interface {
	store.Records
	store.Directory
}, fn func(ws string, e inbox.Email) error) error {
	wss, err := st.ListWorkspaces(ctx, "")
	if err != nil {
		return err
	}
	repo := inbox.NewRepo(st)
	for _, w := range wss {
		if err := repo.Emails.Each(ctx, w.ID, store.Query{}, func(e inbox.Email) error { return fn(w.ID, e) }); err != nil {
			return fmt.Errorf("listing the e-mails of %s: %w", w.ID, err)
		}
	}
	return nil
}

// tableCounts counts the rows of each table of the copy at path, through
// the store's own handle (ATTACH), so that no second driver is linked.
func tableCounts(ctx context.Context, db *sql.DB, path string) (map[string]int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE $1 AS backup_copy`, path); err != nil {
		return nil, fmt.Errorf("backup: reading the copy: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE backup_copy`)
	return countTables(ctx, conn, "backup_copy")
}

// querier runs queries (a *sql.Conn, a *sql.DB).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// countTables counts the rows of each table of a SQLite schema.
func countTables(ctx context.Context, q querier, schema string) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM `+schema+`.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+schema+`."`+n+`"`).Scan(&c); err != nil {
			return nil, fmt.Errorf("counting %s: %w", n, err)
		}
		out[n] = c
	}
	return out, rows.Err()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeManifest writes the manifest durably: the file, then the directory.
func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, ManifestFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ReadManifest reads a backup directory's manifest.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("backup: %s has no %s: it is not a complete backup", dir, ManifestFile)
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("backup: %s: %w", ManifestFile, err)
	}
	if m.Format != Format {
		return m, fmt.Errorf("backup: %s is of format %d; this kobana reads format %d", dir, m.Format, Format)
	}
	return m, nil
}

// Restored is a backup's store, opened (by the caller, who links the
// driver) to be checked.
type Restored interface {
	store.Store
	store.Directory
	store.SecretKeys
	SQLDB() *sql.DB
}

// Verify checks the backup in dir, whose database the caller opened as
// st with the key it will be restored with: the database is the one the
// manifest names (its SHA-256 — compare before opening, which may change
// it: see VerifyFile), the key opens its secrets and is the one the
// manifest names, its tables hold the rows counted, and every e-mail's raw
// message is in the backup (or among its blobs, or purged) and reads to
// its end.
func Verify(ctx context.Context, dir string, m Manifest, st Restored, key []byte) error {
	if key != nil && store.KeyFingerprint(key) != m.KeyFingerprint {
		return fmt.Errorf("backup: the key given has the fingerprint %s; the backup's secrets were sealed with the key whose fingerprint is %s", store.KeyFingerprint(key), m.KeyFingerprint)
	}
	if err := st.CheckSecretKey(ctx); err != nil {
		return err
	}
	counts, err := countTables(ctx, st.SQLDB(), "main")
	if err != nil {
		return err
	}
	for table, n := range m.Tables {
		if counts[table] < n {
			return fmt.Errorf("backup: table %s holds %d rows, the manifest %d", table, counts[table], n)
		}
	}
	msgs, err := mailstore.OpenDir(filepath.Join(dir, MessagesDir))
	if err != nil {
		return err
	}
	purged := map[string]bool{}
	for _, p := range m.Purged {
		purged[p] = true
	}
	return eachEmail(ctx, st, func(ws string, e inbox.Email) error {
		if e.Purged || purged[ws+"/"+e.ID] {
			return nil
		}
		msg, err := msgs.Open(ctx, ws, e.ID)
		if err != nil {
			if _, berr := st.GetBlob(ctx, ws, e.ID); berr == nil {
				return nil
			}
			return fmt.Errorf("backup: the raw message of e-mail %s/%s is missing: %w", ws, e.ID, err)
		}
		defer msg.Close()
		n, err := io.Copy(io.Discard, io.NewSectionReader(msg, 0, msg.Size()))
		if err != nil || n != msg.Size() || e.SizeBytes > 0 && n != int64(e.SizeBytes) {
			return fmt.Errorf("backup: the raw message of e-mail %s/%s reads %d bytes (%v), its record says %d", ws, e.ID, n, err, e.SizeBytes)
		}
		return nil
	})
}

// VerifyFile checks that the database file at path is the one the
// manifest names, before anything opens it.
func VerifyFile(path string, m Manifest) error {
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	if sum != m.DatabaseSHA256 {
		return fmt.Errorf("backup: %s has the SHA-256 %s, the manifest says %s: the file changed since the backup", path, sum, m.DatabaseSHA256)
	}
	return nil
}

// Restore copies the backup in dir into place — its database to dbPath,
// its raw messages under messages — after checking the database file is
// the one its manifest names. Neither may exist yet: a restore never
// writes over a store. The caller then opens the store and checks it
// (Verify) before serving it.
func Restore(ctx context.Context, dir, dbPath, messages string) (Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return m, err
	}
	src := filepath.Join(dir, DatabaseFile)
	if err := VerifyFile(src, m); err != nil {
		return m, err
	}
	if _, err := os.Stat(dbPath); err == nil {
		return m, fmt.Errorf("backup: %s exists: restore into a new path (stop the server, move the old file away)", dbPath)
	}
	if err := emptyDir(messages); err != nil {
		return m, err
	}
	if err := copyFile(src, dbPath); err != nil {
		return m, err
	}
	from, err := mailstore.OpenDir(filepath.Join(dir, MessagesDir))
	if err != nil {
		return m, err
	}
	to, err := mailstore.OpenDir(messages)
	if err != nil {
		return m, err
	}
	err = from.Walk(ctx, func(s mailstore.Stored) error {
		_, err := copyMessage(ctx, from, to, s.Workspace, s.ID)
		return err
	})
	if err != nil {
		return m, fmt.Errorf("backup: restoring the raw messages: %w", err)
	}
	return m, nil
}

// copyFile copies src to a new file dst, durably.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
