package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
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

// secretKeyHelp says how to give a command the key a store's secrets are
// sealed with, after that key failed to open them.
func secretKeyHelp(c *Command) string {
	if c.getenv("KOBANA_SECRET_KEY") == "" {
		return "KOBANA_SECRET_KEY is not set, so the key the store keeps itself was tried: set KOBANA_SECRET_KEY to the 64 hex digits the store's secrets were sealed with (kobana backup records the key's fingerprint in its manifest to tell which)"
	}
	return "KOBANA_SECRET_KEY is set but is not the key the store's secrets were sealed with: set it to that key's 64 hex digits (kobana backup records the key's fingerprint in its manifest to tell which)"
}

// redactURL is a database URL without its password, for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the PostgreSQL URL"
	}
	return u.Redacted()
}
