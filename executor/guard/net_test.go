package guard_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/executor/guard"
)

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// loopbackAllowed is the guard tests use to reach their own servers.
var loopbackAllowed = &guard.Guard{Allow: prefixes("127.0.0.0/8", "::1/128")}

// requireDenied checks that err is a dial-time refusal of want, reachable
// through the whole chain net/http builds: *url.Error → *net.OpError →
// *guard.DeniedError.
func requireDenied(t *testing.T, err error, want netip.Addr, class string) *guard.DeniedError {
	t.Helper()
	if err == nil {
		t.Fatalf("request succeeded, want a refusal of %s", want)
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("error %T %v is not a *url.Error", err, err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		t.Errorf("error %v carries no dial *net.OpError", err)
	}
	var de *guard.DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("errors.As(%v, *guard.DeniedError) = false", err)
	}
	if de.Addr.Unmap() != want.Unmap() {
		t.Errorf("DeniedError.Addr = %s, want %s", de.Addr, want)
	}
	if class != "" && de.Class != class {
		t.Errorf("DeniedError.Class = %q, want %q", de.Class, class)
	}
	return de
}

func TestGuardedClientRefusesLocalListener(t *testing.T) {
	for _, tc := range []struct {
		name, network, listen string
		addr                  netip.Addr
		allow                 string
	}{
		{"ipv4", "tcp4", "127.0.0.1:0", netip.MustParseAddr("127.0.0.1"), "127.0.0.0/8"},
		{"ipv6", "tcp6", "[::1]:0", netip.MustParseAddr("::1"), "::1/128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCountingServer(t, tc.network, tc.listen, nil)

			_, err := get(t, (&guard.Guard{}).Client(), srv.URL+"/")
			requireDenied(t, err, tc.addr, "loopback")
			want := "address " + tc.addr.String() + " is denied: loopback"
			if !strings.HasSuffix(err.Error(), want) {
				t.Errorf("error %q does not end with %q", err, want)
			}

			// An allow-list that does not cover the address changes nothing.
			_, err = get(t, (&guard.Guard{Allow: prefixes("10.0.0.0/8", "fd00::/8")}).Client(), srv.URL+"/")
			requireDenied(t, err, tc.addr, "loopback")

			// The same request through a client whose allow-list covers the
			// listener gets through: the listener is real.
			resp, err := get(t, (&guard.Guard{Allow: prefixes(tc.allow)}).Client(), srv.URL+"/")
			if err != nil {
				t.Fatalf("allow-listed request: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != "ok" {
				t.Fatalf("allow-listed request: %d %q", resp.StatusCode, body)
			}
			srv.expect(t, 1, "two refused requests then one allowed")
		})
	}
}

