package inboxmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/internal/demo"
)

// Every Inbox resource and template, read on both eras, over HTTP
// and over stdio.
func TestEveryResourceBothEras(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct {
		uri  string
		want []string // substrings of the JSON served
	}{
		{"kobana://inbox/models", []string{`"claude-sonnet-4-5"`, `"input_usd_per_million_tokens":3`}},
		{"kobana://inbox/usage", []string{`"workspace_id":"ws_finance"`, `"by_model"`, `"cost_usd"`, `"agent_runs_failed"`}},
		{"kobana://inbox/workspaces/ws_finance", []string{`"limits"`, `"emails_per_month":5000`}},
		{"kobana://inbox/inboxes/ibx_invoices", []string{`"address":"invoices@finance.in.kobana.email"`, `"recipients"`, `"attachment_rules"`, `"filters"`}},
		{"kobana://inbox/emails/eml_inv_00", []string{`"subject":"Fatura NF-004100`, `"filename":"fatura-nf-004100.pdf"`, `"status":"processed"`, `"text":"Olá,`}},
		{"kobana://inbox/emails/eml_inv_01/eml", []string{`"url":"http://127.0.0.1`, `/eml/ws_finance/eml_inv_01?`, `"expires_at"`}},
		{"kobana://inbox/agents/agt_invoices", []string{`"model":"claude-sonnet-4-5"`, `"system_message"`, `"skills"`}},
		{"kobana://inbox/agent-runs/arun_inv_04", []string{`"status":"failed"`, `"cause":"invalid_output"`, `"tokens"`, `"cost_usd"`}},
		{"kobana://inbox/workflow-runs/wrun_inv_00", []string{`"status":"succeeded"`, `[redacted secrets.ERP_TOKEN]`, `"attachment":0`}},
		{"kobana://inbox/webhooks/whk_chat", []string{`"status":"failing"`, `"failing_since"`, `"events"`}},
		{"kobana://inbox/system-events/evt_0001", []string{`"type":"secret.set"`, `"payload"`}},
	}
	for _, era := range eras {
		for name, cs := range map[string]*mcp.ClientSession{"http": h.Connect("viewer", era, nil), "stdio": h.ConnectStdio("viewer", era, nil)} {
			for _, c := range cases {
				res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: c.uri})
				if err != nil {
					t.Errorf("%s %s read %s: %v", era, name, c.uri, err)
					continue
				}
				if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || !json.Valid([]byte(res.Contents[0].Text)) {
					t.Errorf("%s %s %s: contents %+v", era, name, c.uri, res.Contents)
					continue
				}
				for _, w := range c.want {
					if !strings.Contains(res.Contents[0].Text, w) {
						t.Errorf("%s %s %s: missing %s in %.300s", era, name, c.uri, w, res.Contents[0].Text)
					}
				}
				if res.CacheScope != "private" {
					t.Errorf("%s %s %s: cacheScope %q, want private", era, name, c.uri, res.CacheScope)
				}
			}
		}
	}
}

func TestResourceListsAndNoSecretResource(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, era := range eras {
		cs := h.Connect("owner", era, nil)
		rl, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var fixed []string
		for _, r := range rl.Resources {
			fixed = append(fixed, r.URI)
		}
		if strings.Join(fixed, " ") != "kobana://inbox/models kobana://inbox/usage" {
			t.Errorf("%s resources/list = %v", era, fixed)
		}
		tl, err := cs.ListResourceTemplates(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.ResourceTemplates) != 9 {
			t.Errorf("%s templates = %d, want 9", era, len(tl.ResourceTemplates))
		}
		for _, tpl := range tl.ResourceTemplates {
			if strings.Contains(tpl.URITemplate, "secret") {
				t.Errorf("%s a secret template is listed: %s", era, tpl.URITemplate)
			}
		}
		if rl.CacheScope != "private" || tl.CacheScope != "private" {
			t.Errorf("%s list cacheScope %q/%q, want private", era, rl.CacheScope, tl.CacheScope)
		}
		caps := cs.InitializeResult().Capabilities
		if caps.Resources == nil || caps.Resources.Subscribe || caps.Resources.ListChanged {
			t.Errorf("%s resources capability %+v: want no subscribe, no listChanged", era, caps.Resources)
		}
		// On 2026-07-28 subscriptions go through subscriptions/listen, which
		// agrees only to what the capabilities above allow: nothing.
		if era < "2026-07-28" {
			if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "kobana://inbox/models"}); rpcCode(err) != -32601 {
				t.Errorf("%s resources/subscribe = %v, want method not found", era, err)
			}
		}
	}
}

