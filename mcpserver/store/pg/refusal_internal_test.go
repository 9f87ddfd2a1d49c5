package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kobana/workflow/mcpserver/store"
)

// What PostgreSQL and the network answer while the database cannot take
// writes is a refusal, with its reason; an answer about what was written,
// or the caller giving up, is not.
func TestRefusal(t *testing.T) {
	pgErr := func(code string) error { return fmt.Errorf("pg: commit: %w", &pgconn.PgError{Code: code}) }
	for _, c := range []struct {
		err  error
		want string
	}{
		{pgErr("53100"), store.RefusedFull},
		{pgErr("25006"), store.RefusedReadOnly},
		{pgErr("57P01"), store.RefusedUnreachable},
		{pgErr("57P02"), store.RefusedUnreachable},
		{pgErr("57P03"), store.RefusedUnreachable},
		{pgErr("08006"), store.RefusedUnreachable},
		{pgErr("53300"), store.RefusedUnreachable},
		{fmt.Errorf("pg: begin: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), store.RefusedUnreachable},
		{fmt.Errorf("pg: commit: %w", io.ErrUnexpectedEOF), store.RefusedUnreachable},
		{fmt.Errorf("writing: %w", syscall.ENOSPC), store.RefusedFull},
		{pgErr("23505"), ""}, // unique violation
		{pgErr("40001"), ""}, // serialization failure
		{fmt.Errorf("pg: begin: %w", context.Canceled), ""},
		{errors.New("record not found"), ""},
		{nil, ""},
	} {
		if got := refusal(c.err); got != c.want {
			t.Errorf("refusal(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	err := store.Refused(refusal(pgErr("53100")), pgErr("53100"))
	if !errors.Is(err, store.ErrRefused) || store.RefusedReason(err) != store.RefusedFull {
		t.Errorf("%v: not a refusal for a full disk", err)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53100" {
		t.Errorf("%v: the driver's error is lost", err)
	}
}
