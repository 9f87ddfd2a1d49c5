package lsp

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/compile"
	exampledocs "github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/lsp/internal/jsonrpc"
)

// payable is the complete example (examples/workflows/payable.json).
var payable = exampledocs.Payable

func TestLifecycle(t *testing.T) {
	t.Parallel()
	c, _ := startServer(t, Options{})
	if err := c.call("textDocument/hover", map[string]any{}, nil); !isErrCode(err, jsonrpc.CodeServerNotInitialized) {
		t.Errorf("a request before initialize: %v, want code %d", err, jsonrpc.CodeServerNotInitialized)
	}
	var res initializeResult
	if err := c.call("initialize", map[string]any{"capabilities": map[string]any{}}, &res); err != nil {
		t.Fatal(err)
	}
	want := serverCapabilities{
		PositionEncoding:   "utf-16",
		TextDocumentSync:   textDocumentSync{OpenClose: true, Change: syncIncremental},
		CompletionProvider: completionOptions{TriggerCharacters: []string{".", "{"}},
		HoverProvider:      true,
		DefinitionProvider: true,
		CodeActionProvider: codeActionOptions{CodeActionKinds: []string{"quickfix"}},
	}
	if diff := cmp.Diff(want, res.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if res.ServerInfo.Name != "validate-workflow" || res.OffsetEncoding != "" {
		t.Errorf("serverInfo %+v, offsetEncoding %q", res.ServerInfo, res.OffsetEncoding)
	}
	if err := c.call("initialize", map[string]any{"capabilities": map[string]any{}}, nil); !isErrCode(err, jsonrpc.CodeInvalidRequest) {
		t.Errorf("a second initialize: %v", err)
	}
	if err := c.call("workspace/symbol", map[string]any{"query": ""}, nil); !isErrCode(err, jsonrpc.CodeMethodNotFound) {
		t.Errorf("an unknown method: %v", err)
	}
	if err := c.call("textDocument/hover", nil, nil); !isErrCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("hover without params: %v", err)
	}
	if err := c.call("shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := c.call("textDocument/hover", map[string]any{}, nil); !isErrCode(err, jsonrpc.CodeInvalidRequest) {
		t.Errorf("a request after shutdown: %v", err)
	}
	c.notify("exit", nil)
	if err := <-c.served; err != nil {
		t.Errorf("Serve after shutdown and exit = %v, want nil", err)
	}
	c.served <- nil // for the cleanup
}

func TestExitWithoutShutdown(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{}, nil)
	c.notify("exit", nil)
	if err := <-c.served; !errors.Is(err, ErrNoShutdown) {
		t.Errorf("Serve = %v, want ErrNoShutdown", err)
	}
	c.served <- nil

	c = newClient(t, Options{}, nil)
	c.toSrv.Close()
	if err := <-c.served; !errors.Is(err, ErrNoShutdown) {
		t.Errorf("Serve at the end of the stream = %v, want ErrNoShutdown", err)
	}
	c.served <- nil
}

func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{}, nil)
	for _, body := range []string{`{"jsonrpc": "2.0", "id": 1, "method": `, `[1, 2]`, `{"jsonrpc": "1.0", "id": 7, "method": "x"}`, `{"jsonrpc": "2.0", "id": {}, "method": "x"}`} {
		if _, err := c.toSrv.Write([]byte("Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body)); err != nil {
			t.Fatal(err)
		}
		m := c.take("an error answer to "+body, func(m *jsonrpc.Message) bool { return m.Error != nil })
		if string(m.ID) != "null" || (m.Error.Code != jsonrpc.CodeParseError && m.Error.Code != jsonrpc.CodeInvalidRequest) {
			t.Errorf("%s: answered id %s, error %+v", body, m.ID, m.Error)
		}
	}
	// The session goes on.
	if ds := c.open("file:///w.json", payable); len(ds) != 0 {
		t.Errorf("the complete example has diagnostics: %+v", ds)
	}
}

