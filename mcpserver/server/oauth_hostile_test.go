package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/authserver"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
)

// oauthHostile is a running server.Run (demo data, HTTP on loopback, the
// embedded authorization server) and a client registered with it.
type oauthHostile struct {
	base   string
	client *http.Client
	id     string // a registered client's id
	redir  string // its one redirect URI
}

// startOAuthHostile starts the server as kobana serve -demo -http does,
// with registration limits high enough that the fuzzer's registrations
// reach the metadata checks, and registers a client.
func startOAuthHostile(t testing.TB) *oauthHostile {
	t.Helper()
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0",
			OAuth: &server.OAuth{Registration: authserver.RegistrationLimits{PerAddressPerHour: 1 << 30, PerHour: 1 << 30, Max: 1 << 30}}},
		Output: &out, Notices: io.Discard})
	t.Cleanup(func() { stop() })
	o := &oauthHostile{base: "http://" + addrs["http"].String(), redir: "http://127.0.0.1:9/callback",
		client: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	resp, body := o.do(t, http.MethodPost, authserver.RegisterPath, "application/json", `{"redirect_uris":["`+o.redir+`"],"client_name":"hostile"}`)
	var m struct {
		ClientID string `json:"client_id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &m) != nil || m.ClientID == "" {
		t.Fatalf("register: HTTP %d %s", resp.StatusCode, body)
	}
	o.id = m.ClientID
	return o
}

// do sends one request (target is a path with its query) and reads the
// whole answer.
func (o *oauthHostile) do(t testing.TB, method, target, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, o.base+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// The target as sent, byte for byte (url.Parse would refuse some), but
	// for what no request line can carry (net/http refuses it).
	var tb strings.Builder
	for _, c := range []byte(target) {
		if c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&tb, "%%%02X", c)
			continue
		}
		tb.WriteByte(c)
	}
	req.URL.Opaque = "//" + req.URL.Host + tb.String()
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		t.Fatalf("%s %.200s: %v (is the server down?)", method, target, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s %.200s: %v", method, target, err)
	}
	return resp, got
}

// oauthParams are the parameters the endpoints read.
var oauthParams = []string{"client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method", "scope", "state",
	"resource", "response_mode", "grant_type", "code", "code_verifier", "refresh_token", "token", "token_type_hint",
	"kobana_action", "kobana_csrf", "kobana_code", "client_secret", "audience", "nonce", "prompt", "request", "request_uri"}

// value is a parameter's value: a good one where there is one, or a
// hostile one.
func (g *hostileGen) oauthValue(o *oauthHostile, name string) string {
	switch g.next(12) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("A", g.next(4)*(20<<10)+1)
	case 2:
		return "\x00\xff\xfe\r\n%zz"
	case 3:
		return "https://evil.example/cb"
	case 4:
		return strings.Repeat("é", 300)
	case 5:
		return `"'<script>{}[]`
	case 6:
		return o.redir + "/../x?y#z"
	}
	switch name {
	case "client_id":
		// A metadata document's URL is fetched through the outbound guard,
		// which refuses these addresses at once (a name would be resolved).
		return []string{o.id, "https://10.0.0.1/client.json", "cli_nope", "https://127.0.0.1:1/c"}[g.next(4)]
	case "redirect_uri":
		return []string{o.redir, "http://127.0.0.1:9/other", "javascript:alert(1)", "http://127.0.0.1:9/callback?x=1"}[g.next(4)]
	case "response_type":
		return []string{"code", "token", "code id_token", "none"}[g.next(4)]
	case "code_challenge":
		return strings.Repeat("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", 1+g.next(2))[:43]
	case "code_challenge_method":
		return []string{"S256", "plain", "s256"}[g.next(3)]
	case "scope":
		return []string{"read", "read write", "write", "admin", "openid offline"}[g.next(5)]
	case "resource":
		return []string{o.base + "/mcp", o.base + "/mcp/", "https://evil.example/mcp", "urn:x", o.base + "/mcp#f"}[g.next(5)]
	case "response_mode":
		return []string{"query", "fragment", "form_post"}[g.next(3)]
	case "grant_type":
		return []string{"authorization_code", "refresh_token", "client_credentials", "password", "urn:ietf:params:oauth:grant-type:device_code"}[g.next(5)]
	case "code", "refresh_token", "token":
		return []string{"kbo_at_x.y", "kbo_rt_x.y", "kbo_ac_x.y", "x.y", "kbn_nope"}[g.next(5)]
	case "token_type_hint":
		return []string{"access_token", "refresh_token", "id_token"}[g.next(3)]
	case "kobana_action":
		return []string{"signin", "signout", "allow", "deny", "other"}[g.next(5)]
	case "kobana_code":
		return "kbs_nope"
	}
	return strconv.Itoa(g.next(1000))
}

