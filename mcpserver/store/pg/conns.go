package pg

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// conns keeps dead connections out of the store's work. Backends go away
// together (a server restart, an operator terminating them, a proxy cut),
// leaving several dead connections idle in the pool; pgxpool pings an idle
// connection before handing it out only when it has been idle for over a
// second. So once any statement sees its connection die, every connection
// that was idle at that moment is pinged before its next use (and dropped if
// dead), and the statement is sent again on the connection that passes.
type conns struct {
	epoch time.Time // a monotonic base for lastDeath
	// lastDeath is when a connection was last seen dying, as time since
	// epoch; 0 means never.
	lastDeath atomic.Int64
	// attempts bounds a retried statement: one more than the pool's size.
	// Each attempt that fails on a dead connection takes that connection out
	// of the pool for good, so this many attempts always reach a connection
	// opened after the deaths, even if no ping could tell.
	attempts int
}

func newConns(cfg *pgxpool.Config) *conns {
	c := &conns{epoch: time.Now(), attempts: int(cfg.MaxConns) + 1}
	if c.attempts < 2 {
		c.attempts = 2
	}
	cfg.ShouldPing = c.shouldPing
	return c
}

// sawDeath records that a connection was just seen dying.
func (c *conns) sawDeath() {
	c.lastDeath.Store(int64(time.Since(c.epoch)))
}

// shouldPing is the pool's ShouldPing hook: pgxpool's own rule (idle for over
// a second), and any connection that went idle before the last death seen.
func (c *conns) shouldPing(_ context.Context, p pgxpool.ShouldPingParams) bool {
	if p.IdleDuration > time.Second {
		return true
	}
	death := time.Duration(c.lastDeath.Load())
	return death != 0 && time.Since(c.epoch)-p.IdleDuration <= death
}

// retry runs f until it succeeds, fails with anything but a dead connection,
// or has used c.attempts attempts or ctx. After a dead connection f is sent
// again only when that cannot change anything twice: for reads and
// idempotent writes after any connection loss, otherwise only when the
// statement never reached the server. A failure to connect, or a timeout, is
// not retried: the server is unreachable and another wait would only add to
// the delay.
func (c *conns) retry(ctx context.Context, idempotent bool, f func() error) error {
	return c.retryWhen(ctx, func(err error) bool { return died(err, idempotent) }, f)
}

// retryWhen runs f until it succeeds, fails with an error dead does not
// call a dead connection's, or has used c.attempts attempts or ctx.
func (c *conns) retryWhen(ctx context.Context, dead func(error) bool, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if connLost(err) && !unreachable(err) {
			c.sawDeath()
		}
		if !dead(err) || attempt >= c.attempts {
			return err
		}
	}
}

// died reports whether err is the failure of a connection that had died (as
// opposed to an answer, an unreachable server or a timeout) after which the
// statement may be sent again (see retry for idempotent).
func died(err error, idempotent bool) bool {
	if unreachable(err) {
		return false
	}
	return pgconn.SafeToRetry(err) || (idempotent && connLost(err))
}

// unreachable reports a failure to connect or a timeout.
func unreachable(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.As(err, &connectErr) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// connLost reports an error that ends a connection: the network failed or
// closed, or the server said it is closing the session (class 08, connection
// exception; 57P01–57P03, backend terminated or server shutting down).
func connLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed)
}
