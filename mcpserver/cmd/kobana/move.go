package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/server/move"
)

func init() {
	register("move", "move an embedded store, its raw messages and its pending jobs to PostgreSQL", moveCommand)
}

const moveUsage = `usage: kobana move -db PATH -to postgres://… [-messages DIR]

Moves the embedded store at PATH to an empty PostgreSQL database, with its
history: every record, identity, token (as its hash), sealed secret (as
sealed), signing key, the ledger and counters, every raw message (into
large objects) and every job not finished, in one transaction; then checks
the copy (rows counted on both sides, each message read back with its
digest, the jobs counted, the secrets opened). KOBANA_SECRET_KEY must hold
the key the secrets are sealed with; start kobana serve on the URL with it.
Stop every kobana serve on PATH first: the store is read as it is.

flags:
`

func moveCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana move", flag.ContinueOnError)
	db := fs.String("db", "kobana.db", "the embedded store to move")
	to := fs.String("to", "", "the PostgreSQL database to move it to (postgres://…; empty)")
	messages := fs.String("messages", "", "its raw messages (default: kobana-messages beside -db)")
	if code, ok := c.parseFlags(fs, moveUsage, args); !ok {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "kobana move: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	case !isPostgres(*to):
		return fail(exitUsage, "-to must be a postgres:// URL")
	case isPostgres(*db):
		return fail(exitUsage, "-db must be the embedded store's file")
	}
	if _, err := os.Stat(*db); err != nil {
		return fail(exitFailure, "%v", err)
	}
	key, ok := c.secretKey("kobana move")
	if !ok {
		return exitUsage
	}
	if key == nil {
		return fail(exitUsage, "KOBANA_SECRET_KEY must hold the key the store's secrets are sealed with: the target is opened with it (kobana admin rotate-secret-key moves a store that keeps its own key to one)")
	}
	if held, err := server.StoreServed(*db); err != nil {
		return fail(exitFailure, "%v", err)
	} else if held {
		return fail(exitFailure, "a kobana serve works %s: stop every kobana serve on it first", *db)
	}
	if *messages == "" {
		*messages = filepath.Join(filepath.Dir(*db), "kobana-messages")
	}
	ctx := c.context()
	src, code := c.openStore(ctx, "kobana move", *db)
	if src == nil {
		return code
	}
	defer src.Close()
	dst, code := c.openStore(ctx, "kobana move", *to)
	if dst == nil {
		return code
	}
	defer dst.Close()
	from, ok1 := src.(move.Source)
	target, ok2 := dst.(move.Target)
	if !ok1 || !ok2 {
		return fail(exitFailure, "cannot move %T to %T", src, dst)
	}
	var dir *mailstore.Dir
	if _, err := os.Stat(*messages); err == nil {
		if dir, err = mailstore.OpenDir(*messages); err != nil {
			return fail(exitFailure, "%v", err)
		}
	}
	rep, err := move.Move(ctx, move.Options{From: from, Messages: dir, To: target,
		Progress: func(format string, a ...any) { fmt.Fprintf(c.Stderr, "  "+format+"\n", a...) }})
	if errors.Is(err, move.ErrTargetNotEmpty) {
		return fail(exitFailure, "%v", err)
	}
	if err != nil {
		return fail(exitFailure, "%v (nothing was committed unless the check failed after the commit)", err)
	}
	var rows int64
	for _, n := range rep.Tables {
		rows += n
	}
	var jobs []string
	for k, n := range rep.Jobs {
		jobs = append(jobs, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(jobs)
	fmt.Fprintf(c.Stderr, "moved %s to %s: %d rows in %d tables, %d raw messages (%d bytes), jobs not finished: %s; checked. Start kobana serve -db '%s' with the same KOBANA_SECRET_KEY.\n",
		*db, redactURL(*to), rows, len(rep.Tables), rep.Messages, rep.MessageBytes, orNone(strings.Join(jobs, ", ")), redactURL(*to))
	return exitOK
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
