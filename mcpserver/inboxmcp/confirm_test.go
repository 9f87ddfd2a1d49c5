package inboxmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/confirm"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

var (
	formCaps      = mcptest.FormCaps
	yesAnswer     = mcptest.YesAnswer
	resultText    = mcptest.ResultText
	inputRequired = mcptest.InputRequired
)

func (h *harness) deliveries() int {
	return h.count(demo.Workspace, inbox.KindDelivery, store.Query{})
}

func TestConfirmationRequiredWithoutModernFormClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := h.deliveries()
	// Era 2025, even with an elicitation handler.
	cs := h.Connect("owner", "2025-11-25", yes)
	if r := h.Call(cs, "webhooks_test", map[string]any{"id": "whk_chat"}); !r.IsError || !strings.Contains(textOf(r), "confirmation_required") {
		t.Errorf("era 2025: %s", textOf(r))
	}
	// 2026 without elicitation support, via the SDK.
	cs = h.Connect("owner", "2026-07-28", nil)
	if r := h.Call(cs, "webhooks_test", map[string]any{"id": "whk_chat"}); !r.IsError || !strings.Contains(textOf(r), "confirmation_required") {
		t.Errorf("2026 without elicitation: %s", textOf(r))
	}
	// 2026 declaring only URL elicitation.
	r := h.RawCall("owner", "webhooks_test", map[string]any{"id": "whk_chat"}, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "", nil)
	if r["isError"] != true || !strings.Contains(resultText(r), "confirmation_required") {
		t.Errorf("2026 url-only elicitation: %v", r)
	}
	// Stdio on era 2025.
	st := h.ConnectStdio("owner", "2025-11-25", nil)
	if r := h.Call(st, "emails_delete", map[string]any{"id": "eml_inv_00"}); !strings.Contains(textOf(r), "confirmation_required") {
		t.Errorf("stdio era 2025: %s", textOf(r))
	}
	if h.recv.count() != 0 || h.deliveries() != before || h.count(demo.Workspace, inbox.KindEmail, store.Query{Prefix: "eml_inv_00"}) != 1 {
		t.Fatalf("something ran: receiver=%d deliveries %d→%d", h.recv.count(), before, h.deliveries())
	}
}

func TestBareElicitationMeansForm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.RawCall("owner", "webhooks_test", map[string]any{"id": "whk_chat"}, map[string]any{"elicitation": map[string]any{}}, "", nil)
	if !inputRequired(r) {
		t.Fatalf("bare elicitation: %v", r)
	}
	form := r["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	params := form["params"].(map[string]any)
	if form["method"] != "elicitation/create" || params["mode"] != "form" || !strings.Contains(params["message"].(string), `{"id":"whk_chat"}`) {
		t.Errorf("question = %v", form)
	}
	schema := params["requestedSchema"].(map[string]any)
	if props := schema["properties"].(map[string]any); len(props) != 1 || props["confirm"] == nil {
		t.Errorf("the form must ask exactly one question: %v", schema)
	}
	if h.recv.count() != 0 {
		t.Fatal("the first call ran the tool")
	}
}

func TestConfirmationAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := map[string]any{"id": "whk_chat"}
	ask := func(who string) string {
		r := h.RawCall(who, "webhooks_test", args, formCaps, "", nil)
		if !inputRequired(r) {
			t.Fatalf("first call: %v", r)
		}
		return r["requestState"].(string)
	}
	for _, answer := range []map[string]any{
		{"confirm": map[string]any{"action": "decline"}},
		{"confirm": map[string]any{"action": "cancel"}},
		{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": false}}},
		{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": "yes"}}},
	} {
		r := h.RawCall("owner", "webhooks_test", args, formCaps, ask("owner"), answer)
		if r["isError"] != true || !strings.Contains(resultText(r), "user_declined") {
			t.Errorf("answer %v: %v", answer, r)
		}
	}
	if h.recv.count() != 0 {
		t.Fatalf("a declined call ran: %d requests", h.recv.count())
	}
	// Anything that does not match asks again, running nothing. The sandbox
	// workspace gets a webhook with the same id, so only the binding differs.
	wh, err := h.st.GetRecord(context.Background(), demo.Workspace, inbox.KindWebhook, "whk_chat")
	if err != nil {
		t.Fatal(err)
	}
	wh.Workspace = demo.Sandbox
	if err := h.st.PutRecord(context.Background(), wh); err != nil {
		t.Fatal(err)
	}
	if err := h.st.SetSecret(context.Background(), demo.Sandbox, inbox.WebhookSecretName("whk_chat"), "whsec_sandbox"); err != nil {
		t.Fatal(err)
	}
	state := ask("owner")
	mismatches := map[string]func() map[string]any{
		"other arguments": func() map[string]any {
			return h.RawCall("owner", "webhooks_test", map[string]any{"id": "whk_erp"}, formCaps, state, yesAnswer)
		},
		"other tool": func() map[string]any {
			return h.RawCall("owner", "webhooks_rotate_secret", args, formCaps, state, yesAnswer)
		},
		"other person": func() map[string]any { return h.RawCall("owner2", "webhooks_test", args, formCaps, state, yesAnswer) },
		"same person, other workspace": func() map[string]any {
			return h.RawCall("sandbox", "webhooks_test", args, formCaps, state, yesAnswer)
		},
		"tampered": func() map[string]any {
			parts := strings.Split(state, ".")
			claims := mustB64(t, parts[2])
			parts[2] = b64(strings.Replace(claims, `"person":"per_ana"`, `"person":"per_carla"`, 1))
			return h.RawCall("owner2", "webhooks_test", args, formCaps, strings.Join(parts, "."), yesAnswer)
		},
		"garbage": func() map[string]any {
			return h.RawCall("owner", "webhooks_test", args, formCaps, "not-a-state", yesAnswer)
		},
		"no answer": func() map[string]any { return h.RawCall("owner", "webhooks_test", args, formCaps, state, nil) },
		"other key": func() map[string]any {
			return h.RawCall("owner", "webhooks_test", args, formCaps, state, map[string]any{"ok": yesAnswer["confirm"]})
		},
		"unknown kid": func() map[string]any {
			return h.RawCall("owner", "webhooks_test", args, formCaps, "ks1.key_x"+state[len("ks1.key_x"):], yesAnswer)
		},
	}
	for name, f := range mismatches {
		if r := f(); !inputRequired(r) {
			t.Errorf("%s: %v, want the question again", name, r)
		}
	}
	if h.recv.count() != 0 {
		t.Fatalf("a mismatched confirmation ran the tool")
	}
	// The original state is still good for its own call: yes runs it once.
	r := h.RawCall("owner", "webhooks_test", args, formCaps, state, yesAnswer)
	if r["isError"] == true || h.recv.count() != 1 {
		t.Fatalf("confirmed call: %v, receiver=%d", r, h.recv.count())
	}
	// The delivery is signed with the webhook's secret.
	secrets, _ := h.st.RevealSecrets(context.Background(), demo.Workspace)
	got := h.recv.reqs[0]
	sig := got.header.Get("X-Kobana-Signature")
	ts := strings.TrimPrefix(strings.Split(sig, ",")[0], "t=")
	if want := inbox.Sign(secrets["kobana:webhook:whk_chat"], unix(t, ts), got.body); sig != want || got.header.Get("X-Kobana-Event") != "webhook.test" {
		t.Errorf("signature %q, want %q; event %q", sig, want, got.header.Get("X-Kobana-Event"))
	}
	// Sending the same confirmed call again is a replay.
	r = h.RawCall("owner", "webhooks_test", args, formCaps, state, yesAnswer)
	if r["isError"] != true || !strings.Contains(resultText(r), "confirmation_replayed") || h.recv.count() != 1 {
		t.Fatalf("replay: %v, receiver=%d", r, h.recv.count())
	}
}

func TestConfirmationExpiryAndKeyRotation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := map[string]any{"id": "whk_erp"}
	ask := func() string {
		r := h.RawCall("owner", "webhooks_test", args, formCaps, "", nil)
		if !inputRequired(r) {
			t.Fatalf("first call: %v", r)
		}
		return r["requestState"].(string)
	}
	state := ask()
	h.clock.Advance(confirm.TTL)
	if r := h.RawCall("owner", "webhooks_test", args, formCaps, state, yesAnswer); !inputRequired(r) || h.recv.count() != 0 {
		t.Fatalf("expired state: %v", r)
	}
	// A state signed before a key rotation still verifies…
	state = ask()
	ctx := context.Background()
	if _, err := h.st.RotateKey(ctx, "confirm"); err != nil {
		t.Fatal(err)
	}
	if r := h.RawCall("owner", "webhooks_test", args, formCaps, state, yesAnswer); r["isError"] == true || h.recv.count() != 1 {
		t.Fatalf("state from the previous key: %v", r)
	}
	// …until the retired key is pruned: then the question is asked again.
	state = ask()
	if _, err := h.st.RotateKey(ctx, "confirm"); err != nil {
		t.Fatal(err)
	}
	if err := h.st.PruneKeys(ctx, "confirm", h.clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if r := h.RawCall("owner", "webhooks_test", args, formCaps, state, yesAnswer); !inputRequired(r) || h.recv.count() != 1 {
		t.Fatalf("state from a pruned key: %v", r)
	}
}

func TestConfirmedCallRunsOnceAcrossFiftyConcurrentSends(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := map[string]any{"id": "whk_chat"}
	before := h.deliveries()
	r := h.RawCall("owner", "webhooks_test", args, formCaps, "", nil)
	state := r["requestState"].(string)
	ok, replayed := h.ToolCall("owner", "webhooks_test", args, formCaps, state, yesAnswer).Concurrently(t, 50, "confirmation_replayed")
	if ok != 1 || replayed != 49 {
		t.Fatalf("ok=%d replayed=%d, want 1 and 49", ok, replayed)
	}
	if h.recv.count() != 1 || h.deliveries() != before+1 {
		t.Fatalf("receiver got %d requests, store has %d new deliveries; want 1 and 1", h.recv.count(), h.deliveries()-before)
	}
}

func TestEveryDestructiveToolIsConfirmedAndFlagged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := map[string]map[string]any{
		"inboxes_delete": {"id": "ibx_receipts"}, "inboxes_add_recipient": {"id": "ibx_invoices", "recipient": "a@b.example"},
		"inboxes_remove_recipient": {"id": "ibx_invoices", "recipient": "@acme.example"},
		"emails_delete":            {"id": "eml_inv_00"}, "emails_reprocess": {"id": "eml_inv_00"}, "agents_delete": {"id": "agt_receipts"},
		"webhooks_delete": {"id": "whk_erp"}, "webhooks_test": {"id": "whk_erp"}, "webhooks_deliveries_replay": {"delivery_id": "dlv_erp_00"},
		"webhooks_deliveries_recover": {"webhook_id": "whk_chat", "since": "2026-01-01"},
		"webhooks_rotate_secret":      {"id": "whk_erp"}, "secrets_delete": {"name": "ERP_TOKEN"},
		"workspaces_set_retention": {"days": 30},
	}
	// The same calls on records that do not exist.
	missing := map[string]map[string]any{
		"inboxes_delete": {"id": "ibx_x"}, "inboxes_add_recipient": {"id": "ibx_x", "recipient": "a@b.example"},
		"inboxes_remove_recipient": {"id": "ibx_x", "recipient": "a@b.example"},
		"emails_delete":            {"id": "eml_x"}, "emails_reprocess": {"id": "eml_x"}, "agents_delete": {"id": "agt_x"},
		"webhooks_delete": {"id": "whk_x"}, "webhooks_test": {"id": "whk_x"}, "webhooks_deliveries_replay": {"delivery_id": "dlv_x"},
		"webhooks_deliveries_recover": {"webhook_id": "whk_x", "since": "2026-01-01"},
		"webhooks_rotate_secret":      {"id": "whk_x"}, "secrets_delete": {"name": "NO_SUCH_SECRET"},
	}
	want := map[string]bool{}
	for k := range wantArgs {
		want[k] = true
	}
	var destructive []string
	for _, tl := range tools.Tools {
		a := tl.Annotations
		if a == nil {
			t.Errorf("%s has no annotations", tl.Name)
			continue
		}
		isD := a.DestructiveHint != nil && *a.DestructiveHint
		if isD {
			destructive = append(destructive, tl.Name)
		}
		if isD != want[tl.Name] {
			t.Errorf("%s destructiveHint=%v", tl.Name, isD)
		}
		if isD && a.ReadOnlyHint {
			t.Errorf("%s is destructive and read-only", tl.Name)
		}
		if tl.OutputSchema == nil || tl.InputSchema == nil || len(tl.Description) < 40 {
			t.Errorf("%s lacks schemas or a usable description", tl.Name)
		}
	}
	if len(destructive) != len(want) {
		t.Errorf("destructive tools %v, want %d", destructive, len(want))
	}
	// None of them runs on the first 2026 call.
	for name := range want {
		r := h.RawCall("owner", name, wantArgs[name], formCaps, "", nil)
		if !inputRequired(r) {
			t.Errorf("%s first call: %v", name, r)
		}
	}
	// Nobody is asked to confirm a call on a record that does not exist: the
	// first call answers not_found, on either era, and nothing changes.
	legacy := h.Connect("owner", "2025-11-25", nil)
	before := h.count(demo.Workspace, inbox.KindEvent, store.Query{})
	for name, args := range missing {
		if r := h.RawCall("owner", name, args, formCaps, "", nil); inputRequired(r) || r["isError"] != true || !strings.Contains(resultText(r), `"not_found: `) {
			t.Errorf("%s on a missing record, 2026: %v", name, r)
		}
		if r := h.Call(legacy, name, args); !r.IsError || !strings.HasPrefix(textOf(r), "not_found: ") {
			t.Errorf("%s on a missing record, 2025: %s, want not_found rather than confirmation_required", name, textOf(r))
		}
	}
	if h.count(demo.Workspace, inbox.KindEvent, store.Query{}) != before || h.recv.count() != 0 {
		t.Error("a refused call changed something")
	}
}