// params are parameters from the input: names missing, repeated and
// unknown, values good and hostile.
func (g *hostileGen) oauthParams(o *oauthHostile) string {
	var parts []string
	for n := g.next(9); n > 0; n-- {
		name := oauthParams[g.next(len(oauthParams))]
		switch g.next(10) {
		case 0:
			name = strings.ToUpper(name)
		case 1:
			name = name + "[]"
		}
		v := g.oauthValue(o, name)
		for range 1 + g.next(3)/2 { // repeated now and then
			switch g.next(8) {
			case 0:
				parts = append(parts, name+"="+v) // unescaped
			case 1:
				parts = append(parts, name)
			default:
				parts = append(parts, url.QueryEscape(name)+"="+url.QueryEscape(v))
			}
		}
	}
	switch g.next(10) {
	case 0:
		return strings.Join(parts, ";")
	case 1:
		return strings.Join(parts, "&") + "&&=&%"
	}
	return strings.Join(parts, "&")
}

// clientMetadata is a registration's body: metadata good and bad, of the
// wrong types, oversized, or not JSON.
func (g *hostileGen) clientMetadata(o *oauthHostile) string {
	switch g.next(8) {
	case 0:
		b := string(g.data)
		g.data = nil
		return b
	case 1:
		return `{"redirect_uris":` + g.value(0) + `,"client_name":` + g.value(0) + `}`
	case 2:
		return `{"redirect_uris":["` + o.redir + `"],"` + []string{"grant_types", "response_types", "scope", "client_uri", "token_endpoint_auth_method", "application_type"}[g.next(6)] + `":` + g.value(0) + `}`
	case 3:
		return `{"redirect_uris":["` + strings.Repeat("https://a.example/", g.next(4)*300+1) + `"]}`
	case 4:
		return `[` + g.value(0) + `]`
	case 5:
		return `{"redirect_uris":["` + o.redir + `"]}` + []string{"garbage", "\xff", "{}", ""}[g.next(4)]
	}
	uris := []string{o.redir, "http://localhost/cb", "com.example.app:/cb", "https://a.example/cb", "http://evil.example/cb", "app:/cb", "https://a.example/cb#f", "/relative"}
	var rs []string
	for n := g.next(12); n > 0; n-- {
		rs = append(rs, strconv.Quote(uris[g.next(len(uris))]))
	}
	return `{"redirect_uris":[` + strings.Join(rs, ",") + `],"client_name":` + []string{`"x"`, `"` + strings.Repeat("n", 101) + `"`, `"a\u0000b"`, `"Claude"`}[g.next(4)] +
		`,"scope":` + []string{`"read"`, `"read write"`, `"admin"`, `""`}[g.next(4)] + `}`
}

var (
	oauthMethods      = []string{http.MethodGet, http.MethodPost, http.MethodPost, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch}
	oauthContentTypes = []string{"application/x-www-form-urlencoded", "application/x-www-form-urlencoded", "application/json", "",
		"multipart/form-data", "multipart/form-data; boundary=x", "text/plain", "application/x-www-form-urlencoded; charset=\xff", "application/json; charset=utf-16", "a/b/c; ;="}
)

// oauthError checks an OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2,
// RFC 7009 §2.2.1): a JSON object whose error is a code of printable ASCII
// without quote or backslash, and whose description, if any, is a string.
func oauthError(resp *http.Response, body []byte) string {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return "Content-Type " + strconv.Quote(resp.Header.Get("Content-Type")) + ", want application/json"
	}
	var e struct {
		Error       *string `json:"error"`
		Description *string `json:"error_description"`
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return "not a JSON object: " + err.Error()
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || *e.Error == "" {
		return "no error code"
	}
	for _, c := range *e.Error {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "an error code with " + strconv.QuoteRune(c)
		}
	}
	if len(body) > 8<<10 {
		return "an error of " + strconv.Itoa(len(body)) + " bytes"
	}
	return ""
}

