package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// toy is a small product exercising every framework feature.
type toy struct {
	st   *sqlite.Store
	runs atomic.Int64
}

type noteArgs struct {
	ID string `json:"id" jsonschema:"the note id"`
}

type noteOut struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func (ty *toy) product(policy mcpserver.Policy) *mcpserver.Product {
	get := func(ctx context.Context, c *mcpserver.Caller, id string) (noteOut, error) {
		r, err := ty.st.GetRecord(ctx, c.Workspace, "note", id)
		if err != nil {
			return noteOut{}, err
		}
		var n noteOut
		return n, json.Unmarshal(r.Data, &n)
	}
	return &mcpserver.Product{
		Name:   "toy",
		Policy: policy,
		Tools: []mcpserver.Tool{
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "notes_get", Description: "Get a note.", Access: mcpserver.Read},
				func(ctx context.Context, c *mcpserver.Caller, in noteArgs) (noteOut, error) {
					return get(ctx, c, in.ID)
				}),
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "notes_delete", Description: "Delete a note. It cannot be undone.", Access: mcpserver.Write, Destructive: true},
				func(ctx context.Context, c *mcpserver.Caller, in noteArgs) (noteOut, error) {
					ty.runs.Add(1)
					n, err := get(ctx, c, in.ID)
					if err != nil {
						return n, err
					}
					return n, ty.st.DeleteRecord(ctx, c.Workspace, "note", in.ID)
				}),
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "notes_purge", Description: "Purge everything.", Access: mcpserver.Admin, Destructive: true},
				func(ctx context.Context, c *mcpserver.Caller, in struct{}) (noteOut, error) { return noteOut{}, nil }),
		},
		Resources: []mcpserver.Resource{
			{Template: "kobana://toy/notes/{id}", Name: "note", Tool: "notes_get",
				Read: func(ctx context.Context, c *mcpserver.Caller, uri string, p map[string]string) (any, error) {
					return get(ctx, c, p["id"])
				}},
		},
		Prompts: []mcpserver.Prompt{
			{Name: "summarize", Tools: []string{"notes_get"},
				Arguments: []mcpserver.PromptArgument{{Name: "id", Required: true}},
				Get: func(ctx context.Context, c *mcpserver.Caller, a map[string]string) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarize " + a["id"]}}}}, nil
				}},
			{Name: "cleanup", Tools: []string{"notes_get", "notes_delete"},
				Get: func(ctx context.Context, c *mcpserver.Caller, a map[string]string) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "cleanup"}}}}, nil
				}},
		},
		Complete: func(ctx context.Context, c *mcpserver.Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, _ map[string]string) ([]string, error) {
			recs, err := ty.st.ListRecords(ctx, c.Workspace, "note", store.Query{Prefix: arg.Value})
			var out []string
			for _, r := range recs {
				out = append(out, r.ID)
			}
			return out, err
		},
	}
}

type env struct {
	path   string
	st     *sqlite.Store
	toy    *toy
	srv    *mcpserver.Server
	url    string
	tokens map[string]string
}

func newEnv(t testing.TB, policy mcpserver.Policy) *env {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.PutOrganization(ctx, store.Organization{ID: "org1", Name: "Org"}))
	must(st.PutOrganization(ctx, store.Organization{ID: "org2", Name: "Other"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: "ws1", Organization: "org1", Name: "W1"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: "ws2", Organization: "org2", Name: "W2"}))
	for _, p := range []store.Person{{ID: "ana", Organization: "org1"}, {ID: "vic", Organization: "org1"}, {ID: "opr", Organization: "org1"}, {ID: "zed", Organization: "org2"}} {
		must(st.PutPerson(ctx, p))
	}
	must(st.SetMembership(ctx, "ws1", "ana", "owner"))
	must(st.SetMembership(ctx, "ws1", "vic", "viewer"))
	must(st.SetMembership(ctx, "ws1", "opr", "operator"))
	must(st.SetMembership(ctx, "ws2", "zed", "owner"))
	for _, id := range []string{"n1", "n2", "n3"} {
		must(st.PutRecord(ctx, store.Record{Workspace: "ws1", Kind: "note", ID: id, Data: json.RawMessage(`{"id":"` + id + `","text":"hello"}`)}))
	}
	must(st.PutRecord(ctx, store.Record{Workspace: "ws2", Kind: "note", ID: "secret2", Data: json.RawMessage(`{"id":"secret2","text":"other"}`)}))
	tokens := map[string]string{}
	mint := func(name, person, ws string, scopes ...string) {
		tok, err := st.CreateToken(ctx, store.NewToken{Person: person, Workspace: ws, Scopes: scopes})
		must(err)
		tokens[name] = tok
	}
	mint("owner", "ana", "ws1", "read", "write")
	mint("owner-ro", "ana", "ws1", "read")
	mint("viewer", "vic", "ws1", "read", "write")
	mint("operator", "opr", "ws1", "read", "write")
	mint("other", "zed", "ws2", "read", "write")
	ty := &toy{st: st}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ty.product(policy)}})
	must(err)
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close)
	return &env{path: path, st: st, toy: ty, srv: srv, url: hs.URL + "/mcp", tokens: tokens}
}