// TestRequestWithBodyIsRefusedBeforeReading: a request with a body (what a
// workflow step sends) is refused the same way, before a byte of the body
// is read.
func TestRequestWithBodyIsRefusedBeforeReading(t *testing.T) {
	srv := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	body := &countingReader{r: strings.NewReader(`{"secret":"s3cr3t"}`)}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hook", body)
	_, err := (&guard.Guard{}).Client().Do(req)
	requireDenied(t, err, netip.MustParseAddr("127.0.0.1"), "loopback")
	if body.n != 0 {
		t.Errorf("%d bytes of the body were read before the refusal", body.n)
	}
	resp, err := get(t, loopbackAllowed.Client(), srv.URL+"/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("allow-listed request: %v", err)
	}
	srv.expect(t, 1, "one refused POST then one allowed GET")
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// resolverMode names the environment variable that marks a child test
// process started by TestAlternateSpellingsDeniedAtDialTime.
const resolverMode = "GUARD_TEST_RESOLVER"

// TestAlternateSpellingsDeniedAtDialTime sends requests to other spellings
// of 127.0.0.1 through the guarded client, bypassing CheckURL, so that only
// the dial-time check stands between them and a real listener. Whatever the
// resolver makes of a spelling, nothing may reach the server. A client
// allowed to reach loopback then tells which spellings the resolver really
// turned into 127.0.0.1: for those, the refusal must be the guard's.
//
// The test runs with the process's resolver (Go's own, by default) and
// again in a child process with GODEBUG=netdns=cgo, where getaddrinfo
// accepts the inet_aton spellings (2130706433, 0x7f.1, 0177.0.0.1).
func TestAlternateSpellingsDeniedAtDialTime(t *testing.T) {
	mode := os.Getenv(resolverMode)
	if mode == "" {
		mode = "default"
		t.Run("child-cgo-resolver", func(t *testing.T) {
			exe, err := os.Executable()
			if err != nil {
				t.Skip(err)
			}
			cmd := exec.Command(exe, "-test.run=^TestAlternateSpellingsDeniedAtDialTime$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), resolverMode+"=cgo", "GODEBUG=netdns=cgo")
			out, err := cmd.CombinedOutput()
			for line := range strings.Lines(string(out)) {
				if strings.Contains(line, "resolver") || strings.Contains(line, "FAIL") || strings.Contains(line, "Error") {
					t.Log(strings.TrimSpace(line))
				}
			}
			if err != nil {
				t.Fatalf("child with GODEBUG=netdns=cgo failed: %v\n%s", err, out)
			}
		})
	}

	spellings := []string{
		"2130706433", "0x7f.1", "0177.0.0.1", "127.1", "0x7f000001", "017700000001", "0x7f.0.0.1",
		"127.0.0.1.", "localhost", "LOCALHOST", "localhost.",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]",
	}
	mustResolve := map[string]bool{"localhost": true, "[::ffff:127.0.0.1]": true, "[::ffff:7f00:1]": true}
	if mode == "cgo" && cgoEnabled {
		for _, s := range []string{"2130706433", "0x7f.1", "0177.0.0.1", "127.1"} {
			mustResolve[s] = true
		}
	}
	for _, sp := range spellings {
		t.Run(sp, func(t *testing.T) {
			t.Parallel()
			srv := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
			target := "http://" + sp + ":" + srv.port + "/"

			denied := (&guard.Guard{}).Client()
			_, deniedErr := doWithin(denied, target, 5*time.Second)
			if deniedErr == nil {
				t.Fatalf("GET %s succeeded through the guard", target)
			}
			if got := srv.counts(); got != [3]int64{} {
				t.Fatalf("GET %s: server saw %v after the refusal", target, got)
			}

			allowedTr := loopbackAllowed.Transport()
			allowedTr.DisableKeepAlives = true
			resp, err := doWithin(&http.Client{Transport: allowedTr}, target, 5*time.Second)
			if err != nil {
				if mustResolve[sp] {
					t.Fatalf("%s should resolve to loopback with the %s resolver, but: %v", sp, mode, err)
				}
				t.Logf("%s resolver: %s does not resolve (%v); refused either way (%v), server untouched", mode, sp, err, deniedErr)
				srv.untouched(t, sp)
				return
			}
			resp.Body.Close()
			// The resolver turned it into loopback, so the refusal was the guard's.
			requireDenied(t, deniedErr, netip.MustParseAddr("127.0.0.1"), "")
			t.Logf("%s resolver: %s resolves to 127.0.0.1; guard refused it: %v", mode, sp, deniedErr)
			srv.expect(t, 1, sp+": one refused request then one allowed")
		})
	}
}

func doWithin(c *http.Client, target string, d time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	// Read the body before the context ends.
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, err
}

// TestDNSRebinding: a name answers a public address first and 127.0.0.1
// afterwards. A check made on the first answer passes; the guarded dialer
// resolves again when it connects, checks the address it is about to dial,
// and refuses. With loopback allow-listed, the same name reaches the
// server: the second answer really did point at a live listener.
func TestDNSRebinding(t *testing.T) {
	srv := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	public := netip.MustParseAddr("93.184.216.34")
	loopback := netip.MustParseAddr("127.0.0.1")
	dns := newFakeDNS(t, map[string][]netip.Addr{"rebind.test.": {public, loopback}})
	ctx := context.Background()

	var g guard.Guard
	ips, err := dns.resolver().LookupNetIP(ctx, "ip4", "rebind.test")
	if err != nil || len(ips) != 1 || ips[0] != public {
		t.Fatalf("first lookup = %v, %v; want [%s]", ips, err, public)
	}
	if err := g.CheckAddr(ips[0]); err != nil {
		t.Fatalf("a check of the first answer refuses it: %v", err)
	}

	client := func(g *guard.Guard) *http.Client {
		d := g.Dialer()
		d.Resolver = dns.resolver()
		tr := g.Transport()
		tr.DialContext = d.DialContext
		return &http.Client{Transport: tr}
	}
	target := "http://rebind.test:" + srv.port + "/"
	_, err = get(t, client(&g), target)
	requireDenied(t, err, loopback, "loopback")
	if n := dns.queries("rebind.test."); n < 2 {
		t.Fatalf("the name was resolved %d times; the dial did not resolve it again", n)
	}
	srv.untouched(t, "rebinding refused")

	resp, err := get(t, client(loopbackAllowed), target)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("allow-listed request to the rebound name: %v", err)
	}
	srv.expect(t, 1, "refused rebinding then one allowed request")
}