func TestDiagnosticsOnOpenAndChange(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{}, nil)
	const uri = "file:///tmp/w.json"
	bad := strings.Replace(payable, `"expected_status": 201`, `"expected-status": 201`, 1)
	bad = strings.Replace(bad, `"method": "POST",
      "url": "${{secrets.SLACK`, `"method": "post",
      "url": "${{secrets.SLACK`, 1)
	ds := c.open(uri, bad)
	var codes []string
	for _, d := range ds {
		codes = append(codes, d.Code)
	}
	if diff := cmp.Diff([]string{compile.CodeUnknownField, compile.CodeMethod}, codes); diff != "" {
		t.Fatalf("codes (-want +got):\n%s", diff)
	}
	off := strings.Index(bad, `"expected-status"`)
	want := Diagnostic{
		Range:           Range{Start: posOf(bad, off, UTF16), End: posOf(bad, off+len(`"expected-status"`), UTF16)},
		Severity:        severityError,
		Code:            compile.CodeUnknownField,
		CodeDescription: &codeDescription{Href: "https://github.com/kobana/workflow/blob/main/docs/lint.md#step-unknown-field"},
		Source:          "kobana",
		Message:         ds[0].Message,
		Data:            &diagnosticData{Suggestion: "expected_status"},
	}
	if diff := cmp.Diff(want, ds[0]); diff != "" {
		t.Errorf("diagnostic (-want +got):\n%s", diff)
	}
	if !strings.Contains(ds[0].Message, `did you mean "expected_status"`) {
		t.Errorf("message %q", ds[0].Message)
	}

	// An incremental change that fixes the field name.
	start := posOf(bad, off+len(`"expected`), UTF16)
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []map[string]any{{"range": Range{Start: start, End: Position{start.Line, start.Character + 1}}, "text": "_"}},
	})
	if ds := c.diagnostics(uri, 2); len(ds) != 1 || ds[0].Code != compile.CodeMethod {
		t.Errorf("after the fix: %+v", ds)
	}

	// A forward reference is a warning.
	fwd := strings.Replace(payable, "steps.0.response.body.data.id}}/attachments", "steps.2.response.body.data.id}}/attachments", 1)
	c.replace(uri, 3, fwd)
	ds = c.diagnostics(uri, 3)
	if len(ds) != 1 || ds[0].Code != compile.CodeForwardReference || ds[0].Severity != severityWarning {
		t.Errorf("forward reference: %+v", ds)
	}

	// Closing clears the diagnostics.
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	m := c.take("cleared diagnostics", func(m *jsonrpc.Message) bool {
		return m.Method == "textDocument/publishDiagnostics" && strings.Contains(string(m.Params), `"diagnostics":[]`)
	})
	if strings.Contains(string(m.Params), "version") {
		t.Errorf("cleared diagnostics carry a version: %s", m.Params)
	}
}

func TestIncrementalChanges(t *testing.T) {
	t.Parallel()
	c, srv := startServer(t, Options{})
	if err := c.call("initialize", map[string]any{"capabilities": map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-32"}}}}, nil); err != nil {
		t.Fatal(err)
	}
	const uri = "file:///tmp/inc.json"
	text := "{\"result\": \"ação 🚀\",\r\n\"workflow\": []}\n"
	c.open(uri, text)
	// Replace "ção" (line 0, characters 13–16 in code points) and insert
	// across the \r\n line break.
	c.notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []map[string]any{
			{"range": Range{Start: Position{0, 13}, End: Position{0, 16}}, "text": "cao"},
			{"range": Range{Start: Position{0, 21}, End: Position{1, 0}}, "text": "\n"},
			{"range": Range{Start: Position{5, 0}, End: Position{9, 9}}, "text": " "},
		},
	})
	c.diagnostics(uri, 2)
	srv.mu.Lock()
	got := srv.docs[uri].text
	srv.mu.Unlock()
	if want := "{\"result\": \"acao 🚀\",\n\"workflow\": []}\n "; got != want {
		t.Errorf("text after the changes = %q, want %q", got, want)
	}
}

func TestDebouncedDiagnosticsPublishTheLastVersion(t *testing.T) {
	t.Parallel()
	c := newClient(t, Options{Debounce: DefaultDebounce}, nil)
	const uri = "file:///tmp/d.json"
	c.open(uri, payable)
	for v := 2; v <= 4; v++ {
		c.replace(uri, v, strings.Replace(payable, `"method": "POST"`, `"method": "pos`+strings.Repeat("t", v)+`"`, 1))
	}
	ds := c.diagnostics(uri, 4)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, `"postttt"`) {
		t.Errorf("diagnostics of version 4: %+v", ds)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.queue {
		if m.Method == "textDocument/publishDiagnostics" {
			t.Errorf("an earlier version was published too: %s", m.Params)
		}
	}
}

