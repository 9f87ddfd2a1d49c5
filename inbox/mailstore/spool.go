package mailstore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/kobana/workflow/inbox"
)

// ErrNotFound reports that no message is stored under a workspace and id
// (never stored, or purged by retention). Errors that match it also match
// the domain's inbox.ErrPurged.
var ErrNotFound = errors.New("mailstore: message not found")

// gone is the error for a message that is not (or no longer) stored.
func gone(name string) error {
	return fmt.Errorf("message %s: %w (%w)", name, ErrNotFound, inbox.ErrPurged)
}

// Message is one consistent, read-only snapshot of a stored raw message:
// the domain's inbox.Message.
type Message = inbox.Message

// ErrTooLarge reports that a message passed the size limit of its spool.
var ErrTooLarge = errors.New("mailstore: message exceeds the size limit")

// Spool is an incoming message being written to a temporary file. Write
// appends (counting), ReadAt reads back what was written. Remove
// deletes the spool file's name when the message has been handled; a copy a
// store kept (a link, a large object) stays.
type Spool struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	size   int64
	limit  int64
	closed bool
	// syncing is the flush StartSync began (nil before); syncedSize the
	// size it covers.
	syncing    chan error
	syncedSize int64
}

// NewSpool creates an empty spool file in dir. A limit above zero makes
// Write fail with ErrTooLarge once the message would pass it.
func NewSpool(dir string, limit int64) (*Spool, error) {
	f, err := os.CreateTemp(dir, "incoming-*.eml")
	if err != nil {
		return nil, fmt.Errorf("mailstore: creating a spool file in %s: %w", dir, err)
	}
	return &Spool{f: f, path: f.Name(), limit: limit}, nil
}

// Write appends to the message (counting). It fails with ErrTooLarge, writing nothing
// of p, once the message would pass the limit.
func (s *Spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("mailstore: write to a closed spool")
	}
	if s.limit > 0 && s.size+int64(len(p)) > s.limit {
		return 0, ErrTooLarge
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("mailstore: writing spool %s: %w", s.path, err)
	}
	return n, nil
}

// ReadFrom copies r into the spool until EOF, with the same limit as Write.
func (s *Spool) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w, werr := s.Write(buf[:n])
			total += int64(w)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// ReadAt reads back what was written.
func (s *Spool) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.Size() {
		return 0, io.EOF
	}
	return s.f.ReadAt(p, off)
}

// Size is the number of bytes written so far.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// SHA256 is the digest of the bytes written so far, read back from the
// spool file.
func (s *Spool) SHA256() ([32]byte, error) {
	var d [32]byte
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(s, 0, s.Size())); err != nil {
		return d, fmt.Errorf("mailstore: reading spool %s: %w", s.path, err)
	}
	h.Sum(d[:0])
	return d, nil
}

// Path is the spool file's path (for stores that move it into place).
func (s *Spool) Path() string { return s.path }

// Remove closes the spool and deletes its file name. Calling it more than
// once is harmless.
func (s *Spool) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.syncing != nil {
		err := <-s.syncing // never close under a running flush
		s.syncing <- err
	}
	err := s.f.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("mailstore: removing spool %s: %w", s.path, rerr)
	}
	if err != nil {
		return fmt.Errorf("mailstore: closing spool %s: %w", s.path, err)
	}
	return nil
}

// StartSync begins flushing the spool file to stable storage in the
// background, so the flush overlaps what the caller does next (checking
// and parsing the message); a store's Keep then waits for it instead of
// starting its own. Call it once the message is complete.
func (s *Spool) StartSync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncing != nil || s.closed {
		return
	}
	done := make(chan error, 1)
	s.syncing, s.syncedSize = done, s.size
	f := s.f
	go func() { done <- f.Sync() }()
}

// sync flushes the spool file to stable storage: waits for the flush
// StartSync began, or flushes now when there was none or the spool grew
// since.
func (s *Spool) sync() error {
	s.mu.Lock()
	pending, covered, size := s.syncing, s.syncedSize, s.size
	s.mu.Unlock()
	if pending != nil {
		err := <-pending
		pending <- err // later calls see the same outcome
		if err == nil && covered == size {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mailstore: syncing spool %s: %w", s.path, err)
		}
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("mailstore: syncing spool %s: %w", s.path, err)
	}
	return nil
}

// NameError reports a workspace or message id that cannot name a stored
// message (empty, too long, or with characters outside [A-Za-z0-9_-]).
type NameError struct {
	What, Value string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("mailstore: invalid %s %q: use 1-128 characters from A-Z, a-z, 0-9, _ and -", e.What, e.Value)
}

// checkName validates one path component.
func checkName(what, v string) error {
	if v == "" || len(v) > 128 {
		return &NameError{What: what, Value: v}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return &NameError{What: what, Value: v}
		}
	}
	return nil
}