// FuzzOAuthHostileClient sends the embedded authorization server of a
// running server.Run what a hostile or broken client would: every
// endpoint (metadata, authorize, token, register, revoke, the protected
// resource's metadata) with every method, missing, repeated, unknown and
// oversized parameters in the query and the body, odd content types and
// garbage bodies. Every request must be answered as its endpoint answers:
// metadata as JSON; token, registration and revocation a JSON OAuth error
// (or success); the authorization endpoint its HTML page, or a redirect to
// the registered redirect URI only, with an error or code and the issuer;
// a method an endpoint does not serve 405 — never a 5xx. And the server
// must answer afterwards.
func FuzzOAuthHostileClient(f *testing.F) {
	o := startOAuthHostile(f)
	for _, seed := range []string{"", "\x00\x01\x02", "\x02\x00\x03\x08\x05\x00\x02", "\x03\x01\x00\x05\x09\x01\x02\x03\x04\x05\x06\x07",
		"\x04\x01\x00\x07\x07\x07\x07", "\x05\x02\x01\x02\x03\x04", "\x01\x02\x00\x04\x00\x0b\x00\x01\x07\x07\x00\x05\x07\x07\x00\x03\x07\x07\x00\x04\x07\x07"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { oauthRound(t, o, data) })
}

// oauthPaths are the endpoints, and a path beside them.
var oauthPaths = []string{authserver.MetadataPath, authserver.AuthorizePath, authserver.TokenPath, authserver.RegisterPath, authserver.RevokePath,
	"/.well-known/oauth-protected-resource/mcp", authserver.TokenPath + "/x"}

// oauthRound sends one request built from data and checks its answer.
func oauthRound(t *testing.T, o *oauthHostile, data []byte) {
	g := &hostileGen{data: data}
	path := oauthPaths[g.next(len(oauthPaths))]
	method := oauthMethods[g.next(len(oauthMethods))]
	ct := oauthContentTypes[g.next(len(oauthContentTypes))]
	target := path
	if q := g.oauthParams(o); q != "" || g.next(2) == 0 {
		target += "?" + q
	}
	var body string
	switch {
	case path == authserver.RegisterPath && g.next(4) > 0:
		body = g.clientMetadata(o)
		if g.next(3) > 0 {
			ct = "application/json"
		}
	case g.next(6) == 0:
		body = string(g.data)
		g.data = nil
	default:
		body = g.oauthParams(o)
	}
	if method == http.MethodGet || method == http.MethodHead {
		if g.next(2) == 0 {
			body = ""
		}
	}
	resp, got := o.do(t, method, target, ct, body)
	fail := func(why string) {
		t.Helper()
		t.Fatalf("%s\n%s %.300q\nContent-Type: %q\n%.500q\nHTTP %d %v\n%.500s", why, method, target, ct, body, resp.StatusCode, resp.Header, got)
	}
	if resp.StatusCode >= 500 {
		fail("a server error")
	}
	if method == http.MethodOptions && path != authserver.AuthorizePath && path != oauthPaths[6] {
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			fail("a preflight not answered 204 with CORS headers")
		}
		return
	}
	switch path {
	case authserver.MetadataPath, oauthPaths[5]:
		switch {
		case method == http.MethodGet:
			var m map[string]any
			if resp.StatusCode != http.StatusOK || json.Unmarshal(got, &m) != nil {
				fail("metadata that are no JSON object")
			}
		case method == http.MethodHead:
			if resp.StatusCode != http.StatusOK {
				fail("HEAD of the metadata not answered 200")
			}
		case resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "":
			fail("a method the metadata are not served for, not answered 405 with Allow")
		}
	case authserver.TokenPath, authserver.RevokePath, authserver.RegisterPath:
		switch {
		case method == http.MethodHead:
			if resp.StatusCode < 400 {
				fail("HEAD answered with success")
			}
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
			var m map[string]any
			if path != authserver.RevokePath && json.Unmarshal(got, &m) != nil {
				fail("a success that is no JSON object")
			}
		case resp.StatusCode < 400:
			fail("neither a success nor an error")
		default:
			if why := oauthError(resp, got); why != "" {
				fail("an error that is no OAuth error: " + why)
			}
		}
	case authserver.AuthorizePath:
		switch resp.StatusCode {
		case http.StatusFound, http.StatusSeeOther:
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != o.redir {
				fail("a redirect to a URI not registered")
			}
			q := loc.Query()
			if (q.Get("error") == "") == (q.Get("code") == "") || q.Get("iss") != o.base {
				fail("a redirect without an error or a code, or without the issuer")
			}
		case http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed:
			if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/html" {
				fail("the page that is no HTML")
			}
		default:
			fail("an unexpected status")
		}
	}
	if len(data)%4 != 0 {
		return // a server that went down fails the next request; a check every few rounds says so sooner
	}
	if r, b := o.do(t, http.MethodGet, authserver.MetadataPath, "", ""); r.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"issuer"`)) {
		t.Fatalf("the metadata after %s %.300q: HTTP %d %.300s", method, target, r.StatusCode, b)
	}
}
