package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// demoTokenLine is a demo token line: the role and the token.
var demoTokenLine = regexp.MustCompile(`, (owner|viewer) of workspace \S+, scopes \S+: (kbn_[0-9a-f]{64})$`)

// `kobana serve -stdio`, as a process of its own, answers each call it
// cannot serve with an error and goes on: an unknown tool, wrong-typed
// arguments, an id of NULs (issue 32), a resource that does not exist, and
// for a viewer a tool it may not run — on a 2025 session and with
// 2026-07-28 requests. Before, the first of these ended the process
// (observe's nil *CallToolResult), and the NUL id too (clipValues).
func TestServeStdioErrorPathsDoNotEndTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kobana as a process")
	}
	db := filepath.Join(t.TempDir(), "k.db")
	tokens := map[string]string{}
	for _, l := range strings.Split(seedDemo(t, db), "\n") {
		if m := demoTokenLine.FindStringSubmatch(l); m != nil {
			tokens[m[1]] = m[2]
		}
	}
	if tokens["owner"] == "" || tokens["viewer"] == "" {
		t.Fatalf("no owner and viewer demo tokens: %v", tokens)
	}
	nuls := strings.Repeat(`\u0000`, 20)
	calls := []string{
		`"method":"tools/call","params":{"name":"no_such_tool","arguments":{}`,
		`"method":"tools/call","params":{"name":"emails_list","arguments":{"limit":"many","status":7}`,
		`"method":"tools/call","params":{"name":"emails_get","arguments":{"id":"` + nuls + `"}`,
		`"method":"resources/read","params":{"uri":"kobana://inbox/emails/em_doesnotexist"`,
		`"method":"tools/call","params":{"name":"inboxes_delete","arguments":{"id":"ib_doesnotexist"}`,
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, who := range []string{"owner", "viewer"} {
			t.Run(era+" "+who, func(t *testing.T) {
				var lines []string
				meta := ""
				if era == "2026-07-28" {
					meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
				} else {
					lines = append(lines,
						`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
						`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				}
				want := map[string]bool{} // id → whether the call must fail
				for i, c := range calls {
					lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s%s}}`, 2*i+10, c, meta))
					lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, 2*i+11, strings.TrimPrefix(meta, ",")))
					want[fmt.Sprint(2*i+10)] = true
					want[fmt.Sprint(2*i+11)] = false
				}
				got := stdioExchange(t, db, tokens[who], lines, len(want))
				for id, fails := range want {
					a, ok := got[id]
					switch {
					case !ok:
						t.Errorf("id %s: no answer", id)
					case fails && a.Error == nil && !strings.Contains(string(a.Result), `"isError":true`):
						t.Errorf("id %s: answered %s, want an error", id, a.Result)
					case fails && a.Error != nil && a.Error.Code == -32603:
						t.Errorf("id %s: internal error (a panic contained)", id)
					case !fails && (a.Error != nil || !strings.Contains(string(a.Result), `"tools"`)):
						t.Errorf("id %s: tools/list answered %s %+v", id, a.Result, a.Error)
					}
				}
			})
		}
	}
}

// stdioExchange runs `kobana serve -stdio -db db` for token as a process,
// writes lines and reads answers until n answers with an id other than
// "init" came or the process ended; then it closes the input and waits for
// the exit (killing the process if it outlives 20 s).
func stdioExchange(t *testing.T, db, token string, lines []string, n int) map[string]stdioReply {
	t.Helper()
	raw, err := json.Marshal([]string{"serve", "-stdio", "-db", db})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(raw), "KOBANA_TOKEN="+token)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		io.WriteString(in, strings.Join(lines, "\n")+"\n")
	}()
	got := map[string]stdioReply{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var a stdioReply
			if json.Unmarshal(sc.Bytes(), &a) != nil || string(a.ID) == `"init"` || len(a.ID) == 0 {
				continue
			}
			got[string(a.ID)] = a
			if len(got) == n {
				return
			}
		}
	}()
	select {
	case <-read:
	case <-time.After(60 * time.Second):
		t.Errorf("not every call answered within 60s")
	}
	in.Close()
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kobana serve -stdio: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	<-read
	return got
}

// stdioReply is one JSON-RPC answer of a stdio server.
type stdioReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}
