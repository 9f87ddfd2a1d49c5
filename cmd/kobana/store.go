package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/pg"
	"github.com/kobana/workflow/store/sqlite"
)

// openStore opens the store named by -db: a postgres:// or postgresql://
// URL selects PostgreSQL (replicas share it), anything else is the path of
// the embedded SQLite file. KOBANA_SECRET_KEY (64 hex digits), when set, is
// the key that encrypts workspace secrets. On failure it reports to
// standard error, prefixed with who, and returns the exit code.
func (c *Command) openStore(ctx context.Context, who, db string) (store.Store, int) {
	var opts store.Options
	if k := c.getenv("KOBANA_SECRET_KEY"); k != "" {
		key, err := hex.DecodeString(k)
		if err != nil || len(key) != 32 {
			fmt.Fprintf(c.Stderr, "%s: KOBANA_SECRET_KEY must be 64 hex digits (32 bytes)\n", who)
			return nil, exitUsage
		}
		opts.SecretKey = key
	}
	var st store.Store
	var err error
	if isPostgres(db) {
		st, err = pg.Open(ctx, db, pg.Options{Options: opts})
	} else {
		st, err = sqlite.Open(ctx, db, opts)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "%s: %v\n", who, err)
		return nil, exitFailure
	}
	return st, exitOK
}

// isPostgres says -db names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than the embedded store's file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}
