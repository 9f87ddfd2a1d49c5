package guard_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"

	"github.com/kobana/workflow/executor/guard"
)

func ExampleGuard_CheckAddr() {
	var g guard.Guard // the zero value applies the deny-list
	for _, s := range []string{
		"93.184.216.34",
		"127.0.0.1",
		"169.254.169.254",
		"::ffff:10.0.0.1",
		"64:ff9b::a9fe:a9fe",
		"2002:c0a8:101::",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1 obfuscated
		"2606:4700::1111",
	} {
		fmt.Println(g.CheckAddr(netip.MustParseAddr(s)))
	}
	// Output:
	// <nil>
	// address 127.0.0.1 is denied: loopback
	// address 169.254.169.254 is denied: link-local
	// address ::ffff:10.0.0.1 is denied: IPv4-mapped IPv6 address embedding 10.0.0.1, which is private (RFC 1918)
	// address 64:ff9b::a9fe:a9fe is denied: NAT64 address (64:ff9b::/96) embedding 169.254.169.254, which is link-local
	// address 2002:c0a8:101:: is denied: 6to4 address (2002::/16) embedding 192.168.1.1, which is private (RFC 1918)
	// address 2001:0:4136:e378:8000:63bf:f5ff:fffe is denied: Teredo address (2001::/32) embedding client 10.0.0.1, which is private (RFC 1918)
	// <nil>
}

func ExampleGuard_CheckURL() {
	var g guard.Guard
	for _, s := range []string{
		"https://api.example.com/v1/payables",
		"ftp://example.com/file",
		"http:///no-host",
		"http://0x7f.1:8080/admin", // a C resolver reads this as 127.0.0.1
	} {
		u, _ := url.Parse(s)
		fmt.Println(g.CheckURL(u))
	}
	// Output:
	// <nil>
	// URL scheme "ftp" is not allowed: only http and https are
	// URL has no host
	// address 127.0.0.1 is denied: loopback
}

// A guarded client refuses a server on loopback; a guard whose allow-list
// covers loopback reaches it. Redirects are never followed.
func ExampleGuard_Client() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	_, err := (&guard.Guard{}).Client().Get(srv.URL)
	var denied *guard.DeniedError
	if errors.As(err, &denied) {
		fmt.Println("refused:", denied.Addr, denied.Class)
	}

	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	client := g.Client()
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	resp, err = client.Get(srv.URL + "/moved")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
	// Output:
	// refused: 127.0.0.1 loopback
	// 200 hello
	// 302 /elsewhere
}

// The error of a refused dial comes back wrapped by net/http; errors.As
// finds the *DeniedError inside.
func ExampleDeniedError() {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()

	_, err := (&guard.Guard{}).Client().Get(srv.URL)
	var urlErr *url.Error
	var denied *guard.DeniedError
	fmt.Println(errors.As(err, &urlErr), errors.As(err, &denied))
	fmt.Println(denied)
	// Output:
	// true true
	// address 127.0.0.1 is denied: loopback
}
