package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/server/backup"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

func init() {
	register("backup", "copy a running embedded store and its raw messages for safekeeping (-verify DIR checks a copy)", backupCommand)
	register("restore", "put a backup in place as a new store, checked before it is served", restoreCommand)
}

const backupUsage = `usage: kobana backup -out DIR [-db PATH] [-messages DIR]
       kobana backup -verify DIR

Copies the embedded store while kobana serve runs: the database (one
consistent snapshot), the raw messages, and a manifest (DIR/manifest.json,
written last) with the row counts and the fingerprint of the secret key the
copy's secrets are sealed with. The key itself is never in the backup:
KOBANA_SECRET_KEY must be set (and open the store's secrets); keep it apart
from the backups. -verify checks a backup with KOBANA_SECRET_KEY: the file is
the one the manifest names, the key opens its secrets, every e-mail's raw
message is there and reads back whole.

A PostgreSQL store is backed up with pg_dump, its large objects (the raw
messages) included: pg_dump --format=custom --blobs --file=kobana.dump URL
(see docs/operations.md).

flags:
`

const restoreUsage = `usage: kobana restore -from DIR -db PATH [-messages DIR]

Puts the backup in DIR in place as a new store: the database at PATH (which
must not exist) and the raw messages in -messages (default kobana-messages
beside PATH), then opens it with KOBANA_SECRET_KEY and checks it as backup
-verify does. Start kobana serve on PATH with the same KOBANA_SECRET_KEY.

flags:
`

// secretKey reads KOBANA_SECRET_KEY: nil when it is not set; ok false
// (after saying so) when it is not 64 hex digits.
func (c *Command) secretKey(who string) (key []byte, ok bool) {
	raw := c.getenv("KOBANA_SECRET_KEY")
	if raw == "" {
		return nil, true
	}
	k, err := hex.DecodeString(raw)
	if err != nil || len(k) != store.SecretKeySize {
		fmt.Fprintf(c.Stderr, "%s: KOBANA_SECRET_KEY must be 64 hex digits (32 bytes)\n", who)
		return nil, false
	}
	return k, true
}

func backupCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana backup", flag.ContinueOnError)
	db := fs.String("db", "kobana.db", "the embedded store's file")
	messages := fs.String("messages", "", "its raw messages (default: kobana-messages beside -db)")
	out := fs.String("out", "", "the backup directory to write (must not exist, or be empty)")
	verify := fs.String("verify", "", "check the backup in this directory instead")
	if code, ok := c.parseFlags(fs, backupUsage, args); !ok {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "kobana backup: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	case *verify != "":
		return c.verifyBackup(*verify)
	case *out == "":
		return fail(exitUsage, "-out DIR is required (or -verify DIR)")
	case isPostgres(*db):
		return fail(exitUsage, "%s is PostgreSQL: back it up with pg_dump, large objects included: pg_dump --format=custom --blobs --file=kobana.dump '%s' (see docs/operations.md)", redactURL(*db), redactURL(*db))
	}
	key, ok := c.secretKey("kobana backup")
	if !ok {
		return exitUsage
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana backup", *db)
	if st == nil {
		return code
	}
	defer st.Close()
	src, ok := st.(backup.Source)
	if !ok {
		return fail(exitFailure, "the store %T cannot be backed up online", st)
	}
	if *messages == "" {
		*messages = filepath.Join(filepath.Dir(*db), "kobana-messages")
	}
	var dir *mailstore.Dir
	if _, err := os.Stat(*messages); err == nil {
		if dir, err = mailstore.OpenDir(*messages); err != nil {
			return fail(exitFailure, "%v", err)
		}
	}
	m, err := backup.Backup(ctx, backup.Options{Store: src, Messages: dir, SecretKey: key, Dir: *out})
	if errors.Is(err, store.ErrNoSecretKey) {
		return fail(exitFailure, "%v\n%s", err, secretKeyHelp(c))
	}
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	var rows int64
	for _, n := range m.Tables {
		rows += n
	}
	fmt.Fprintf(c.Stderr, "backed up %s to %s: %d rows in %d tables, %d raw messages (%d bytes); the secrets need the key with fingerprint %s (not in the backup)\n",
		*db, *out, rows, len(m.Tables), m.Messages, m.MessageBytes, m.KeyFingerprint)
	if len(m.Purged) > 0 {
		fmt.Fprintf(c.Stderr, "note: %d raw messages were purged by retention while the backup ran (listed in the manifest)\n", len(m.Purged))
	}
	return exitOK
}

