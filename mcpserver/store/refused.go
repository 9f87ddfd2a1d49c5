package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Why a store refused a write (RefusedError.Reason, the reason label of
// kobana_store_write_errors_total).
const (
	// RefusedFull: the database's disk is full (SQLITE_FULL, ENOSPC,
	// PostgreSQL's 53100 disk_full).
	RefusedFull = "full"
	// RefusedReadOnly: the database takes no writes (SQLITE_READONLY, a
	// read-only file system, PostgreSQL's 25006 read_only_sql_transaction: a
	// standby, or a primary being failed over).
	RefusedReadOnly = "read_only"
	// RefusedIO: the database's disk failed a read or a write (SQLITE_IOERR).
	RefusedIO = "io"
	// RefusedUnreachable: the database could not be reached or is not
	// serving (a connection refused, cut or timed out, PostgreSQL's 08xxx,
	// 57P01–57P03: shutting down, crashed, starting up).
	RefusedUnreachable = "unreachable"
)

// RefusedReasons lists every reason a store refuses a write for, for
// metrics that start each at zero.
func RefusedReasons() []string {
	return []string{RefusedFull, RefusedReadOnly, RefusedIO, RefusedUnreachable}
}

// ErrRefused is wrapped by every RefusedError: the database refused a
// write for a reason of its own (its disk, its connection), not for what
// was written. The same write may succeed once the database takes writes
// again.
var ErrRefused = errors.New("the database refuses writes")

// RefusedError is the error of a transaction the database refused
// (ErrRefused): Reason is one of the Refused… constants, Err the driver's
// error.
type RefusedError struct {
	Reason string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%v (%s: %s)", e.Err, ErrRefused, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Is reports ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Refused returns err as a RefusedError for reason — or err itself when it
// is nil, when reason is empty (the driver's error is no refusal) or when
// it already is one.
func Refused(reason string, err error) error {
	if err == nil || reason == "" || errors.Is(err, ErrRefused) {
		return err
	}
	return &RefusedError{Reason: reason, Err: err}
}

// RefusedReason returns why err says the database refused a write, or ""
// when it does not.
func RefusedReason(err error) string {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// WritableAgain is how long a store that refused a write must go without
// another refusal, a transaction having committed since, before it is said
// to take writes again: a disk with room for a small write but not for a
// larger one, or a database some of whose connections are cut, does not
// flip between the two with each transaction.
const WritableAgain = 3 * time.Second

// WriteHealth follows whether a store takes writes: each transaction's end
// is told to Observe; a refused one makes the store unwritable until a
// transaction commits and none is refused for WritableAgain. The zero
// value is a writable store with no errors counted. It is safe for
// concurrent use.
type WriteHealth struct {
	mu        sync.Mutex
	reason    string    // why the store refuses writes; "" while it takes them
	since     time.Time // when it began refusing them
	refused   time.Time // the last refusal
	committed bool      // a transaction committed after the last refusal
	counts    sync.Map  // reason → *atomic.Uint64
	now       func() time.Time
}

func (h *WriteHealth) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// Observe takes the outcome of a transaction: nil (committed) counts
// towards the store taking writes again, a refusal (ErrRefused) makes it
// unwritable and is counted; any other error says nothing about the store.
func (h *WriteHealth) Observe(err error) {
	if err == nil {
		h.mu.Lock()
		h.committed = h.reason != ""
		h.mu.Unlock()
		return
	}
	reason := RefusedReason(err)
	if reason == "" {
		return
	}
	c, _ := h.counts.LoadOrStore(reason, new(atomic.Uint64))
	c.(*atomic.Uint64).Add(1)
	h.mu.Lock()
	now := h.clock()
	if h.reason == "" {
		h.since = now
	}
	h.reason, h.refused, h.committed = reason, now, false
	h.mu.Unlock()
}

// Refusing returns why the store refuses writes and since when, or "" while
// it takes them: it never refused one, or a transaction committed after
// the last refusal, WritableAgain or longer ago.
func (h *WriteHealth) Refusing() (reason string, since time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reason != "" && h.committed && h.clock().Sub(h.refused) >= WritableAgain {
		h.reason, h.committed = "", false
	}
	return h.reason, h.since
}

// Errors returns how many transactions were refused for reason.
func (h *WriteHealth) Errors(reason string) uint64 {
	if c, ok := h.counts.Load(reason); ok {
		return c.(*atomic.Uint64).Load()
	}
	return 0
}

// WriteWatcher is implemented by stores that follow whether they take
// writes (store/sqlite, store/pg): what /readyz and the metrics read.
type WriteWatcher interface {
	WriteHealth() *WriteHealth
}
