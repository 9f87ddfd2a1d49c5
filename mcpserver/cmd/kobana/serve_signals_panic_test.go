package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// panickyWriter keeps what is written to it, and panics on the first
// write containing trigger while armed.
type panickyWriter struct {
	trigger string
	armed   atomic.Bool
	mu      sync.Mutex
	b       strings.Builder
}

func (w *panickyWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.trigger) && w.armed.CompareAndSwap(true, false) {
		panic("injected in the certificate reload")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *panickyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A panic while SIGHUP reloads the certificates (here in the writer that
// reports the reload) is reported with its stack on the background
// surface, serve goes on, and the next SIGHUP reloads as usual.
func TestACertificateReloadPanicIsContained(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeCert(t, cert, key, 1)
	c, err := loadCertFile("-smtp-tls-cert/-smtp-tls-key", cert, key)
	if err != nil {
		t.Fatal(err)
	}
	serial := func() int64 {
		got, _ := c.get(nil)
		return got.Leaf.SerialNumber.Int64()
	}
	w := &panickyWriter{trigger: "SIGHUP: reloaded"}
	w.armed.Store(true)
	var stack atomic.Value
	stop := panics.Listen(func(p *panics.Panic) {
		if p.Surface == panics.Background && p.Where == "certificate reload" {
			stack.Store(string(p.Stack))
		}
	})
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onHangup(ctx, w, []*certFile{c}) // SIGHUP is handled from here on
	before := panics.Count(panics.Background)

	writeCert(t, cert, key, 2)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Until(10*time.Second, func() error {
		if n := panics.Count(panics.Background) - before; n != 1 {
			return fmt.Errorf("%d panics counted on the background surface, want 1", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s, _ := stack.Load().(string); !strings.Contains(s, "onHangup") {
		t.Fatalf("the panic was reported without its stack: %q", s)
	}
	if s := serial(); s != 2 {
		t.Fatalf("serial %d in use after the first SIGHUP, want 2", s)
	}

	// The next SIGHUP is handled as usual.
	writeCert(t, cert, key, 3)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Until(10*time.Second, func() error {
		if !strings.Contains(w.String(), "SIGHUP: reloaded -smtp-tls-cert/-smtp-tls-key") || serial() != 3 {
			return errors.New("the SIGHUP after the panic did not reload; output: " + w.String())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
