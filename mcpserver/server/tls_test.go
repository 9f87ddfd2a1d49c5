package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
)

// selfSigned writes a self-signed certificate for the names into dir and
// returns the files and a pool that trusts it.
func selfSigned(t *testing.T, dir string, names ...string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// metadataOver GETs the protected-resource metadata over HTTPS with roots.
func metadataOver(t *testing.T, url string, roots *x509.CertPool) map[string]any {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := c.Get(url + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %s %v", resp.Status, m)
	}
	return m
}

// TestHTTPSFromFiles: -http-tls-cert/-key serve HTTPS, the public URL and
// so the OAuth metadata are https, and the embedded authorization server is
// on.
func TestHTTPSFromFiles(t *testing.T) {
	st, path := openStore(t)
	cert, key, pool := selfSigned(t, t.TempDir(), "localhost", "127.0.0.1")
	var notices syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, HTTP: &server.HTTP{Addr: "127.0.0.1:0", TLS: &server.TLS{CertFile: cert, KeyFile: key}}, Notices: &notices})
	defer stop()
	base := "https://" + addrs["http"].String()
	m := metadataOver(t, base, pool)
	if m["resource"] != base+"/mcp" || fmt.Sprint(m["authorization_servers"]) != "["+base+"]" {
		t.Errorf("metadata over HTTPS = %v", m)
	}
	if !strings.Contains(notices.String(), "serving MCP on "+base+"/mcp") {
		t.Errorf("notices: %s", notices.String())
	}
	// Plain HTTP on that port gets no answer it can use.
	if resp, err := http.Get("http://" + addrs["http"].String() + "/mcp"); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS port: %s", resp.Status)
		}
	}
}

// TestOAuthNeedsHTTPS: a plain-http public URL that is not loopback
// leaves OAuth off (static tokens only) and says how to turn it on.
func TestOAuthNeedsHTTPS(t *testing.T) {
	st, path := openStore(t)
	var notices syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, HTTP: &server.HTTP{Addr: "127.0.0.1:0", PublicURL: "http://kobana.example.com"}, Notices: &notices})
	defer stop()
	if !strings.Contains(notices.String(), "OAuth (for Claude.ai, ChatGPT and other remote hosts) needs HTTPS") {
		t.Errorf("notices: %s", notices.String())
	}
	req, _ := http.NewRequest("GET", "http://"+addrs["http"].String()+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Host = "localhost"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("metadata served without HTTPS")
	}
}

// loopbackDNS serves DNS on loopback answering every A question with
// 127.0.0.1 (and no AAAA), so that a test CA resolves the test's names to
// the server under test; it returns its address.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, question := range q.Question {
			if question.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(127, 0, 0, 1)})
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// pebble starts Let's Encrypt's test CA (Debian's pebble package) on
// loopback, validating TLS-ALPN-01 challenges on tlsPort; it returns the
// directory URL, the roots that verify the directory, and the roots of
// the certificates it issues.
func pebble(t *testing.T, tlsPort int) (dir string, dirRoots *x509.CertPool, issued func() *x509.CertPool) {
	t.Helper()
	exe, err := exec.LookPath("pebble")
	if err != nil {
		if os.Getenv("KOBANA_PEBBLE_REQUIRED") != "" {
			t.Fatal("no pebble on PATH, and KOBANA_PEBBLE_REQUIRED is set: install Debian's pebble package")
		}
		t.Skip("no pebble on PATH: install Debian's pebble package (.ci/run does)")
	}
	work := t.TempDir()
	cert, key, pool := selfSigned(t, work, "127.0.0.1", "localhost")
	free := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	listen, mgmt := free(), free()
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress": fmt.Sprintf("127.0.0.1:%d", listen), "managementListenAddress": fmt.Sprintf("127.0.0.1:%d", mgmt),
		"certificate": cert, "privateKey": key, "httpPort": free(), "tlsPort": tlsPort, "ocspResponderURL": "", "externalAccountBindingRequired": false,
	}}
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(work, "pebble.json")
	os.WriteFile(cfgFile, b, 0o600)
	cmd := exec.Command(exe, "-config", cfgFile, "-dnsserver", loopbackDNS(t))
	// No deliberately rejected nonces or validation sleeps: the test is
	// about the protocol, not Pebble's chaos.
	cmd.Env = append(os.Environ(), "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_VA_NOSLEEP=1", "PEBBLE_AUTHZREUSE=0")
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		t.Logf("pebble:\n%s", out.String())
	})
	dir = fmt.Sprintf("https://127.0.0.1:%d/dir", listen)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if err := testwait.Until(20*time.Second, func() error {
		resp, err := c.Get(dir)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}); err != nil {
		t.Fatalf("pebble did not start: %v\n%s", err, out.String())
	}
	issued = func() *x509.CertPool {
		resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/roots/0", mgmt))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		pemBytes, _ := io.ReadAll(resp.Body)
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(pemBytes) {
			t.Fatalf("pebble's root: %q", pemBytes)
		}
		return p
	}
	return dir, pool, issued
}

// TestACMEWithPebble: with ACME, the server gets its certificate from a
// real ACME CA (Pebble), which validates the TLS-ALPN-01 challenge by
// connecting to the server itself, and then serves HTTPS with it.
func TestACMEWithPebble(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir, dirRoots, issued := pebble(t, port)
	st, path := openStore(t)
	const domain = "mcp.kobana.test"
	base := fmt.Sprintf("https://%s:%d", domain, port)
	_, stop := start(t, server.Config{Store: st, StorePath: path, HTTP: &server.HTTP{Addr: fmt.Sprintf("127.0.0.1:%d", port), PublicURL: base,
		TLS: &server.TLS{ACMEDomains: []string{domain}, ACMEDirectory: dir, ACMERoots: dirRoots, ACMECache: t.TempDir()}}})
	defer stop()
	// The first handshake for the domain gets the certificate (the CA
	// validates meanwhile, over this same listener).
	roots := issued()
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
		}}}
	resp, err := c.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatalf("HTTPS with the ACME certificate: %v", err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != http.StatusOK || m["resource"] != base+"/mcp" {
		t.Errorf("metadata = %s %v", resp.Status, m)
	}
	if len(resp.TLS.PeerCertificates) == 0 || resp.TLS.PeerCertificates[0].DNSNames[0] != domain {
		t.Errorf("certificate = %+v", resp.TLS.PeerCertificates)
	}
}