func TestQuickFixes(t *testing.T) {
	t.Parallel()
	for _, docChanges := range []bool{false, true} {
		c := newClient(t, Options{SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}}, map[string]any{
			"workspace": map[string]any{"workspaceEdit": map[string]any{"documentChanges": docChanges}},
		})
		const uri = "file:///tmp/q.json"
		bad := strings.Replace(payable, `"expected_status": 201`, `"expected-status": 201`, 1)
		bad = strings.Replace(bad, `"method": "POST",
      "url": "https://erp.example.com/payables/`, `"method": "post",
      "url": "https://erp.example.com/payables/`, 1)
		bad = strings.Replace(bad, `${{secrets.SLACK_WEBHOOK_URL}}`, `${{secret.SLACK_WEBHOOK_URL}}`, 1)
		bad = strings.Replace(bad, `Bearer ${{secrets.FINANCE_TOKEN}}" },
      "form"`, `Bearer ${{secrets.FINANCE_TOKN}}" },
      "form"`, 1)
		ds := c.open(uri, bad)
		if len(ds) != 4 {
			t.Fatalf("diagnostics: %+v", ds)
		}
		text := bad
		version := 1
		for len(ds) > 0 {
			d := ds[0]
			var actions []CodeAction
			if err := c.call("textDocument/codeAction", map[string]any{
				"textDocument": map[string]any{"uri": uri},
				"range":        d.Range,
				"context":      map[string]any{"diagnostics": []Diagnostic{d}, "only": []string{"quickfix"}},
			}, &actions); err != nil {
				t.Fatal(err)
			}
			if len(actions) != 1 || actions[0].Kind != "quickfix" || !actions[0].IsPreferred || actions[0].Edit == nil {
				t.Fatalf("actions for %s: %+v", d.Code, actions)
			}
			var edits []TextEdit
			if docChanges {
				dc := actions[0].Edit.DocumentChanges
				if len(dc) != 1 || dc[0].TextDocument.Version != version || actions[0].Edit.Changes != nil {
					t.Fatalf("edit: %+v", actions[0].Edit)
				}
				edits = dc[0].Edits
			} else {
				edits = actions[0].Edit.Changes[uri]
			}
			if len(edits) != 1 {
				t.Fatalf("edits: %+v", edits)
			}
			li := newLineIndex(text)
			e := edits[0]
			text = text[:li.offset(e.Range.Start, UTF16)] + e.NewText + text[li.offset(e.Range.End, UTF16):]
			version++
			c.replace(uri, version, text)
			ds = c.diagnostics(uri, version)
		}
		if text != payable {
			t.Errorf("after the quick fixes the document is\n%s\nwant the complete example", text)
		}
		var none []CodeAction
		if err := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": Range{}, "context": map[string]any{"diagnostics": []any{}}}, &none); err != nil || len(none) != 0 {
			t.Errorf("actions on a clean document: %v %+v", err, none)
		}
	}
}

// TestSecretNamesError: with the workspace's names known, a reference to
// another name is the compiler's secrets-unknown-name error, with its
// did-you-mean as a quick fix.
func TestSecretNamesError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	sub := filepath.Join(root, "flows")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A file above the workspace root is not read.
	os.WriteFile(filepath.Join(dir, SecretNamesFile), []byte("OUTSIDE\n"), 0o644)
	os.WriteFile(filepath.Join(root, SecretNamesFile), []byte("# names only\nFINANCE_TOKEN\n\nAPI_KEY=s3cr3t-value\nSLACK_WEBHOOK_URL\n"), 0o644)
	c, _ := startServer(t, Options{})
	if err := c.call("initialize", map[string]any{"rootUri": "file://" + filepath.ToSlash(root), "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + filepath.ToSlash(filepath.Join(sub, "w.json"))
	ds := c.open(uri, strings.Replace(payable, "secrets.SLACK_WEBHOOK_URL", "secrets.SLACK_WEBHOK_URL", 1))
	if len(ds) != 1 || ds[0].Code != compile.CodeUnknownSecret || ds[0].Severity != severityError || ds[0].Data == nil || ds[0].Data.Suggestion != "${{secrets.SLACK_WEBHOOK_URL}}" {
		t.Fatalf("diagnostics: %+v", ds)
	}
	// The ignored line is reported by number, its value never.
	m := c.take("a log message about the names file", func(m *jsonrpc.Message) bool { return m.Method == "window/logMessage" })
	if !strings.Contains(string(m.Params), "line 4") || strings.Contains(string(m.Params), "s3cr3t") {
		t.Errorf("log message %s", m.Params)
	}
	var list CompletionList
	text, off := cursorDoc(t, `{"workflow": [{"type": "request", "url": "${{secrets.|"}]}`)
	c.replace(uri, 2, text)
	c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(text, off, UTF16)}, &list)
	if got := labels(list); !slices.Equal(got, []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}) {
		t.Errorf("secret names offered: %v", got)
	}
}

