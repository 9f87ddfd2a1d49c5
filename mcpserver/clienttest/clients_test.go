package clienttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/authserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// requiredEnv makes missing clients a failure instead of a skip (CI sets it
// after installing them).
const requiredEnv = "KOBANA_CLIENTTEST_REQUIRED"

// clients returns the Node binary the npm packages brought, skipping the
// test (failing it under requiredEnv) when they are not installed.
func clients(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join("node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, p := range []string{node,
		"node_modules/@modelcontextprotocol/sdk/package.json",
		"node_modules/@modelcontextprotocol/client/package.json",
		"node_modules/@modelcontextprotocol/inspector/package.json"} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("the official MCP clients are not installed (missing %s): run `npm ci` in mcpserver/clienttest (.ci/run does)", strings.Join(missing, ", "))
		if os.Getenv(requiredEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// server serves both products with the demo data over HTTP on loopback, as
// `kobana serve -demo` does, and returns the /mcp URL and the demo owner's
// read-write token.
func server(t *testing.T) (url, token string) {
	t.Helper()
	url, token, _ = demoServer(t, false)
	return url, token
}

// demoServer serves both demo products on loopback; with oauth, /mcp is
// also a protected resource of the embedded authorization server (issuer:
// the loopback URL), as kobana serve makes it. It returns the /mcp URL, the
// demo owner's read-write token and the store.
func demoServer(t *testing.T, oauth bool) (url, token string, st store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	tokens, err := inboxdemo.Load(ctx, st, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := billing.SeedDemo(ctx, st, now); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	ibx, ip, err := inboxmcp.New(inboxmcp.Options{Store: st, PublicURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	bil, _, err := billing.New(billing.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx, bil}, Name: "kobana"})
	if err != nil {
		t.Fatal(err)
	}
	opts := mcpserver.HTTPOptions{Extra: map[string]http.Handler{inboxmcp.DownloadPath: ip.DownloadHandler()}}
	if oauth {
		resource := hs.URL + "/mcp"
		as, err := authserver.New(ctx, authserver.Options{Store: st, Issuer: hs.URL, Resource: resource, ResourceName: "Kobana (inbox, billing)"})
		if err != nil {
			t.Fatal(err)
		}
		for p, h := range as.PageRoutes() {
			opts.Extra[p] = h
		}
		opts.OpenRoutes = as.OpenRoutes()
		opts.Auth = &mcpserver.ResourceAuth{Resource: resource, AuthorizationServers: []string{as.Issuer()}, Verify: as.Verify}
	}
	mux.Handle("/", srv.HTTPHandler(opts))
	return hs.URL + "/mcp", tokens[0].Token, st
}

// run runs the Node program node with args in this directory and returns
// its standard output; a non-zero exit fails the test with both outputs.
func run(t *testing.T, node string, env []string, args ...string) (stdout string, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	home := t.TempDir() // Inspector keeps its catalog under $HOME
	bin, _ := filepath.Abs(filepath.Join("node_modules", ".bin"))
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in time\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String() + errOut.String(), ee.ExitCode()
		}
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	t.Logf("%s:\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	return out.String(), 0
}

// TestOfficialTypeScriptClients runs the scenario of scenario.mjs with the
// SDK 1.x on 2025-11-25 and the client 2.x pinned to 2026-07-28: list and
// call tools (results and errors, checked by the client against the cached
// output schemas), read text and blob resources, get prompts, complete, and
// confirm (2026-07-28) or be refused (2025) a destructive tool.
func TestOfficialTypeScriptClients(t *testing.T) {
	node := clients(t)
	for _, script := range []string{"v1.mjs", "v2.mjs"} {
		t.Run(strings.TrimSuffix(script, ".mjs"), func(t *testing.T) {
			url, token := server(t)
			if out, code := run(t, node, []string{"KOBANA_URL=" + url, "KOBANA_TOKEN=" + token}, script); code != 0 {
				t.Fatalf("%s exited %d:\n%s", script, code, out)
			}
		})
	}
}

// inspector runs MCP Inspector's CLI against url for era ("legacy" is
// 2025-11-25, "modern" 2026-07-28) and returns its JSON answer.
func inspector(t *testing.T, node, url, token, era string, args ...string) (result json.RawMessage, findings []toolFindings) {
	t.Helper()
	launcher, _ := filepath.Abs("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	all := append([]string{launcher, "--cli", url, "--transport", "http", "--header", "Authorization: Bearer " + token,
		"--protocol-era", era, "--format", "json"}, args...)
	out, code := run(t, node, nil, all...)
	if code != 0 {
		t.Fatalf("inspector %s %s exited %d:\n%s", era, strings.Join(args, " "), code, out)
	}
	var env struct {
		Result         json.RawMessage `json:"result"`
		SchemaFindings []toolFindings  `json:"schemaFindings"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("inspector %s %s: reading its answer: %v\n%s", era, strings.Join(args, " "), err, out)
	}
	return env.Result, env.SchemaFindings
}

// toolFindings is what Inspector's --strict reports of one tool.
type toolFindings struct {
	ToolName string `json:"toolName"`
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Schema   string `json:"schema"`
		Path     string `json:"path"`
		Issue    string `json:"issue"`
	} `json:"findings"`
}

// TestInspectorStrict lists both products' tools with Inspector's --strict
// mode, on both eras, and wants no finding at all: every schema node has a
// single type and constrains its value.
func TestInspectorStrict(t *testing.T) {
	node := clients(t)
	url, token := server(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			result, findings := inspector(t, node, url, token, era, "--method", "tools/list", "--strict")
			var list struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			if err := json.Unmarshal(result, &list); err != nil || len(list.Tools) == 0 {
				t.Fatalf("tools/list: %v %s", err, result)
			}
			n := 0
			for _, tf := range findings {
				for _, f := range tf.Findings {
					n++
					t.Errorf("%s %s %s.%s: [%s] %s", f.Severity, tf.ToolName, f.Schema, f.Path, f.Rule, f.Issue)
				}
			}
			t.Logf("%d tools, %d findings", len(list.Tools), n)
		})
	}
}

// TestInspectorCLI reads, calls and gets through Inspector's CLI on both
// eras: it validates each answer against the protocol's types.
func TestInspectorCLI(t *testing.T) {
	node := clients(t)
	url, token := server(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			text, _ := inspector(t, node, url, token, era, "--method", "resources/read", "--uri", "kobana://inbox/emails/eml_inv_00")
			if !bytes.Contains(text, []byte(`eml_inv_00`)) {
				t.Errorf("text resource: %s", text)
			}
			blob, _ := inspector(t, node, url, token, era, "--method", "resources/read", "--uri", "kobana://billing/invoices/inv_1003/pdf")
			if !bytes.Contains(blob, []byte(`"blob"`)) || !bytes.Contains(blob, []byte(`application/pdf`)) {
				t.Errorf("blob resource: %.300s", blob)
			}
			call, _ := inspector(t, node, url, token, era, "--method", "tools/call", "--tool-name", "billing_customers_get", "--tool-arg", "id=cus_acme")
			if !bytes.Contains(call, []byte(`"structuredContent"`)) {
				t.Errorf("tools/call: %.300s", call)
			}
			prompt, _ := inspector(t, node, url, token, era, "--method", "prompts/get", "--prompt-name", "customer_overview", "--prompt-args", "customer_id=cus_acme")
			if !bytes.Contains(prompt, []byte(`"messages"`)) {
				t.Errorf("prompts/get: %.300s", prompt)
			}
			for _, m := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
				if r, _ := inspector(t, node, url, token, era, "--method", m); len(r) < 20 {
					t.Errorf("%s: %s", m, r)
				}
			}
		})
	}
}
