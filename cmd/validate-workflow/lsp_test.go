package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLSP runs the language server subcommand on pipes, as an editor would:
// initialize, open a document with a misspelt field, read its diagnostics,
// shut down and exit.
func TestLSP(t *testing.T) {
	getenv = func(k string) string {
		if k == "KOBANA_SECRETS" {
			return "FINANCE_TOKEN, API_KEY=x"
		}
		return ""
	}
	defer func() { getenv = os.Getenv }()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	status := make(chan int, 1)
	go func() {
		c := &Command{Stdin: inR, Stdout: outW, Stderr: &stderr}
		status <- c.Main([]string{"lsp", "-debounce", "0"})
		outW.Close()
	}()
	r := bufio.NewReader(outR)
	send := func(msg string) {
		if _, err := fmt.Fprintf(inW, "Content-Length: %d\r\n\r\n%s", len(msg), msg); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]any {
		t.Helper()
		var n int
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading from the server: %v", err)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := read(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///w.json","languageId":"json","version":1,
		"text":"{\"result\": 1, \"workflow\": [{\"type\": \"request\", \"url\": \"https://x/${{secrets.FINANCE_TOKN}}\", \"expected-status\": 201}]}"}}}`)
	m := read()
	diags, _ := m["params"].(map[string]any)["diagnostics"].([]any)
	var codes []string
	for _, d := range diags {
		codes = append(codes, d.(map[string]any)["code"].(string))
	}
	if strings.Join(codes, " ") != "secrets-unknown-name step-unknown-field" {
		t.Errorf("diagnostics: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	if m := read(); m["id"] != 2.0 {
		t.Fatalf("shutdown: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"exit"}`)
	if s := <-status; s != 0 {
		t.Errorf("exit status %d, want 0; stderr %s", s, stderr.String())
	}
	if want := "KOBANA_SECRETS: line 1 holds an entry that is not a secret name"; !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "API_KEY") {
		t.Errorf("stderr %q, want %q without the entry", stderr.String(), want)
	}
}

func TestLSPUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{"lsp", "-h"}, 0, "usage: validate-workflow lsp"},
		{[]string{"lsp", "-debounce", "soon"}, 2, ""},
		{[]string{"lsp", "-debounce", "-1s"}, 2, ""},
		{[]string{"lsp", "w.json"}, 2, ""},
	} {
		status, stdout, stderr := run(t, "", tc.args...)
		if status != tc.status || !strings.Contains(stdout, tc.out) || (status == 2 && stderr == "") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", tc.args, status, stdout, stderr)
		}
	}
	// The stream ends without shutdown: status 1.
	if status, _, _ := run(t, "", "lsp"); status != 1 {
		t.Errorf("lsp on an empty stream: status %d, want 1", status)
	}
}

// TestEditorsDocListsTheFlags keeps docs/editors.md's flag table in step
// with the subcommand's flags.
func TestEditorsDocListsTheFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/editors.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile("(?m)^\\| `(-[a-z-]+)").FindAllStringSubmatch(string(doc), -1)
	var got []string
	for _, m := range documented {
		got = append(got, m[1])
	}
	want := regexp.MustCompile(`(?m)^  (-[a-z-]+) `).FindAllStringSubmatch(lspUsage, -1)
	var flags []string
	for _, m := range want {
		flags = append(flags, m[1])
	}
	if strings.Join(got, " ") != strings.Join(flags, " ") || len(flags) == 0 {
		t.Errorf("docs/editors.md documents %v; validate-workflow lsp has %v", got, flags)
	}
}
