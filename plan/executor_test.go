package plan_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// received is one request as the receiving server got it.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// TestThePlanIsWhatTheExecutorSends runs a workflow with the executor
// against a local receiver and plans it with the same facts, e-mail and
// example responses equal to what the receiver answers (and the secret
// names, not their values): the plan's method, URL, headers and body,
// with each secret marker replaced by the secret's value, are byte for byte
// what the receiver got — the steps' identity headers included, when the
// run has identities and the plan is told them — and each body's size plus
// the secrets' lengths is its Content-Length.
func TestThePlanIsWhatTheExecutorSends(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []received
	answers := map[string]string{
		"/payables":                          `{"data":{"id":"pay_77","total":1250.5}}`,
		"/payables/pay_77/attachments":       `{"data":{"id":"att_1"}}`,
		"/notify/T0/B0/xyz":                  `ok`,
		"/payables/pay_77/notes/em_42/att_1": `{}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Method, r.URL.RequestURI(), r.Header.Clone(), b})
		mu.Unlock()
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(a, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(201)
		io.WriteString(w, a)
	}))
	defer srv.Close()
	base := srv.URL
	secrets := resolve.SecretMap{"TOKEN": "tk-live-0001", "HOOK": base + "/notify/T0/B0/xyz"}
	facts := resolve.FactMap{"email_id": "em_42", "env": "sandbox"}
	doc := fmt.Sprintf(`{"result":{},"workflow":[
	 {"type":"request","url":"%[1]s/payables","headers":{"Authorization":"Bearer ${{secrets.TOKEN}}","x-env":"${{kobana.env}}"},
	  "body":{"supplier":"ACME","amount":1250.5,"email":"${{kobana.email_id}}","key":"${{secrets.TOKEN}}","ñ":"ação \"q\""},"expected_status":201},
	 {"type":"request","url":"%[1]s/payables/${{steps.0.response.body.data.id}}/attachments","headers":{"Authorization":"Bearer ${{secrets.TOKEN}}"},
	  "form":{"file":"${{email.attachments.0}}","name":"${{email.attachments.0.filename}}","kobana_email_id":"${{kobana.email_id}}"},"expected_status":201},
	 {"type":"request","url":"${{secrets.HOOK}}","body":"Cuenta ${{steps.0.response.body.data.id}} (${{steps.0.response.body.data.total}})","expected_status":201},
	 {"type":"request","method":"PUT","url":"%[1]s/payables/${{steps.0.response.body.data.id}}/notes/${{kobana.email_id}}/${{steps.1.response.body.data.id}}",
	  "body":{"doc":"${{email.attachments.1.base64}}","size":"${{email.attachments.1.size}}"},"expected_status":201}]}`, base)

	msg, err := eml.Open("../examples/emails/acme-invoice.eml")
	if err != nil {
		t.Fatal(err)
	}
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	ex := executor.New(executor.Options{Guard: g, Now: func() time.Time { return testNow }})
	compiled, diags := compile.Compile([]byte(doc), compile.Options{})
	if diags.HasErrors() {
		t.Fatalf("the document does not compile: %v", diags)
	}
	rec := ex.Run(context.Background(), compiled, executor.Env{Secrets: secrets, Facts: facts,
		Attachments: func() (resolve.Attachments, error) { return msg, nil }, Journal: identities("wrun_plan")})
	if rec.Status != runrecord.RunSucceeded {
		b, _ := json.MarshalIndent(rec, "", " ")
		t.Fatalf("the run failed: %s", b)
	}

	// Example responses: what the receiver answered.
	examples := map[int]*plan.Response{}
	for i, s := range rec.Steps {
		r := &plan.Response{Status: s.Response.Status, Headers: s.Response.Headers, Body: s.Response.Body}
		examples[i] = r
	}
	// The run closed its snapshot of the e-mail; the plan reads its own.
	if msg, err = eml.Open("../examples/emails/acme-invoice.eml"); err != nil {
		t.Fatal(err)
	}
	defer msg.Close()
	p := plan.Make(context.Background(), []byte(doc), plan.Inputs{SecretNames: []string{"TOKEN", "HOOK"}, Facts: facts,
		Email: msg, Responses: examples, Guard: g, Now: testNow, StepID: identities("wrun_plan").Identity})
	if p.Summary.Send != 4 {
		var text strings.Builder
		plan.WriteText(&text, p)
		t.Fatalf("plan summary %+v\n%s", p.Summary, text.String())
	}
	// The plan, like the record, describes an attachment's base64.
	a1, _ := msg.Attachment(1)
	rc, err := msg.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(rc)
	rc.Close()
	reveal := strings.NewReplacer("[redacted secrets.TOKEN]", secrets["TOKEN"], "[redacted secrets.HOOK]", secrets["HOOK"],
		fmt.Sprintf("[attachment 1: %s, %s, %d bytes]", a1.Filename, a1.ContentType, a1.Size), base64.StdEncoding.EncodeToString(raw))
	if len(got) != 4 {
		t.Fatalf("the receiver got %d requests", len(got))
	}
	for i, s := range p.Steps {
		r, want := s.Request, got[i]
		if want.header.Get(runrecord.HeaderStepID) != runrecord.StepID("wrun_plan", i) || want.header.Get(runrecord.HeaderIdempotencyKey) == "" && r.Method != "PUT" {
			t.Errorf("step %d: sent identity %q, key %q", i, want.header.Get(runrecord.HeaderStepID), want.header.Get(runrecord.HeaderIdempotencyKey))
		}
		if r.Method != want.method {
			t.Errorf("step %d: plan %s, sent %s", i, r.Method, want.method)
		}
		if u := reveal.Replace(r.URL); u != base+want.path {
			t.Errorf("step %d: plan url %s, sent %s", i, u, base+want.path)
		}
		for _, h := range r.Headers {
			v := reveal.Replace(h.Value)
			if h.Value == "multipart/form-data; boundary="+plan.BoundaryShown {
				v = want.header.Get(h.Name)
				if !strings.HasPrefix(v, "multipart/form-data; boundary=") {
					t.Errorf("step %d: sent content type %q", i, v)
				}
			}
			if sent := want.header.Get(h.Name); sent != v {
				t.Errorf("step %d: header %s: plan %q, sent %q", i, h.Name, v, sent)
			}
		}
		secretBytes := 0
		for _, u := range r.Body.Unknown {
			name, ok := strings.CutPrefix(u, "secrets.")
			if !ok {
				t.Errorf("step %d: unknown %s, though every input was given", i, u)
			}
			secretBytes += len(secrets[name]) * strings.Count(string(r.Body.JSON), "[redacted secrets."+name+"]")
		}
		if r.Body.Size+int64(secretBytes) != int64(len(want.body)) {
			t.Errorf("step %d: plan size %d + %d bytes of secrets, sent %d bytes", i, r.Body.Size, secretBytes, len(want.body))
		}
		switch r.Body.Kind {
		case plan.BodyJSON:
			if b := reveal.Replace(string(r.Body.JSON)); b != string(want.body) {
				t.Errorf("step %d: plan body\n%s\nsent\n%s", i, b, want.body)
			}
		case plan.BodyText:
			if b := reveal.Replace(*r.Body.Text); b != string(want.body) {
				t.Errorf("step %d: plan body %q, sent %q", i, b, want.body)
			}
		case plan.BodyMultipart:
			_, params, _ := mime.ParseMediaType(want.header.Get("Content-Type"))
			mr := multipart.NewReader(bytes.NewReader(want.body), params["boundary"])
			for _, part := range r.Body.Parts {
				mp, err := mr.NextPart()
				if err != nil {
					t.Fatalf("step %d: part %s: %v", i, part.Name, err)
				}
				data, _ := io.ReadAll(mp)
				if mp.FormName() != part.Name || int64(len(data)) != part.Size {
					t.Errorf("step %d: plan part %s of %d bytes, sent %s of %d", i, part.Name, part.Size, mp.FormName(), len(data))
				}
				if part.Value != nil && reveal.Replace(*part.Value) != string(data) {
					t.Errorf("step %d: part %s: plan %q, sent %q", i, part.Name, *part.Value, data)
				}
				if part.File != nil && (part.File.Filename != mp.FileName() || part.File.ContentType != mp.Header.Get("Content-Type")) {
					t.Errorf("step %d: file part %+v, sent %q %q", i, part.File, mp.FileName(), mp.Header.Get("Content-Type"))
				}
			}
		}
		// The record the run keeps shows what the plan shows.
		if rr := rec.Steps[i].Request; rr.URL != r.URL {
			t.Errorf("step %d: record url %s, plan %s", i, rr.URL, r.URL)
		}
	}
}

// identities is a journal that gives the steps of run R the identities R/i
// and records nothing.
type identities string

func (r identities) Identity(i int) string                       { return runrecord.StepID(string(r), i) }
func (identities) Sending(context.Context, runrecord.Step) error { return nil }
func (identities) Done(context.Context, runrecord.Step) error    { return nil }