// TestNameResolvingToLoopbackViaResolver: an ordinary-looking name whose
// DNS answer is 127.0.0.1 is refused at dial time.
func TestNameResolvingToLoopbackViaResolver(t *testing.T) {
	srv := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	dns := newFakeDNS(t, map[string][]netip.Addr{"internal.test.": {netip.MustParseAddr("127.0.0.1")}})
	g := &guard.Guard{}
	d := g.Dialer()
	d.Resolver = dns.resolver()
	tr := g.Transport()
	tr.DialContext = d.DialContext
	_, err := get(t, &http.Client{Transport: tr}, "http://internal.test:"+srv.port+"/")
	requireDenied(t, err, netip.MustParseAddr("127.0.0.1"), "loopback")
	srv.untouched(t, "name resolving to loopback")
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	next := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	client := loopbackAllowed.Client()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			first := newCountingServer(t, "tcp4", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, next.URL+"/next", code)
			}))
			req, _ := http.NewRequest(http.MethodPost, first.URL+"/start", strings.NewReader(`{"a":1}`))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != code {
				t.Errorf("status %d, want the redirect itself, %d", resp.StatusCode, code)
			}
			if loc := resp.Header.Get("Location"); loc != next.URL+"/next" {
				t.Errorf("Location %q, want %q", loc, next.URL+"/next")
			}
			first.expect(t, 1, "the redirecting server")
		})
	}
	next.untouched(t, "the redirect target")

	// A redirect to the metadata service is returned as it is, too.
	meta := newCountingServer(t, "tcp4", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	resp, err := get(t, client, meta.URL)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("redirect to metadata: %v", err)
	}
}

