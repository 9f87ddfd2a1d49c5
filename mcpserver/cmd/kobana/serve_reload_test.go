package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/smtp"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial n
// to cert and key.
func writeCert(t *testing.T, cert, key string, n int64) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(n), Subject: pkix.Name{CommonName: "127.0.0.1"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert+".new", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key+".new", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	// As certbot does: the new files replace the old ones at once.
	os.Rename(cert+".new", cert)
	os.Rename(key+".new", key)
}

// serialOverSTARTTLS is the serial of the certificate the SMTP server at
// addr offers with STARTTLS.
func serialOverSTARTTLS(t *testing.T, addr string) int64 {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var serial int64
	err = c.StartTLS(&tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		serial = cs.PeerCertificates[0].SerialNumber.Int64()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return serial
}

// serialOverHTTPS is the serial of the certificate the HTTPS listener at
// addr offers.
func serialOverHTTPS(t *testing.T, addr string) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// SIGHUP reads the TLS certificates again (a renewal, as certbot leaves
// it) without stopping serve: STARTTLS and HTTPS offer the new one.
func TestServeSIGHUPReloadsTheCertificates(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeCert(t, cert, key, 1001)
	p := startKobana(t, nil, "serve", "-db", filepath.Join(dir, "k.db"), "-smtp", "127.0.0.1:0", "-smtp-tls-cert", cert, "-smtp-tls-key", key,
		"-http", "127.0.0.1:0", "-http-tls-cert", cert, "-http-tls-key", key, "-dns", spfZone(t))
	smtpAddr := p.await(smtpLine, 30*time.Second)[1]
	httpsAddr := p.await(regexp.MustCompile(`serving MCP on https://(\S+)/mcp`), 30*time.Second)[1]
	if s := serialOverSTARTTLS(t, smtpAddr); s != 1001 {
		t.Fatalf("STARTTLS offers serial %d, want 1001", s)
	}
	writeCert(t, cert, key, 1002)
	p.signal(syscall.SIGHUP)
	p.await(regexp.MustCompile(`SIGHUP: reloaded -smtp-tls-cert/-smtp-tls-key from .*; still serving`), 10*time.Second)
	p.await(regexp.MustCompile(`SIGHUP: reloaded -http-tls-cert/-http-tls-key from .*; still serving`), 10*time.Second)
	if s := serialOverSTARTTLS(t, smtpAddr); s != 1002 {
		t.Errorf("after SIGHUP STARTTLS offers serial %d, want 1002", s)
	}
	if s := serialOverHTTPS(t, httpsAddr); s != 1002 {
		t.Errorf("after SIGHUP HTTPS offers serial %d, want 1002", s)
	}
	p.signal(syscall.SIGTERM)
	if code, _ := p.wait(30 * time.Second); code != exitOK {
		t.Errorf("exit %d; output:\n%s", code, p.output)
	}
}
