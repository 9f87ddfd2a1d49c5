package integration_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// replicas is a deployment in one process: n `kobana serve`-like servers
// (mcpserver.New over the Inbox and Billing products), each on its own pg.Store handle and
// httptest.Server, sharing one database, which they reach through a proxy
// the test can cut. direct is a handle that bypasses the proxy, for seeding
// and for looking at what is really in the database.
type replicas struct {
	t      *testing.T
	schema string
	app    string // application_name of the replicas' connections
	px     *pgtest.Proxy
	direct *pg.Store
	stores []*pg.Store
	urls   []string
	owner  string // the demo owner's token
	viewer string // the demo viewer's token, never used before an outage
	hits   atomic.Int64
}

// newReplicas starts n replicas. With outage, their stores give up on the
// database quickly (a 1 s connect_timeout, a 500 ms LedgerTimeout), so that
// a test can cut the database and see the answers within seconds; without
// it they run with the product's defaults (5 s, and the framework's whole
// ConfirmationWait). Only a test about outages should shorten them: on a
// busy machine a 500 ms ledger budget is spent queueing a burst of
// confirmations for the replica's pooled connections (the product then
// rightly answers confirmation_unavailable), and a new PostgreSQL backend
// can take over a second to start.
func newReplicas(t *testing.T, n int, outage bool) *replicas {
	t.Helper()
	ctx := context.Background()
	directDSN, schema := pgtest.SchemaDSN(t, "rep", "replicas-direct")
	r := &replicas{t: t, schema: schema, app: "replica_" + schema, px: pgtest.StartProxy(t)}
	key := store.Options{SecretKey: bytes.Repeat([]byte{9}, 32)}
	r.direct = openPG(t, directDSN, pg.Options{Options: key})
	seeded, err := inboxdemo.Load(ctx, r.direct, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.owner, r.viewer = seeded[0].Token, seeded[1].Token
	if err := billing.SeedDemo(ctx, r.direct, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The webhook receiver: every delivery lands here.
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.hits.Add(1)
		w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(recv.Close)
	for _, id := range []string{"whk_erp", "whk_chat"} {
		rec, err := r.direct.GetRecord(ctx, demo.Workspace, inbox.KindWebhook, id)
		if err != nil {
			t.Fatal(err)
		}
		var wh inbox.Webhook
		if err := json.Unmarshal(rec.Data, &wh); err != nil {
			t.Fatal(err)
		}
		wh.URL = recv.URL + "/hooks/" + id
		rec.Data, _ = json.Marshal(wh)
		if err := r.direct.PutRecord(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		dsn, opts := r.px.DSN(schema, r.app), pg.Options{Options: key}
		if outage {
			dsn, opts.LedgerTimeout = dsn+" connect_timeout=1", 500*time.Millisecond
		}
		st := openPG(t, dsn, opts)
		mux := http.NewServeMux()
		hs := httptest.NewServer(mux)
		t.Cleanup(hs.Close)
		ibx, p, err := inboxmcp.New(inboxmcp.Options{Store: st, HTTPClient: recv.Client(), PublicURL: hs.URL})
		if err != nil {
			t.Fatal(err)
		}
		bp, _, err := billing.New(billing.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{ibx, bp}})
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("/", srv.HTTPHandler(mcpserver.HTTPOptions{Extra: map[string]http.Handler{inboxmcp.DownloadPath: p.DownloadHandler()}}))
		r.stores = append(r.stores, st)
		r.urls = append(r.urls, hs.URL+"/mcp")
	}
	return r
}

// reply is a tools/call answer: the result, or the JSON-RPC error, or the
// HTTP status when there was no JSON-RPC answer at all.
type reply struct {
	status int
	result map[string]any
	err    map[string]any
	body   string
}

func (p reply) ok() bool {
	return p.result != nil && p.result["isError"] != true && p.result["resultType"] != "input_required"
}

func (p reply) asked() bool {
	return p.result != nil && p.result["resultType"] == "input_required" && p.result["requestState"] != nil
}

// code is the tool error's code ("confirmation_replayed", …), "" when none.
func (p reply) code() string {
	return mcptest.ResultCode(p.result)
}

func (p reply) String() string {
	if p.result != nil {
		b, _ := json.Marshal(p.result)
		return string(b)
	}
	return fmt.Sprintf("HTTP %d %v %s", p.status, p.err, p.body)
}

var (
	formCaps  = mcptest.FormCaps
	yesAnswer = mcptest.YesAnswer
)

// call sends one 2026-07-28 tools/call to replica i as raw JSON-RPC over
// HTTP, declaring elicitation-form support, with an optional requestState
// and the user's yes.
func (r *replicas) call(i int, tool string, args map[string]any, state string) reply {
	c := mcptest.ToolCall{URL: r.urls[i%len(r.urls)], Token: r.owner, Tool: tool, Args: args, Caps: formCaps}
	if state != "" {
		c.State, c.Responses = state, yesAnswer
	}
	got, err := c.Send(nil)
	if err != nil {
		r.t.Errorf("%s on replica %d: %v", tool, i%len(r.urls), err)
		return reply{}
	}
	return reply{status: got.Status, result: got.Result, err: got.Error, body: got.Body}
}

func (r *replicas) ask(i int, tool string, args map[string]any) string {
	r.t.Helper()
	p := r.call(i, tool, args, "")
	if !p.asked() {
		r.t.Fatalf("%s on replica %d did not ask: %v", tool, i, p)
	}
	return p.result["requestState"].(string)
}

// nonce returns the nonce a requestState carries.
func nonce(t *testing.T, state string) string {
	t.Helper()
	parts := strings.Split(state, ".")
	if len(parts) != 4 {
		t.Fatalf("state %q", state)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Nonce string }
	if err := json.Unmarshal(payload, &c); err != nil || c.Nonce == "" {
		t.Fatalf("state payload %s: %v", payload, err)
	}
	return c.Nonce
}

func keyID(state string) string { return strings.Split(state, ".")[1] }

// deliveries counts the delivery records in the database.
func (r *replicas) deliveries() int {
	r.t.Helper()
	recs, err := r.direct.ListRecords(context.Background(), demo.Workspace, inbox.KindDelivery, store.Query{Limit: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	return len(recs)
}

// ledgerRows counts the ledger rows of a nonce (0 or 1: it is the key).
func (r *replicas) ledgerRows(n string) int {
	return count(r.t, r.schema, `SELECT count(*) FROM S.confirmation_ledger WHERE nonce = $1`, n)
}

func (r *replicas) hasSecret(name string) bool {
	r.t.Helper()
	list, err := r.direct.ListSecrets(context.Background(), demo.Workspace)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, s := range list {
		if s.Name == name {
			return true
		}
	}
	return false
}

// terminate ends the server-side connections of every replica.
func (r *replicas) terminate() int {
	var n int
	if err := pgtest.Admin(r.t).QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, r.app).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

func TestReplicasShareConfirmationsAndKeys(t *testing.T) {
	r := newReplicas(t, 3, false)
	ctx := context.Background()
	args := map[string]any{"id": "whk_chat"}
	before := r.deliveries()

	// Asked by A, confirmed on B.
	state := r.ask(0, "webhooks_test", args)
	if p := r.call(1, "webhooks_test", args, state); !p.ok() {
		t.Fatalf("confirmation from A on B: %v", p)
	}
	if r.hits.Load() != 1 || r.deliveries() != before+1 || r.ledgerRows(nonce(t, state)) != 1 {
		t.Fatalf("after the confirmed call: receiver %d, deliveries +%d, ledger %d; want 1, 1, 1", r.hits.Load(), r.deliveries()-before, r.ledgerRows(nonce(t, state)))
	}
	// Replayed on C.
	if p := r.call(2, "webhooks_test", args, state); p.code() != mcpserver.CodeConfirmationReplayed {
		t.Errorf("replay on C: %v", p)
	}
	if r.hits.Load() != 1 {
		t.Errorf("the replay ran: %d deliveries", r.hits.Load())
	}
	// Every replica signs with the one shared key.
	kid := keyID(state)
	for i := range 3 {
		if k := keyID(r.ask(i, "webhooks_test", args)); k != kid {
			t.Errorf("replica %d signs with %s, replica A with %s", i, k, kid)
		}
	}
	// A rotation on C: what A asked before it is still honoured on B, and
	// every replica signs with the new key from then on.
	pending := r.ask(0, "webhooks_test", args)
	rotated, err := r.stores[2].RotateKey(ctx, "confirm")
	if err != nil {
		t.Fatal(err)
	}
	if p := r.call(1, "webhooks_test", args, pending); !p.ok() {
		t.Errorf("state signed before the rotation: %v", p)
	}
	for i := range 3 {
		if k := keyID(r.ask(i, "webhooks_test", args)); k != rotated.ID {
			t.Errorf("replica %d signs with %s after rotation to %s", i, k, rotated.ID)
		}
	}
	// Once the old key is pruned (by A), its states are asked again (on C).
	pending = r.ask(1, "webhooks_test", args)
	if _, err := r.stores[0].RotateKey(ctx, "confirm"); err != nil {
		t.Fatal(err)
	}
	if err := r.stores[0].PruneKeys(ctx, "confirm", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p := r.call(2, "webhooks_test", args, pending); !p.asked() {
		t.Errorf("state of a pruned key: %v, want the question again", p)
	}
	if r.hits.Load() != 2 || r.deliveries() != before+2 {
		t.Errorf("receiver %d, deliveries +%d; want 2 and 2", r.hits.Load(), r.deliveries()-before)
	}
}

// callRetrying makes a confirmed call as a client told
// confirmation_unavailable does: it tries again, a few times. It reports
// whether an attempt was unavailable — on a loaded machine the store may not
// answer within mcpserver.ConfirmationWait; then nothing ran, and if the
// ledger spent the confirmation meanwhile, the retry is told it was used.
func (r *replicas) callRetrying(i int, tool string, args map[string]any, state string) (reply, bool) {
	unavailable := false
	for range 10 {
		p := r.call(i, tool, args, state)
		if p.code() != mcpserver.CodeConfirmationUnavailable {
			return p, unavailable
		}
		unavailable = true
		time.Sleep(200 * time.Millisecond)
	}
	return r.call(i, tool, args, state), true
}

func TestReplicasRunAConfirmedCallOnce(t *testing.T) {
	r := newReplicas(t, 3, false)
	args := map[string]any{"id": "whk_erp"}
	before := r.deliveries()
	state := r.ask(0, "webhooks_test", args)
	// The same confirmed call, 50 times at once, spread over the replicas.
	var ok, replayed, unavailable atomic.Int64
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, wasUnavailable := r.callRetrying(i, "webhooks_test", args, state)
			if wasUnavailable {
				unavailable.Add(1)
			}
			switch {
			case p.ok():
				ok.Add(1)
			case p.code() == mcpserver.CodeConfirmationReplayed:
				replayed.Add(1)
			default:
				t.Errorf("unexpected answer: %v", p)
			}
		}()
	}
	wg.Wait()
	// One call runs. Only when the store was too slow for the one call that
	// spent the confirmation (unavailable: nothing ran) does none.
	if ok.Load()+replayed.Load() != 50 || ok.Load() > 1 || ok.Load() == 0 && unavailable.Load() == 0 {
		t.Fatalf("ok=%d replayed=%d (%d calls met an unavailable store), want 1 and 49", ok.Load(), replayed.Load(), unavailable.Load())
	}
	if ok.Load() == 0 {
		t.Logf("the call that spent the confirmation found the store too slow (loaded machine): nothing ran")
	}
	// The database holds what ran: as many delivery records as runs, one
	// ledger row; the receiver got as many requests.
	ran := ok.Load()
	if d := r.deliveries() - before; d != int(ran) || r.hits.Load() != ran || r.ledgerRows(nonce(t, state)) != 1 {
		t.Fatalf("deliveries +%d, receiver %d, ledger rows %d; want %d, %d, 1", d, r.hits.Load(), r.ledgerRows(nonce(t, state)), ran, ran)
	}
	// Fifty different confirmations at once, each asked on one replica and
	// confirmed on another, all run: no false replays (a confirmation is
	// told it was used only after an attempt found the store too slow).
	states := make([]string, 50)
	for i := range states {
		states[i] = r.ask(i, "webhooks_test", args)
	}
	var ok2 atomic.Int64
	for i, s := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, wasUnavailable := r.callRetrying(i+1, "webhooks_test", args, s)
			switch {
			case p.ok():
				ok2.Add(1)
			case wasUnavailable && p.code() == mcpserver.CodeConfirmationReplayed:
			default:
				t.Errorf("confirmation %d: %v", i, p)
			}
		}()
	}
	wg.Wait()
	if ok2.Load() == 0 || r.deliveries()-before != int(ran+ok2.Load()) || r.hits.Load() != ran+ok2.Load() {
		t.Errorf("ok=%d, deliveries +%d, receiver %d; want %d, %d, %d", ok2.Load(), r.deliveries()-before, r.hits.Load(), ok2.Load(), ran+ok2.Load(), ran+ok2.Load())
	}
}

// TestReplicasServeBilling: Billing's records live in the same database,
// and its confirmed refund runs once across the replicas.
func TestReplicasServeBilling(t *testing.T) {
	r := newReplicas(t, 3, false)
	ctx := context.Background()
	for i := range 3 {
		if p := r.call(i, "billing_invoices_get", map[string]any{"id": "inv_1008"}, ""); !p.ok() {
			t.Fatalf("replica %d: billing_invoices_get: %v", i, p)
		}
	}
	args := map[string]any{"id": "inv_1008", "reason": "licença devolvida"}
	state := r.ask(0, "billing_invoices_refund", args)
	var ok, replayed atomic.Int64
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch p := r.call(i, "billing_invoices_refund", args, state); {
			case p.ok():
				ok.Add(1)
			case p.code() == mcpserver.CodeConfirmationReplayed:
				replayed.Add(1)
			default:
				t.Errorf("unexpected answer: %v", p)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 29 || r.ledgerRows(nonce(t, state)) != 1 {
		t.Fatalf("ok=%d replayed=%d ledger rows %d, want 1, 29, 1", ok.Load(), replayed.Load(), r.ledgerRows(nonce(t, state)))
	}
	rec, err := r.direct.GetRecord(ctx, demo.Organization, billing.KindInvoice, "inv_1008")
	if err != nil {
		t.Fatal(err)
	}
	var inv billing.Invoice
	if err := json.Unmarshal(rec.Data, &inv); err != nil || inv.Status != billing.InvoiceRefunded {
		t.Errorf("invoice after the refund: %+v %v", inv.Status, err)
	}
}

func TestReplicasThroughADatabaseOutage(t *testing.T) {
	// Quick to give up: an outage is noticed well within the framework's
	// wait (the burst below accepts confirmation_unavailable).
	r := newReplicas(t, 3, true)
	ctx := context.Background()
	warm := func() {
		for i := range 3 {
			if p := r.call(i, "webhooks_list", map[string]any{}, ""); !p.ok() {
				t.Fatalf("replica %d: webhooks_list: %v", i, p)
			}
		}
	}
	warm()

	// 1. Backends terminated in the middle of a burst of confirmed calls:
	// every answer is consistent with the database.
	const burst = 24
	states := make([]string, burst)
	for i := range states {
		name := fmt.Sprintf("BURST_%02d", i)
		if err := r.direct.SetSecret(ctx, demo.Workspace, name, "v"); err != nil {
			t.Fatal(err)
		}
		states[i] = r.ask(i, "secrets_delete", map[string]any{"name": name})
	}
	replies := make([]reply, burst)
	var wg sync.WaitGroup
	for i := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = r.call(i+1, "secrets_delete", map[string]any{"name": fmt.Sprintf("BURST_%02d", i)}, states[i])
		}()
	}
	killed := 0
	for range 3 {
		time.Sleep(5 * time.Millisecond)
		killed += r.terminate()
	}
	wg.Wait()
	outcomes := map[string]int{}
	for i, p := range replies {
		name := fmt.Sprintf("BURST_%02d", i)
		used, present := r.ledgerRows(nonce(t, states[i])) == 1, r.hasSecret(name)
		switch {
		case p.ok():
			outcomes["ran"]++
			if !used || present {
				t.Errorf("%s ran but ledger=%v secret present=%v", name, used, present)
			}
		case p.code() == mcpserver.CodeConfirmationUnavailable:
			outcomes["unavailable"]++
			if !present {
				t.Errorf("%s answered confirmation_unavailable but the secret is gone", name)
			}
		case p.code() == mcpserver.CodeConfirmationReplayed:
			// The nonce was recorded but its answer lost: nothing ran.
			outcomes["replayed"]++
			if !used || !present {
				t.Errorf("%s answered replayed but ledger=%v secret present=%v", name, used, present)
			}
		case p.asked():
			// The state's key could not be read: the framework asks again.
			outcomes["asked again"]++
			if used || !present {
				t.Errorf("%s was asked again but ledger=%v secret present=%v", name, used, present)
			}
		case p.code() == "internal_error":
			// Confirmed, then the tool's own store call failed.
			outcomes["tool error"]++
			if !used {
				t.Errorf("%s failed in the tool but its nonce is not recorded", name)
			}
		default:
			t.Errorf("%s: unexpected answer %v", name, p)
		}
	}
	t.Logf("terminated %d backends during the burst; outcomes %v", killed, outcomes)
	// Service resumes: whatever did not run runs after a fresh question.
	for i := range states {
		name := fmt.Sprintf("BURST_%02d", i)
		if !r.hasSecret(name) {
			continue
		}
		args := map[string]any{"name": name}
		if err := testwait.Until(5*time.Second, func() error {
			q := r.call(i, "secrets_delete", args, "")
			if !q.asked() {
				return fmt.Errorf("asking: %v", q)
			}
			if p := r.call(i+2, "secrets_delete", args, q.result["requestState"].(string)); !p.ok() {
				return fmt.Errorf("confirming: %v", p)
			}
			return nil
		}); err != nil {
			t.Errorf("%s after the terminations: %v", name, err)
		}
	}
	for i := range burst {
		if name := fmt.Sprintf("BURST_%02d", i); r.hasSecret(name) {
			t.Errorf("%s still there", name)
		}
	}

	// 2. The database goes away (refused, then hanging): destructive calls
	// answer confirmation_unavailable quickly and change nothing; other calls
	// fail with an error; then service resumes without restarting anything.
	warm()
	if err := r.direct.SetSecret(ctx, demo.Workspace, "OUTAGE", "v"); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"name": "OUTAGE"}
	state := r.ask(0, "secrets_delete", args)
	for _, mode := range []pgtest.Mode{pgtest.Refuse, pgtest.Hang} {
		name := mode.String()
		r.px.Set(mode)
		r.terminate()
		start := time.Now()
		if p := r.call(1, "secrets_delete", args, state); p.code() != mcpserver.CodeConfirmationUnavailable {
			t.Errorf("%s: confirmed call: %v, want confirmation_unavailable", name, p)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("%s: confirmation_unavailable took %v", name, took)
		}
		if p := r.call(2, "secrets_delete", args, ""); p.code() != mcpserver.CodeConfirmationUnavailable {
			t.Errorf("%s: first call: %v, want confirmation_unavailable", name, p)
		}
		if p := r.call(0, "webhooks_list", map[string]any{}, ""); p.ok() || p.code() != "internal_error" {
			t.Errorf("%s: read call: %v, want an internal_error result", name, p)
		}
		if mode == pgtest.Refuse {
			read := benchTarget{url: r.urls[1], token: r.owner}
			if _, err := rpc(http.DefaultClient, read, "resources/read", map[string]any{"uri": "kobana://inbox/emails/eml_inv_00"}); err == nil || !strings.Contains(err.Error(), "try again later") {
				t.Errorf("%s: resources/read: %v, want a JSON-RPC error saying to try again later", name, err)
			}
			unseen := benchTarget{url: r.urls[1], token: r.viewer}
			if _, err := rpc(http.DefaultClient, unseen, "resources/read", map[string]any{"uri": "kobana://inbox/emails/eml_inv_00"}); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
				t.Errorf("%s: a token not seen before the outage: %v, want HTTP 500", name, err)
			}
		}
		if !r.hasSecret("OUTAGE") || r.ledgerRows(nonce(t, state)) != 0 {
			t.Fatalf("%s: half-written: secret present=%v, ledger rows %d", name, r.hasSecret("OUTAGE"), r.ledgerRows(nonce(t, state)))
		}
		r.px.Set(pgtest.Up)
		warm()
	}
	// Back: the same confirmation runs, once.
	if p := r.call(2, "secrets_delete", args, state); !p.ok() {
		t.Fatalf("after the outage: %v", p)
	}
	if r.hasSecret("OUTAGE") || r.ledgerRows(nonce(t, state)) != 1 {
		t.Errorf("after the outage: secret present=%v, ledger rows %d", r.hasSecret("OUTAGE"), r.ledgerRows(nonce(t, state)))
	}
	if p := r.call(0, "secrets_delete", args, state); p.code() != mcpserver.CodeConfirmationReplayed {
		t.Errorf("replay after the outage: %v", p)
	}
}

// TestReplicasNumberInvoicesOnce: invoices created at once on three
// replicas get every number from the demo's next one on, each once.
func TestReplicasNumberInvoicesOnce(t *testing.T) {
	r := newReplicas(t, 3, false)
	const n = 30
	// The replicas run on the real clock: a due date a month ahead.
	due := time.Now().AddDate(0, 1, 0).Format("2006-01-02")
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := r.call(i, "billing_invoices_create", map[string]any{"customer_id": "cus_acme", "description": "Hora extra",
				"amount_cents": 18000, "due_date": due}, "")
			sc, _ := p.result["structuredContent"].(map[string]any)
			num, _ := sc["number"].(string)
			if !p.ok() || num == "" {
				t.Errorf("replica %d: billing_invoices_create: %v", i%3, p)
				return
			}
			mu.Lock()
			seen[num]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i := 1015; i < 1015+n; i++ {
		if num := fmt.Sprintf("FAT-%06d", i); seen[num] != 1 {
			t.Errorf("%s handed out %d times, want once (all: %v)", num, seen[num], seen)
		}
	}
}