// A reprocess that cannot start (the processor refuses it: say, the inbox
// has no agent) says so before anyone is asked.
func TestReprocessRefusalIsAnsweredBeforeAsking(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.proc.refuse["eml_rcp_00"] = inbox.Errorf(inbox.CodeNoAgent, "inbox ibx_receipts has no agent; attach one with inboxes_update")
	r := h.RawCall("owner", "emails_reprocess", map[string]any{"id": "eml_rcp_00"}, formCaps, "", nil)
	if inputRequired(r) || !strings.Contains(resultText(r), `"no_agent: `) {
		t.Fatalf("reprocess without an agent: %v", r)
	}
	if len(h.proc.requests()) != 0 {
		t.Error("a refused reprocess reached the processor")
	}
}

// After the user's yes, the processor is handed the request — the
// workspace, the e-mail, the person who asked and the mode — once; the
// answer is what it returns. A mode other than restart or resume is the
// caller's mistake, refused before asking.
func TestReprocessIsHandedToTheProcessorAfterYes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("owner", "2026-07-28", yes)
	for _, tc := range []struct {
		args map[string]any
		mode string
	}{
		{map[string]any{"id": "eml_inv_00"}, ""},
		{map[string]any{"id": "eml_inv_01", "mode": "resume"}, inbox.ReprocessResume},
		{map[string]any{"id": "eml_inv_02", "mode": "restart"}, inbox.ReprocessRestart},
	} {
		before := len(h.proc.requests())
		r := h.Call(cs, "emails_reprocess", tc.args)
		if r.IsError {
			t.Fatalf("reprocess %v: %s", tc.args, textOf(r))
		}
		var out inbox.Reprocessed
		structured(t, r, &out)
		reqs := h.proc.requests()
		if out.Status != inbox.ReprocessQueued || out.EmailID != tc.args["id"] || len(reqs) != before+1 {
			t.Fatalf("reprocess %v: %+v, %d requests", tc.args, out, len(reqs))
		}
		if got := reqs[before]; got.Workspace != demo.Workspace || got.EmailID != tc.args["id"] || got.Mode != tc.mode || got.Actor != inbox.PersonActor(demo.Owner) {
			t.Errorf("request %+v", got)
		}
	}
	r := h.RawCall("owner", "emails_reprocess", map[string]any{"id": "eml_inv_00", "mode": "again"}, formCaps, "", nil)
	if inputRequired(r) || !strings.Contains(resultText(r), "invalid") {
		t.Errorf("an unknown mode: %v", r)
	}
}