func TestResourceNotFoundNeverHintsOtherWorkspace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := map[string]int64{"2025-11-25": -32002, "2026-07-28": -32602}
	uris := []string{
		"kobana://inbox/inboxes/ibx_sandbox_test", // exists, in another workspace
		"kobana://inbox/workspaces/ws_sandbox",    // the other workspace itself
		"kobana://inbox/inboxes/ibx_nope",
		"kobana://inbox/emails/eml_inv_00/raw",
		"kobana://inbox/secrets/ERP_TOKEN",
		"kobana://billing/organization",
		"kobana://inbox/emails/../inboxes/ibx_invoices",
	}
	for _, era := range eras {
		cs := h.Connect("owner", era, nil)
		var msgs []string
		for _, u := range uris {
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: u})
			if got := rpcCode(err); got != want[era] {
				t.Errorf("%s %s: code %d (%v), want %d", era, u, got, err, want[era])
			}
			if err != nil {
				msgs = append(msgs, strings.ReplaceAll(err.Error(), u, "URI"))
			}
		}
		// Existing-elsewhere and missing answer identically.
		if len(msgs) > 2 && msgs[0] != msgs[2] {
			t.Errorf("%s: other-workspace answer %q differs from missing answer %q", era, msgs[0], msgs[2])
		}
		// The sandbox owner does read its own inbox.
		sb := h.Connect("sandbox", era, nil)
		if _, err := sb.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "kobana://inbox/inboxes/ibx_sandbox_test"}); err != nil {
			t.Errorf("%s sandbox read: %v", era, err)
		}
	}
}

func TestGuestSeesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, era := range eras {
		cs := h.Connect("guest", era, nil)
		tools, _ := cs.ListTools(context.Background(), nil)
		res, _ := cs.ListResources(context.Background(), nil)
		tpls, _ := cs.ListResourceTemplates(context.Background(), nil)
		prompts, _ := cs.ListPrompts(context.Background(), nil)
		if len(tools.Tools)+len(res.Resources)+len(tpls.ResourceTemplates)+len(prompts.Prompts) != 0 {
			t.Errorf("%s guest sees %d tools, %d resources, %d templates, %d prompts", era, len(tools.Tools), len(res.Resources), len(tpls.ResourceTemplates), len(prompts.Prompts))
		}
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "kobana://inbox/models"})
		if rpcCode(err) == 0 {
			t.Errorf("%s guest read models", era)
		}
		comp, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "kobana://inbox/emails/{id}"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "eml"}})
		if err != nil || len(comp.Completion.Values) != 0 {
			t.Errorf("%s guest completion = %+v %v", era, comp, err)
		}
	}
}

func TestSignedEMLDownload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.Connect("viewer", "2026-07-28", nil)
	res := h.Call(cs, "emails_eml", map[string]any{"id": "eml_inv_01"})
	var link inboxmcp.EMLLink
	structured(t, res, &link)
	raw, err := h.st.GetBlob(context.Background(), demo.Workspace, "eml_inv_01")
	if err != nil {
		t.Fatal(err)
	}
	get := func(u string) (int, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, body := get(link.URL)
	if code != 200 || string(body) != string(raw) {
		t.Fatalf("download = %d, %d bytes; want 200 and the %d-byte .eml", code, len(body), len(raw))
	}
	// A download can resume: byte ranges are served from the same snapshot.
	req, _ := http.NewRequest(http.MethodGet, link.URL, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(part) != string(raw[10:20]) || resp.Header.Get("Content-Type") != "message/rfc822" {
		t.Errorf("range download = %d %q (%s), want 206 and %q", resp.StatusCode, part, resp.Header.Get("Content-Type"), raw[10:20])
	}
	if code, _ := get(strings.Replace(link.URL, "eml_inv_01", "eml_inv_02", 1)); code != http.StatusForbidden {
		t.Errorf("link reused for another e-mail: %d", code)
	}
	if code, _ := get(strings.Replace(link.URL, "sig=", "sig=A", 1)); code != http.StatusForbidden {
		t.Errorf("tampered signature: %d", code)
	}
	h.clock.Advance(inboxmcp.DownloadTTL + time.Second)
	if code, _ := get(link.URL); code != http.StatusGone {
		t.Errorf("expired link: %d, want 410", code)
	}
}
