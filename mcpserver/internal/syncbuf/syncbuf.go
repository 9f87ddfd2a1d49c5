// Package syncbuf is a buffer that goroutines may write to while another
// reads what was written: the output or log of a server a test (or `kobana
// demo`) runs and reads meanwhile. Buffer is the entry point.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer safe for concurrent writes and reads. The zero
// value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
