package mailstore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/kobana/workflow/mcpserver/inbox"
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

// Memory a spool may hold before it moves to a file, per spool and for all
// the process's spools together: small messages (the usual case) never
// touch the disk before they are kept, and memory stays bounded however many
// arrive at once.
const (
	SpoolMemoryBytes  = 1 << 20
	SpoolsMemoryBytes = 64 << 20
)

// chunkSize is the unit a spool holds its bytes in (and takes from the
// process-wide budget).
const chunkSize = 32 << 10

var (
	chunks = sync.Pool{New: func() any { return new([chunkSize]byte) }}
	// budget is the memory all spools may hold at once (SpoolsMemoryBytes).
	budget = &memoryBudget{left: SpoolsMemoryBytes}
)

// memoryBudget hands out the spools' shared memory allowance.
type memoryBudget struct {
	mu   sync.Mutex
	left int64
}

func (b *memoryBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left < n {
		return false
	}
	b.left -= n
	return true
}

func (b *memoryBudget) give(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// Spool is an incoming message while it arrives and until it is kept: Write
// appends (counting against its limit), ReadAt reads back what was written.
// It holds the bytes in memory while the message is small (SpoolMemoryBytes,
// within the process's SpoolsMemoryBytes) and moves them to a temporary file
// in its directory beyond. A spool is never durable: a store makes its own
// durable copy (Store.Prepare, Store.KeepTx). Remove releases it.
type Spool struct {
	mu     sync.Mutex
	dir    string
	limit  int64
	size   int64
	mem    []*[chunkSize]byte
	f      *os.File
	closed bool
}

// NewSpool returns an empty spool whose file, if it needs one, goes in
// dir. A limit above zero makes Write fail with ErrTooLarge once the
// message would pass it.
func NewSpool(dir string, limit int64) (*Spool, error) {
	if dir == "" {
		return nil, errors.New("mailstore: a spool needs a directory")
	}
	return &Spool{dir: dir, limit: limit}, nil
}

// Write appends to the message (counting). It fails with ErrTooLarge,
// writing nothing of p, once the message would pass the limit.
func (s *Spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.room(len(p)); err != nil {
		return 0, err
	}
	if s.f == nil && !s.grow(s.size+int64(len(p))) {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	if s.f != nil {
		n, err := s.f.Write(p)
		s.size += int64(n)
		if err != nil {
			return n, fmt.Errorf("mailstore: writing spool %s: %w", s.f.Name(), err)
		}
		return n, nil
	}
	n := 0
	for n < len(p) {
		c := s.mem[s.size/chunkSize]
		k := copy(c[s.size%chunkSize:], p[n:])
		n += k
		s.size += int64(k)
	}
	return n, nil
}

// room checks that n more bytes fit the limit.
func (s *Spool) room(n int) error {
	if s.closed {
		return errors.New("mailstore: write to a removed spool")
	}
	if s.limit > 0 && s.size+int64(n) > s.limit {
		return ErrTooLarge
	}
	return nil
}

// grow makes the memory hold size bytes, if the spool's and the process's
// allowances let it; false means the spool must move to a file.
func (s *Spool) grow(size int64) bool {
	if size > SpoolMemoryBytes {
		return false
	}
	need := int((size + chunkSize - 1) / chunkSize)
	if need <= len(s.mem) {
		return true
	}
	if !budget.take(int64(need-len(s.mem)) * chunkSize) {
		return false
	}
	for len(s.mem) < need {
		s.mem = append(s.mem, chunks.Get().(*[chunkSize]byte))
	}
	return true
}

// spill moves the bytes held in memory to a new temporary file.
func (s *Spool) spill() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("mailstore: creating the spool directory %s: %w", s.dir, err)
	}
	f, err := os.CreateTemp(s.dir, "incoming-*.eml")
	if err != nil {
		return fmt.Errorf("mailstore: creating a spool file in %s: %w", s.dir, err)
	}
	for i, rest := 0, s.size; rest > 0; i++ {
		n := min(rest, chunkSize)
		if _, err := f.Write(s.mem[i][:n]); err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("mailstore: writing spool %s: %w", f.Name(), err)
		}
		rest -= n
	}
	s.release()
	s.f = f
	return nil
}