func labels(l CompletionList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Label)
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// FuzzHandlers runs completion, hover, definition and code actions at many
// offsets of any document: no panic, and every range answered lies in the
// document.
func FuzzHandlers(f *testing.F) {
	f.Add(payable, uint8(7))
	f.Add(`{"workflow": [{"url": "${{steps.0.response.body.`, uint8(1))
	f.Add(`{"workflow": [{}, {"url": "\u00e9${{steps.0}}", "form": {"f": "${{email.attachments.0}}"}}]}`, uint8(3))
	f.Fuzz(func(t *testing.T, doc string, step uint8) {
		if len(doc) > 8192 {
			return
		}
		srv := New(Options{SecretNames: []string{"A", "B"}})
		srv.conn = jsonrpc.NewConn(strings.NewReader(""), io.Discard)
		srv.state = stateRunning
		const uri = "file:///fuzz/w.json"
		srv.docs[uri] = &document{uri: uri, version: 1, text: doc}
		li := newLineIndex(doc)
		last := li.position(len(doc), UTF16)
		inDoc := func(r Range) bool {
			le := func(a, b Position) bool { return a.Line < b.Line || a.Line == b.Line && a.Character <= b.Character }
			return le(Position{}, r.Start) && le(r.Start, r.End) && le(r.End, last)
		}
		for off := 0; off <= len(doc); off += int(step%16) + 1 {
			p := textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: uri}, Position: li.position(off, UTF16)}
			for _, it := range srv.completion(p).Items {
				if it.TextEdit == nil || !inDoc(it.TextEdit.Range) {
					t.Fatalf("%q at %d: completion %+v", doc, off, it)
				}
			}
			if h := srv.hover(p); h != nil && (h.Range == nil || !inDoc(*h.Range)) {
				t.Fatalf("%q at %d: hover %+v", doc, off, h)
			}
			for _, l := range srv.definition(p) {
				if !inDoc(l.Range) {
					t.Fatalf("%q at %d: definition %+v", doc, off, l)
				}
			}
			for _, a := range srv.codeActions(codeActionParams{TextDocument: p.TextDocument, Range: Range{Start: p.Position, End: p.Position}}) {
				for _, e := range a.Edit.Changes[uri] {
					if !inDoc(e.Range) {
						t.Fatalf("%q at %d: code action %+v", doc, off, a)
					}
				}
			}
		}
	})
}

// TestSecretNamesFileFormat: the names file has the one format of package
// secretnames, which kobana plan -secrets-names and the playground read too:
// names separated by commas or spaces, or a JSON object's keys.
func TestSecretNamesFileFormat(t *testing.T) {
	t.Parallel()
	for _, content := range []string{
		"FINANCE_TOKEN, SLACK_WEBHOOK_URL\n",
		`{"SLACK_WEBHOOK_URL": "https://hooks.example/s3cr3t", "FINANCE_TOKEN": "s3cr3t"}`,
	} {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, SecretNamesFile), []byte(content), 0o644)
		c, _ := startServer(t, Options{})
		if err := c.call("initialize", map[string]any{"rootUri": "file://" + filepath.ToSlash(root), "capabilities": map[string]any{}}, nil); err != nil {
			t.Fatal(err)
		}
		uri := "file://" + filepath.ToSlash(filepath.Join(root, "w.json"))
		text, off := cursorDoc(t, `{"workflow": [{"type": "request", "url": "${{secrets.|"}]}`)
		c.open(uri, text)
		var list CompletionList
		c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": posOf(text, off, UTF16)}, &list)
		if got := labels(list); !slices.Equal(got, []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}) {
			t.Errorf("%s: secret names offered: %v", content, got)
		}
	}
}

// TestPolicyFromTheClient: a policy given in initializationOptions makes a
// step that sends a secret to a literal host outside its destinations an
// error, as validate-workflow -policy and the Inbox report it.
func TestPolicyFromTheClient(t *testing.T) {
	t.Parallel()
	c, _ := startServer(t, Options{})
	if err := c.call("initialize", map[string]any{"capabilities": map[string]any{},
		"initializationOptions": map[string]any{"policy": map[string]any{"secrets": map[string]any{"FINANCE_TOKEN": []string{"erp.example.com"}}}}}, nil); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(payable, "https://erp.example.com/payables\"", "https://evil.example/payables\"", 1)
	if doc == payable {
		t.Fatal("the example changed: no url to replace")
	}
	ds := c.open("file:///w.json", doc)
	if len(ds) != 1 || ds[0].Code != compile.CodeSecretDestination || ds[0].Severity != severityError || !strings.Contains(ds[0].Message, "evil.example is not one of its destinations") {
		t.Fatalf("diagnostics: %+v", ds)
	}
	c2, _ := startServer(t, Options{})
	err := c2.call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"policy": map[string]any{"egress": "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "initializationOptions.policy: egress: destinations are a list") {
		t.Errorf("an unreadable policy: %v", err)
	}
}
