package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/kobana/workflow/mcpserver/store"
)

// Backup writes a consistent copy of the store to a new file at path,
// while the store is in use (SQLite's VACUUM INTO: one snapshot, compact,
// written in a read transaction, so writers wait at most for the copy).
// The copy never holds the store's own secret key (the signing key of
// store.SecretsKeyPurpose, kept when the store was opened without
// Options.SecretKey): it is removed from the copy and the copy compacted
// again, so that no page of the file still carries it. Restoring a copy
// therefore needs the key its secrets are sealed with from outside
// (KOBANA_SECRET_KEY). path must not exist.
func (s *Store) Backup(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("sqlite: backup: %s exists", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "secure_delete(1)")
	copyDB, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: backup: opening the copy: %w", err)
	}
	defer copyDB.Close()
	copyDB.SetMaxOpenConns(1)
	if _, err := copyDB.ExecContext(ctx, `DELETE FROM signing_keys WHERE purpose = $1`, store.SecretsKeyPurpose); err != nil {
		return fmt.Errorf("sqlite: backup: removing the store's own secret key from the copy: %w", err)
	}
	// A copy made from a WAL database is in rollback mode already; VACUUM
	// rewrites every page, the removed key's included.
	if _, err := copyDB.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("sqlite: backup: compacting the copy: %w", err)
	}
	if err := copyDB.Close(); err != nil {
		return fmt.Errorf("sqlite: backup: closing the copy: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sqlite: backup: syncing %s: %w", path, err)
	}
	return nil
}