// verifyBackup is kobana backup -verify DIR: the database is checked on a
// copy, so that opening it changes nothing in the backup.
func (c *Command) verifyBackup(dir string) int {
	ctx := c.context()
	tmp, err := os.MkdirTemp("", "kobana-verify-")
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana backup: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(tmp)
	m, err := backup.Restore(ctx, dir, filepath.Join(tmp, "kobana.db"), filepath.Join(tmp, "kobana-messages"))
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana backup: %v\n", err)
		return exitFailure
	}
	return c.checkRestored("kobana backup", dir, filepath.Join(tmp, "kobana.db"), m)
}

func restoreCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana restore", flag.ContinueOnError)
	from := fs.String("from", "", "the backup directory (required)")
	db := fs.String("db", "", "the new store's file (required; must not exist)")
	messages := fs.String("messages", "", "where its raw messages go (default: kobana-messages beside -db)")
	if code, ok := c.parseFlags(fs, restoreUsage, args); !ok {
		return code
	}
	if _, ok := c.secretKey("kobana restore"); !ok {
		return exitUsage
	}
	if fs.NArg() > 0 || *from == "" || *db == "" || isPostgres(*db) {
		fmt.Fprintln(c.Stderr, "kobana restore: -from DIR and -db PATH (a new SQLite file) are required, and nothing else")
		return exitUsage
	}
	if *messages == "" {
		*messages = filepath.Join(filepath.Dir(*db), "kobana-messages")
	}
	ctx := c.context()
	m, err := backup.Restore(ctx, *from, *db, *messages)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana restore: %v\n", err)
		return exitFailure
	}
	code := c.checkRestored("kobana restore", *from, *db, m)
	if code == exitOK {
		fmt.Fprintf(c.Stderr, "restored %s to %s (messages in %s): start kobana serve -db %s with the same KOBANA_SECRET_KEY\n", *from, *db, *messages, *db)
	}
	return code
}

// checkRestored opens a restored database with KOBANA_SECRET_KEY and
// checks it against its backup's manifest.
func (c *Command) checkRestored(who, dir, dbPath string, m backup.Manifest) int {
	cctx := c.context()
	var opts store.Options
	var ok bool
	if opts.SecretKey, ok = c.secretKey(who); !ok {
		return exitUsage
	}
	if len(opts.SecretKey) == 0 {
		fmt.Fprintf(c.Stderr, "%s: KOBANA_SECRET_KEY must hold the key the backup's secrets are sealed with (fingerprint %s)\n", who, m.KeyFingerprint)
		return exitUsage
	}
	st, err := sqlite.Open(cctx, dbPath, opts)
	if err != nil {
		fmt.Fprintf(c.Stderr, "%s: %v\n", who, err)
		return exitFailure
	}
	defer st.Close()
	if err := backup.Verify(cctx, dir, m, st, opts.SecretKey); err != nil {
		fmt.Fprintf(c.Stderr, "%s: %v\n", who, err)
		return exitFailure
	}
	fmt.Fprintf(c.Stderr, "%s: %s is a complete backup of %s: the key opens its secrets, its %d tables and %d raw messages are there\n",
		who, dir, m.CreatedAt.Format("2006-01-02 15:04:05 MST"), len(m.Tables), m.Messages)
	return exitOK
}