// connect opens a go-sdk client session over HTTP with a token, speaking
// version, optionally answering elicitations with answer.
func (e *env) connect(t *testing.T, token, version string, answer mcptest.Answer) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, mcptest.HTTP(e.url, token), version, answer)
}

var (
	eras       = mcptest.Eras
	textOf     = mcptest.TextOf
	rpcCode    = mcptest.RPCCode
	httpClient = mcptest.BearerClient
)

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestPermissionsDeriveFromToolSet(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	cases := map[string]string{
		"owner":    "notes_get,notes_delete,notes_purge",
		"owner-ro": "notes_get",
		"viewer":   "notes_get",
		"operator": "notes_get,notes_delete",
	}
	for _, era := range eras {
		for who, want := range cases {
			cs := e.connect(t, e.tokens[who], era, nil)
			if got := strings.Join(toolNames(t, cs), ","); !sameSet(got, want) {
				t.Errorf("%s %s tools = %s, want %s", era, who, got, want)
			}
			prompts, err := cs.ListPrompts(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantPrompts := "summarize"
			if strings.Contains(want, "notes_delete") {
				wantPrompts = "summarize,cleanup"
			}
			var pn []string
			for _, p := range prompts.Prompts {
				pn = append(pn, p.Name)
			}
			if !sameSet(strings.Join(pn, ","), wantPrompts) {
				t.Errorf("%s %s prompts = %v, want %s", era, who, pn, wantPrompts)
			}
			if prompts.CacheScope != "private" {
				t.Errorf("%s prompts/list cacheScope = %q, want private", era, prompts.CacheScope)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_purge", Arguments: map[string]any{}})
			if who != "owner" {
				if err != nil || !res.IsError || !strings.Contains(textOf(res), "permission_denied") {
					t.Errorf("%s %s notes_purge = %v %v, want permission_denied", era, who, textOf(res), err)
				}
			}
		}
	}
}

func sameSet(a, b string) bool {
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	if len(as) != len(bs) {
		return false
	}
	m := map[string]bool{}
	for _, x := range as {
		m[x] = true
	}
	for _, x := range bs {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestResourceNotFoundCodePerEra(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	want := map[string]int64{"2025-11-25": -32002, "2026-07-28": -32602}
	for _, era := range eras {
		cs := e.connect(t, e.tokens["owner"], era, nil)
		r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "kobana://toy/notes/n1"})
		if err != nil || !strings.Contains(r.Contents[0].Text, "hello") {
			t.Fatalf("%s read n1 = %v, %v", era, r, err)
		}
		for _, uri := range []string{"kobana://toy/notes/nope", "kobana://toy/notes/secret2", "kobana://toy/unknown", "kobana://toy/notes/n1/x"} {
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			if got := rpcCode(err); got != want[era] {
				t.Errorf("%s read %s: code %d (%v), want %d", era, uri, got, err, want[era])
			}
		}
	}
}

func TestCompletionsUnderListingPermission(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	for _, era := range eras {
		cs := e.connect(t, e.tokens["viewer"], era, nil)
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "kobana://toy/notes/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"},
		})
		if err != nil || len(res.Completion.Values) != 3 {
			t.Errorf("%s complete = %+v, %v", era, res, err)
		}
		res, err = cs.Complete(context.Background(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "cleanup"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"},
		})
		if err != nil || len(res.Completion.Values) != 0 {
			t.Errorf("%s viewer completing a prompt it cannot see = %+v, %v", era, res, err)
		}
	}
}