// Without a processor (a server that runs no pipeline), a reprocess is
// refused, saying why, before anyone is asked.
func TestReprocessWithoutAProcessorIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, func(o *inboxmcp.Options) { o.Processor = nil })
	r := h.RawCall("owner", "emails_reprocess", map[string]any{"id": "eml_inv_00"}, formCaps, "", nil)
	if inputRequired(r) || !strings.Contains(resultText(r), inboxmcp.CodeReprocessUnavailable) {
		t.Fatalf("reprocess without a processor: %v", r)
	}
}

// Over stdio, a 2026-07-28 client with form support is asked and its yes
// runs the tool once; a 2025 client with the same handler is refused.
func TestConfirmationOverStdio(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	asked := 0
	cs := h.ConnectStdio("owner", "2026-07-28", func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	})
	if r := h.Call(cs, "webhooks_test", map[string]any{"id": "whk_erp"}); r.IsError || asked != 1 || h.recv.count() != 1 {
		t.Fatalf("stdio 2026: %s asked=%d sent=%d", textOf(r), asked, h.recv.count())
	}
	legacy := h.ConnectStdio("owner", "2025-11-25", yes)
	if r := h.Call(legacy, "webhooks_test", map[string]any{"id": "whk_erp"}); !strings.Contains(textOf(r), "confirmation_required") || h.recv.count() != 1 {
		t.Fatalf("stdio 2025: %s sent=%d", textOf(r), h.recv.count())
	}
}
