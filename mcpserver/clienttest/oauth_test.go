package clienttest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// oauthServer serves both demo products with the embedded authorization
// server (see demoServer).
func oauthServer(t *testing.T) (mcpURL string, st store.Store) {
	t.Helper()
	mcpURL, _, st = demoServer(t, true)
	return mcpURL, st
}

// signInCode mints a one-time sign-in code for the demo owner.
func signInCode(t *testing.T, st store.Store) string {
	t.Helper()
	code := store.NewSignInCode()
	if err := st.CreateSignInCode(context.Background(), store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	return code
}

// chromium starts headless Chromium (Debian's package) with a fresh
// profile, skipping the test without it (failing it under
// KOBANA_CHROMIUM_REQUIRED).
func chromium(t *testing.T) context.Context {
	t.Helper()
	return chromiumtest.Browser(t)
}

// until polls a JavaScript condition in the page (across navigations).
func until(ctx context.Context, expr string) error {
	return testwait.Until(20*time.Second, func() error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not yet: %s", expr)
		}
		return nil
	})
}

func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// consentInChromium opens the authorization URL in the browser as the
// person would: types the sign-in code, checks who and what the consent
// page names, allows, and waits until the browser is back at the client's
// redirect URI showing done.
func consentInChromium(t *testing.T, ctx context.Context, authURL, code, done string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(authURL)); err != nil {
		t.Fatal(err)
	}
	if err := until(ctx, `document.getElementById("code")`); err != nil {
		t.Fatalf("the sign-in page: %v\n%s", err, evalString(t, ctx, "document.body.innerText"))
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("code").focus(), true)`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.KeyEvent(code)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("signin").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	if err := until(ctx, `document.getElementById("allow")`); err != nil {
		t.Fatalf("the consent page: %v\n%s", err, evalString(t, ctx, "document.body.innerText"))
	}
	page := evalString(t, ctx, "document.body.innerText")
	for _, want := range []string{"Ana Souza", "owner of workspace Finance", "read:", "write:"} {
		if !strings.Contains(page, want) {
			t.Errorf("the consent page does not say %q:\n%s", want, page)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("allow").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	if err := until(ctx, `document.body && document.body.innerText.includes(`+jsQuote(done)+`)`); err != nil {
		t.Fatalf("back at the client: %v\n%s", err, evalString(t, ctx, "location.href + '\\n' + document.body.innerText"))
	}
}

func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// started is a Node process whose output is read as it comes.
type started struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      bytes.Buffer
	urls     chan string
	finished chan struct{}
}

// startNode starts node with args, sending every authorization URL it
// prints (a line matching pattern's first group) to urls.
func startNode(t *testing.T, node string, env []string, pattern *regexp.Regexp, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, args...)
	bin, _ := filepath.Abs(filepath.Join("node_modules", ".bin"))
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "BROWSER=true")
	cmd.Env = append(cmd.Env, env...)
	s := &started{cmd: cmd, urls: make(chan string, 4), finished: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.out.WriteString(line + "\n")
			s.mu.Unlock()
			if m := pattern.FindStringSubmatch(line); m != nil {
				s.urls <- m[1]
			}
		}
		close(s.finished)
	}()
	go func() {
		cmd.Wait()
		pw.Close()
	}()
	return s
}

func (s *started) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// next returns the next authorization URL the process prints.
func (s *started) next(t *testing.T) string {
	t.Helper()
	select {
	case u := <-s.urls:
		return u
	case <-s.finished:
		t.Fatalf("the client ended without asking for authorization:\n%s", s.output())
	case <-time.After(2 * time.Minute):
		t.Fatalf("no authorization URL:\n%s", s.output())
	}
	return ""
}

// wait waits for the process and fails the test unless it exited 0.
func (s *started) wait(t *testing.T) string {
	t.Helper()
	<-s.finished
	for s.cmd.ProcessState == nil {
		time.Sleep(10 * time.Millisecond) // Wait returned before the pipe closed
	}
	if !s.cmd.ProcessState.Success() {
		t.Fatalf("%s exited %v:\n%s", strings.Join(s.cmd.Args, " "), s.cmd.ProcessState, s.output())
	}
	t.Logf("%s:\n%s", strings.Join(s.cmd.Args[1:], " "), s.output())
	return s.output()
}

// TestTypeScriptSDKOAuth: the official TypeScript SDK's client auth does
// the whole flow against the server — discovery from the 401 (RFC 9728
// metadata, RFC 8414 metadata), dynamic registration, PKCE S256 with the
// resource indicator, the sign-in and consent page in headless Chromium,
// the code exchange (iss and state checked), a refresh that rotates both
// tokens — and then the client 2.x on 2026-07-28 lists, reads a resource
// and runs a confirmed destructive tool of each product with the token.
func TestTypeScriptSDKOAuth(t *testing.T) {
	node := clients(t)
	ctx := chromium(t)
	url, st := oauthServer(t)
	p := startNode(t, node, []string{"KOBANA_URL=" + url}, regexp.MustCompile(`^AUTHORIZE (\S+)$`), "oauth.mjs")
	consentInChromium(t, ctx, p.next(t), signInCode(t, st), "kobana-clienttest: signed in")
	if out := p.wait(t); !strings.Contains(out, "oauth: ok") {
		t.Fatalf("oauth.mjs did not finish:\n%s", out)
	}
	list, err := st.ListAccess(context.Background(), store.AccessQuery{Person: demo.Owner})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range list {
		if a.Kind == store.OAuthGrant && a.ClientName == "kobana-clienttest (TypeScript SDK)" && a.Workspace == demo.Workspace && !a.LastUsed.IsZero() {
			found = true
		}
	}
	if !found {
		t.Errorf("the grant is not in the access list: %+v", list)
	}
}

// TestInspectorOAuth: MCP Inspector's CLI, given the URL and no token,
// discovers the authorization server, registers, sends the person to the
// page (driven in Chromium), exchanges the code and lists the tools: no
// auth_required dead end.
func TestInspectorOAuth(t *testing.T) {
	node := clients(t)
	ctx := chromium(t)
	url, st := oauthServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	launcher, _ := filepath.Abs("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	p := startNode(t, node, []string{"MCP_AUTO_OPEN_ENABLED=true"}, regexp.MustCompile(`Please navigate to: (\S+)`),
		launcher, "--cli", url, "--transport", "http", "--protocol-era", "modern", "--method", "tools/list", "--format", "json",
		"--callback-url", fmt.Sprintf("http://127.0.0.1:%d/oauth/callback", port))
	consentInChromium(t, ctx, p.next(t), signInCode(t, st), "")
	out := p.wait(t)
	if !strings.Contains(out, `"billing_invoices_cancel"`) || !strings.Contains(out, `"emails_list"`) || strings.Contains(out, "auth_required") {
		t.Fatalf("Inspector's tools/list after OAuth:\n%s", out)
	}
}