func TestConfirmationFlow(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ctx := context.Background()
	exists := func(id string) bool {
		_, err := e.st.GetRecord(ctx, "ws1", "note", id)
		return err == nil
	}
	// Era 2025: confirmation_required, nothing runs.
	cs := e.connect(t, e.tokens["owner"], "2025-11-25", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "confirmation_required") || !exists("n1") {
		t.Fatalf("era 2025 delete = %s %v", textOf(res), err)
	}
	// 2026 without elicitation support: confirmation_required.
	cs = e.connect(t, e.tokens["owner"], "2026-07-28", nil)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || !strings.Contains(textOf(res), "confirmation_required") || !exists("n1") {
		t.Fatalf("no-form delete = %s %v", textOf(res), err)
	}
	// 2026 with a user who declines.
	var asked atomic.Int64
	cs = e.connect(t, e.tokens["owner"], "2026-07-28", func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || !strings.Contains(textOf(res), "user_declined") || !exists("n1") || asked.Load() != 1 {
		t.Fatalf("declined delete = %s %v asked=%d", textOf(res), err, asked.Load())
	}
	// 2026 with a user who says yes.
	cs = e.connect(t, e.tokens["owner"], "2026-07-28", func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if !strings.Contains(r.Params.Message, `{"id":"n1"}`) {
			t.Errorf("question does not show the arguments: %s", r.Params.Message)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	})
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || res.IsError || exists("n1") {
		t.Fatalf("confirmed delete = %s %v", textOf(res), err)
	}
}

func TestConfirmedCallRunsOnceUnderConcurrency(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: httpClient(e.tokens["owner"])}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n2"}})
	if err != nil || first.RequestState == "" || first.InputRequests[mcpserver.ConfirmKey] == nil {
		t.Fatalf("first call = %+v %v", first, err)
	}
	yes := mcp.InputResponseMap{mcpserver.ConfirmKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	ok, replayed := mcptest.CallConcurrently(t, []*mcp.ClientSession{cs}, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n2"}, RequestState: first.RequestState, InputResponses: yes}, 50, "confirmation_replayed")
	if ok != 1 || replayed != 49 || e.toy.runs.Load() != 1 {
		t.Fatalf("ok=%d replayed=%d runs=%d, want 1/49/1", ok, replayed, e.toy.runs.Load())
	}
	if _, err := e.st.GetRecord(ctx, "ws1", "note", "n2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("n2 still exists: %v", err)
	}
}

// brokenLedger is a store whose ledger cannot be written.
type brokenLedger struct{ *sqlite.Store }

func (brokenLedger) Consume(context.Context, string, time.Time) error {
	return errors.New("database is locked")
}

func TestLedgerUnavailableRunsNothing(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	srv, err := mcpserver.New(mcpserver.Options{Store: brokenLedger{e.st}, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"})}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: httpClient(e.tokens["owner"])}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "confirmation_unavailable") {
		t.Fatalf("broken ledger: %s %v", textOf(res), err)
	}
	if e.toy.runs.Load() != 0 {
		t.Fatal("the tool ran without a recorded confirmation")
	}
	if _, err := e.st.GetRecord(context.Background(), "ws1", "note", "n3"); err != nil {
		t.Fatalf("n3 was deleted: %v", err)
	}
}

// brokenAuth is a store whose token lookups fail the way a lost database
// connection does, naming the database's host.
type brokenAuth struct{ *sqlite.Store }

const dbHost = "db-primary.internal.example"

func (brokenAuth) Authenticate(context.Context, string) (store.Principal, error) {
	return store.Principal{}, errors.New("store: authenticate: dial tcp " + dbHost + ":5432: connect: connection refused")
}

// lockedBuffer is a log destination safe for concurrent writes and reads.
type lockedBuffer = syncbuf.Buffer

// A store failure while checking a token is logged, and the client (who may
// hold no valid token at all) is told only that tokens cannot be checked.
func TestTokenCheckFailureHidesStoreError(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	var logs lockedBuffer
	srv, err := mcpserver.New(mcpserver.Options{Store: brokenAuth{e.st}, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"})},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	defer hs.Close()
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + era + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", era)
		req.Header.Set("Authorization", "Bearer kbn_anything")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(got), "cannot check tokens right now") {
			t.Errorf("%s: HTTP %d %q, want 500 saying tokens cannot be checked", era, resp.StatusCode, got)
		}
		if strings.Contains(string(got), dbHost) || strings.Contains(string(got), "5432") {
			t.Errorf("%s: the response leaks the store's error: %q", era, got)
		}
	}
	if l := logs.String(); !strings.Contains(l, dbHost) || !strings.Contains(l, "token check failed") {
		t.Errorf("the store's error was not logged: %q", l)
	}
}

func TestLegacyRunsDirectlyPolicy(t *testing.T) {
	// Billing's policy: on era 2025 destructive tools run, confirmation is the client's.
	e := newEnv(t, mcpserver.Policy{DeclineCode: "USER_DECLINED", LegacyRunsDirectly: true})
	cs := e.connect(t, e.tokens["owner"], "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || res.IsError || e.toy.runs.Load() != 1 {
		t.Fatalf("legacy direct run: %s %v", textOf(res), err)
	}
	// And on 2026 it still asks; a decline answers the product's code.
	cs = e.connect(t, e.tokens["owner"], "2026-07-28", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	})
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n2"}})
	if err != nil || !strings.Contains(textOf(res), "USER_DECLINED") || e.toy.runs.Load() != 1 {
		t.Fatalf("2026 cancel: %s %v", textOf(res), err)
	}
}

func TestHTTPAuthAndOriginChecks(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	send := func(token, host, origin string) *http.Response {
		req, _ := http.NewRequest("POST", e.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := send("", "", ""); r.StatusCode != 401 || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := send("kbn_not_a_token", "", ""); r.StatusCode != 401 || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("bad token: %d", r.StatusCode)
	}
	if r := send(e.tokens["owner"], "", ""); r.StatusCode != 200 {
		t.Errorf("good token: %d", r.StatusCode)
	}
	if r := send(e.tokens["owner"], "evil.example:80", ""); r.StatusCode != 403 {
		t.Errorf("rebinding host: %d, want 403", r.StatusCode)
	}
	if r := send(e.tokens["owner"], "", "https://evil.example"); r.StatusCode != 403 {
		t.Errorf("foreign origin: %d, want 403", r.StatusCode)
	}
	if r := send(e.tokens["owner"], "", "http://localhost:3000"); r.StatusCode != 200 {
		t.Errorf("loopback origin: %d", r.StatusCode)
	}
}

func TestStdioTokenCheckedPerRequest(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ctx := context.Background()
	for _, era := range eras {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := e.srv.Connect(ctx, e.tokens["operator"], st)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(toolNames(t, cs), ","); !sameSet(got, "notes_get,notes_delete") {
			t.Errorf("%s stdio operator tools = %s", era, got)
		}
		// A role change is seen on the next request, without reconnecting.
		if err := e.st.SetMembership(ctx, "ws1", "opr", "viewer"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(toolNames(t, cs), ","); got != "notes_get" {
			t.Errorf("%s after demotion tools = %s", era, got)
		}
		e.st.SetMembership(ctx, "ws1", "opr", "operator")
		cs.Close()
		ss.Close()
	}
	if err := e.srv.ServeStdio(ctx, "kbn_bogus", io.NopCloser(strings.NewReader("")), nopWC{io.Discard}); err == nil {
		t.Error("ServeStdio accepted an unknown token")
	}
}

type nopWC struct{ io.Writer }

func (nopWC) Close() error { return nil }

// A session that negotiated 2025 by initialize stays in 2025 even when a
// request's _meta claims 2026-07-28: it cannot be asked, so nothing runs.
func TestLegacySessionIgnoresModernMeta(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.Connect(ctx, e.tokens["owner"], st)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"},
		Meta: mcp.Meta{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		}})
	if err != nil || !strings.Contains(textOf(res), "confirmation_required") || e.toy.runs.Load() != 0 {
		t.Fatalf("legacy session with modern _meta: %s %v runs=%d", textOf(res), err, e.toy.runs.Load())
	}
}

// Two replicas (two servers, each with its own handle on the shared store)
// receive the same confirmed call 25 times each: it runs exactly once.
func TestConfirmationSingleUseAcrossReplicas(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	ctx := context.Background()
	st2, err := sqlite.Open(ctx, e.path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	srv2, err := mcpserver.New(mcpserver.Options{Store: st2, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"})}})
	if err != nil {
		t.Fatal(err)
	}
	// What is checked is that a confirmation runs once, not how fast the
	// store is: with the framework's 2 s wait, a loaded machine that stalled
	// the store for a few seconds (every SQLite commit is synced to disk)
	// turned 9 of the 50 into confirmation_unavailable.
	// (Each is set before the server that serves it starts.)
	for _, s := range []*mcpserver.Server{e.srv, srv2} {
		mcpserver.SetConfirmWait(s, time.Minute)
	}
	hs1 := httptest.NewServer(e.srv.HTTPHandler(mcpserver.HTTPOptions{}))
	defer hs1.Close()
	hs2 := httptest.NewServer(srv2.HTTPHandler(mcpserver.HTTPOptions{}))
	defer hs2.Close()
	session := func(url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(e.tokens["owner"])}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	replicas := []*mcp.ClientSession{session(hs1.URL + "/mcp"), session(hs2.URL + "/mcp")}
	// Asked by one replica, answered to both.
	first, err := replicas[1].CallTool(ctx, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}})
	if err != nil || first.RequestState == "" {
		t.Fatalf("first call: %+v %v", first, err)
	}
	yes := mcp.InputResponseMap{mcpserver.ConfirmKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	ok, replayed := mcptest.CallConcurrently(t, replicas, &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n3"}, RequestState: first.RequestState, InputResponses: yes}, 50, "confirmation_replayed")
	if ok != 1 || replayed != 49 || e.toy.runs.Load() != 1 {
		t.Fatalf("ok=%d replayed=%d runs=%d, want 1/49/1", ok, replayed, e.toy.runs.Load())
	}
}