// release gives the memory back.
func (s *Spool) release() {
	if len(s.mem) == 0 {
		return
	}
	budget.give(int64(len(s.mem)) * chunkSize)
	for _, c := range s.mem {
		chunks.Put(c)
	}
	s.mem = nil
}

// ReadFrom copies r into the spool until EOF, with the same limit as Write.
// While the message is held in memory it is read straight into it.
func (s *Spool) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var buf []byte
	for {
		s.mu.Lock()
		if err := s.room(1); err != nil {
			s.mu.Unlock()
			if errors.Is(err, ErrTooLarge) {
				// Full exactly: only a byte past the limit is an error.
				var one [1]byte
				if n, rerr := io.ReadFull(r, one[:]); n == 0 && rerr == io.EOF {
					return total, nil
				} else if n == 0 && rerr != nil {
					return total, rerr
				}
			}
			return total, err
		}
		var dst []byte
		if s.f == nil && s.grow(s.size+1) {
			off := int(s.size % chunkSize)
			dst = s.mem[s.size/chunkSize][off:]
			if s.limit > 0 {
				dst = dst[:min(int64(len(dst)), s.limit-s.size)]
			}
		}
		s.mu.Unlock()
		if dst != nil {
			n, err := r.Read(dst)
			s.mu.Lock()
			s.size += int64(n)
			s.mu.Unlock()
			total += int64(n)
			if err == io.EOF {
				return total, nil
			}
			if err != nil {
				return total, err
			}
			continue
		}
		if buf == nil {
			buf = make([]byte, 64<<10)
		}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("mailstore: read from a removed spool")
	}
	if off < 0 {
		return 0, fmt.Errorf("mailstore: negative offset %d", off)
	}
	if off >= s.size {
		return 0, io.EOF
	}
	if s.f != nil {
		n, err := s.f.ReadAt(p[:min(int64(len(p)), s.size-off)], off)
		if err == nil && n < len(p) {
			err = io.EOF
		}
		return n, err
	}
	n := 0
	for n < len(p) && off < s.size {
		c := s.mem[off/chunkSize]
		end := min(int64(chunkSize), s.size-off/chunkSize*chunkSize)
		k := copy(p[n:], c[off%chunkSize:end])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Size is the number of bytes written so far.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// SHA256 is the digest of the bytes written so far.
func (s *Spool) SHA256() ([32]byte, error) {
	var d [32]byte
	h := sha256.New()
	if err := s.copyTo(h); err != nil {
		return d, fmt.Errorf("mailstore: reading a spool: %w", err)
	}
	h.Sum(d[:0])
	return d, nil
}

// InMemory reports whether the spool holds its bytes in memory (false once
// it has moved to a file).
func (s *Spool) InMemory() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f == nil
}

// copyTo writes the whole spool to w: from memory, or from the spool's
// file (which lets the kernel copy between files without passing the bytes
// through the process).
func (s *Spool) copyTo(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("mailstore: read from a removed spool")
	}
	if s.f == nil {
		for i, rest := 0, s.size; rest > 0; i++ {
			n := min(rest, chunkSize)
			if _, err := w.Write(s.mem[i][:n]); err != nil {
				return err
			}
			rest -= n
		}
		return nil
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("mailstore: reading spool %s: %w", s.f.Name(), err)
	}
	_, err := io.Copy(w, &io.LimitedReader{R: s.f, N: s.size})
	if _, serr := s.f.Seek(0, io.SeekEnd); err == nil && serr != nil {
		err = serr
	}
	return err
}

// Remove releases the spool: its memory, or its file. A copy a store kept
// stays. Calling it more than once is harmless.
func (s *Spool) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.release()
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("mailstore: removing spool %s: %w", name, rerr)
	}
	if err != nil {
		return fmt.Errorf("mailstore: closing spool %s: %w", name, err)
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
