package emit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// TestRenderWithStandIn: a stand-in answers for what a dry run cannot know
// (a secret's value, an earlier response) — in the live request its value,
// in the record the text it asks for (a secret keeps its marker) — and
// leaves every other reference, and forward ones, to the scope.
func TestRenderWithStandIn(t *testing.T) {
	t.Parallel()
	p := plan(t, `{"workflow":[
	 {"type":"request","url":"https://erp.example.com/a"},
	 {"type":"request","url":"https://erp.example.com/p/${{steps.0.response.body.data.id}}?e=${{kobana.email_id}}",
	  "headers":{"Authorization":"Bearer ${{secrets.FINANCE_TOKEN}}","X-Id":"${{steps.0.response.body.data.id}}"},
	  "body":{"id":"${{steps.0.response.body.data.id}}","k":"${{secrets.MISSING}}"}}]}`)
	s := scope(pdfAttachments())
	s.Begin(1, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	s.Record(0, &resolve.Result{State: runrecord.Succeeded}) // no response: only a stand-in can answer
	var asked []string
	opts := emit.Options{StandIn: func(r *lang.Ref) (resolve.Value, string, bool) {
		asked = append(asked, r.String())
		switch r.Namespace {
		case lang.Secrets:
			return resolve.Value{Kind: resolve.Secret, Text: "stand-" + r.Key}, "", true
		case lang.Steps:
			return resolve.Value{Kind: resolve.Text, Text: "v1"}, "${{" + r.String() + "}}", true
		}
		return resolve.Value{}, "", false
	}}
	req, err := emit.RenderWith(p.Steps[1], s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.String(); got != "https://erp.example.com/p/v1?e=em_42" {
		t.Errorf("live url %s", got)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer stand-FINANCE_TOKEN" {
		t.Errorf("live Authorization %q", got)
	}
	if got := string(readAll(t, req)); got != `{"id":"v1","k":"stand-MISSING"}` {
		t.Errorf("live body %s", got)
	}
	want := `{"method":"POST","url":"https://erp.example.com/p/${{steps.0.response.body.data.id}}?e=em_42","headers":{"Authorization":"Bearer [redacted secrets.FINANCE_TOKEN]","Content-Type":"application/json","X-Id":"${{steps.0.response.body.data.id}}"},"body":{"id":"${{steps.0.response.body.data.id}}","k":"[redacted secrets.MISSING]"}}`
	if got := recordJSON(t, req); got != want {
		t.Errorf("record\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(asked, " "); !strings.Contains(got, "kobana.email_id") {
		t.Errorf("the stand-in was not asked for kobana.email_id: %s", got)
	}

	// Without stand-ins the same step fails on what the scope lacks.
	if _, err := emit.Render(p.Steps[1], s); err == nil {
		t.Error("Render without stand-ins succeeded")
	}

	// A forward reference is never offered to the stand-in.
	fp := plan(t, `{"workflow":[{"type":"request","url":"https://x.example/${{steps.0.response.status}}"}]}`)
	s.Begin(0, time.Now())
	asked = nil
	_, err = emit.RenderWith(fp.Steps[0], s, opts)
	var re *resolve.RefError
	if !errors.As(err, &re) || re.Reason != runrecord.ReasonForward {
		t.Errorf("forward reference: %v", err)
	}
	if len(asked) != 0 {
		t.Errorf("the stand-in was asked for %v", asked)
	}
}
