package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// certFile is a TLS certificate kept in a PEM certificate file and its key
// file, read again when serve gets SIGHUP (a renewed certificate is taken
// without a restart; connections already open keep theirs).
type certFile struct {
	// what names the certificate in messages ("-smtp-tls-cert").
	what, certPath, keyPath string

	mu   sync.RWMutex
	cert *tls.Certificate
}

// loadCertFile reads the certificate once; an error says which flag's
// files are wrong.
func loadCertFile(what, certPath, keyPath string) (*certFile, error) {
	c := &certFile{what: what, certPath: certPath, keyPath: keyPath}
	if err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads the files again; on failure the certificate in use stays.
func (c *certFile) reload() error {
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		return fmt.Errorf("%s: %v", c.what, err)
	}
	c.mu.Lock()
	c.cert = &cert
	c.mu.Unlock()
	return nil
}

// get is the tls.Config's GetCertificate: the certificate last read.
func (c *certFile) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert, nil
}

// expiry is when the certificate in use expires (zero when unknown).
func (c *certFile) expiry() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.cert.Leaf == nil {
		return time.Time{}
	}
	return c.cert.Leaf.NotAfter
}

// config is a server TLS configuration serving the certificate.
func (c *certFile) config() *tls.Config {
	return &tls.Config{GetCertificate: c.get, MinVersion: tls.VersionTLS12}
}

// onHangup handles SIGHUP until ctx ends: serve does not stop; it reads its
// TLS certificates again (certs), and says so on w. It returns at once
// when called with no certificates to watch, after telling nothing: SIGHUP
// is then ignored all the same.
func onHangup(ctx context.Context, w io.Writer, certs []*certFile) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if len(certs) == 0 {
				fmt.Fprintln(w, "SIGHUP: nothing to reload (serve reloads its TLS certificates on SIGHUP); still serving")
				continue
			}
			// A panic while reloading is reported and the next SIGHUP
			// is handled as usual.
			panics.Do(panics.Background, "certificate reload", func() {
				for _, c := range certs {
					if err := c.reload(); err != nil {
						fmt.Fprintf(w, "SIGHUP: kept the certificate in use: %v\n", err)
						continue
					}
					fmt.Fprintf(w, "SIGHUP: reloaded %s from %s (expires %s); still serving\n", c.what, c.certPath, c.expiry().UTC().Format(time.RFC3339))
				}
			})
		}
	}()
}