// TestProxyEnvironmentIsIgnored sets every proxy variable to a listening
// proxy. The guarded transport connects directly (and is checked on the
// address it dials); the proxy sees nothing. A transport that honours the
// variables, as http.DefaultTransport does, goes to the proxy instead.
func TestProxyEnvironmentIsIgnored(t *testing.T) {
	proxy := newCountingServer(t, "tcp4", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "from the proxy")
	}))
	target := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	tlsTarget := newCountingTLSServer(t, "tcp4", "127.0.0.1:0", nil)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	// A name, not a loopback literal: proxy rules never apply to localhost
	// or loopback IPs, which would make this test prove nothing.
	dns := newFakeDNS(t, map[string][]netip.Addr{"target.test.": {netip.MustParseAddr("127.0.0.1")}})

	pool := x509.NewCertPool()
	pool.AddCert(tlsTarget.Certificate())
	client := func(g *guard.Guard) *http.Client {
		c := g.Client()
		tr := c.Transport.(*http.Transport)
		if tr.Proxy != nil {
			t.Fatal("guard transport has a Proxy function")
		}
		d := g.Dialer()
		d.Resolver = dns.resolver()
		tr.DialContext = d.DialContext
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "example.com"} // httptest's certificate
		return c
	}

	plain := "http://target.test:" + target.port + "/"
	secure := "https://target.test:" + tlsTarget.port + "/"
	for _, u := range []string{plain, secure} {
		_, err := get(t, client(&guard.Guard{}), u)
		requireDenied(t, err, netip.MustParseAddr("127.0.0.1"), "loopback")
		resp, err := get(t, client(loopbackAllowed), u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "ok" {
			t.Fatalf("GET %s answered %q, not the target's %q", u, body, "ok")
		}
	}
	proxy.untouched(t, "the proxy named by HTTP_PROXY/HTTPS_PROXY")
	target.expect(t, 1, "the plain target")
	tlsTarget.expect(t, 1, "the TLS target")

	// The control: a transport that reads the environment reaches the proxy.
	honouring := &http.Client{Transport: &http.Transport{
		Proxy:       func(*http.Request) (*url.URL, error) { return url.Parse(os.Getenv("HTTP_PROXY")) },
		DialContext: (&net.Dialer{Resolver: dns.resolver()}).DialContext,
	}}
	resp, err := get(t, honouring, plain)
	if err != nil {
		t.Fatalf("control request: %v", err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != "from the proxy" {
		t.Fatalf("control request answered %q", body)
	}
	proxy.expect(t, 1, "the proxy, after the control request")
}

func TestHTTP2OverTLS(t *testing.T) {
	srv := newCountingTLSServer(t, "tcp4", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	client := func(g *guard.Guard) *http.Client {
		c := g.Client()
		c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
		return c
	}
	_, err := get(t, client(&guard.Guard{}), srv.URL)
	requireDenied(t, err, netip.MustParseAddr("127.0.0.1"), "loopback")
	srv.untouched(t, "refused TLS request")

	resp, err := get(t, client(loopbackAllowed), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 || string(body) != "HTTP/2.0" {
		t.Errorf("protocol %s (server saw %q), want HTTP/2", resp.Proto, body)
	}
	srv.expect(t, 1, "one HTTP/2 request")
}

// TestSharedTransportConcurrent shares one client between many goroutines
// that alternate allowed and refused destinations (run with -race).
func TestSharedTransportConcurrent(t *testing.T) {
	allowed := newCountingServer(t, "tcp4", "127.0.0.1:0", nil)
	refused := newCountingServer(t, "tcp4", "127.0.0.2:0", nil)
	client := (&guard.Guard{Allow: prefixes("127.0.0.1/32")}).Client()
	const workers, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if (w+i)%2 == 0 {
					resp, err := doWithin(client, allowed.URL, 10*time.Second)
					if err != nil || resp.StatusCode != 200 {
						errs <- fmt.Errorf("allowed request: %v", err)
					}
					continue
				}
				_, err := doWithin(client, refused.URL, 10*time.Second)
				var de *guard.DeniedError
				if !errors.As(err, &de) || de.Addr != netip.MustParseAddr("127.0.0.2") {
					errs <- fmt.Errorf("refused request: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	refused.untouched(t, "the refused server")
	if n := allowed.reqs.Load(); n != workers*each/2 {
		t.Errorf("allowed server handled %d requests, want %d", n, workers*each/2)
	}
}

func TestTransportAndClientSettings(t *testing.T) {
	g := &guard.Guard{}
	tr := g.Transport()
	if tr.Proxy != nil {
		t.Error("Transport().Proxy is set")
	}
	//lint:ignore SA1019 the deprecated dialers are read to prove they are unset: either would bypass the guard
	if tr.DialContext == nil || tr.DialTLSContext != nil || tr.Dial != nil || tr.DialTLS != nil {
		t.Error("Transport must dial only through the guarded DialContext")
	}
	if !tr.ForceAttemptHTTP2 {
		t.Error("HTTP/2 is not attempted")
	}
	if tr.TLSHandshakeTimeout <= 0 || tr.ResponseHeaderTimeout <= 0 || tr.IdleConnTimeout <= 0 {
		t.Error("a timeout is missing")
	}
	d := g.Dialer()
	if d.Control == nil || d.Timeout <= 0 {
		t.Error("Dialer has no Control hook or no timeout")
	}
	c := g.Client()
	if c.CheckRedirect == nil || c.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
		t.Error("Client follows redirects")
	}
	if ct, ok := c.Transport.(*http.Transport); !ok || ct.Proxy != nil {
		t.Error("Client transport is not a proxy-free guarded transport")
	}
}
