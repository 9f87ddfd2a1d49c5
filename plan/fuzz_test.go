package plan_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/plan"
)

// FuzzMake: any document is planned without a panic; the plan is valid
// exactly when the compiler finds no error, has one step per step of the
// compiled workflow, counts its outcomes right, encodes as JSON and prints
// as text; no secret name it is not given is ever reported present.
func FuzzMake(f *testing.F) {
	for _, dir := range []string{"testdata", "../examples/workflows", "../examples/workflows/invalid"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range paths {
			if strings.Count(filepath.Base(p), ".") > 1 {
				continue // NAME.inputs.json, NAME.responses.json, …
			}
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	in := plan.Inputs{SecretNames: []string{"FINANCE_TOKEN"}, Facts: map[string]string{"email_id": "em_1\r\nX: y"},
		Responses: map[int]*plan.Response{0: {Status: 201, Body: []byte(`{"data":{"id":"p1","n":null}}`)}}, Now: testNow}
	f.Fuzz(func(t *testing.T, doc []byte) {
		p := plan.Make(context.Background(), doc, in)
		cp, diags := compile.Compile(doc, compile.Options{})
		if p.Valid != !diags.HasErrors() {
			t.Fatalf("valid %v, diagnostics %v", p.Valid, diags)
		}
		steps := 0
		if cp != nil {
			steps = len(cp.Steps)
		}
		if len(p.Steps) != steps {
			t.Fatalf("%d planned steps for %d", len(p.Steps), steps)
		}
		var s plan.Summary
		for _, st := range p.Steps {
			switch st.Outcome {
			case plan.Send:
				s.Send++
				if st.Request == nil {
					t.Fatalf("step %d is sent without a request", st.Index)
				}
			case plan.Fail:
				s.Fail++
			case plan.Skip:
				s.Skip++
			default:
				t.Fatalf("step %d: outcome %q", st.Index, st.Outcome)
			}
		}
		if s != p.Summary {
			t.Fatalf("summary %+v, counted %+v", p.Summary, s)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
		if err := plan.WriteText(io.Discard, p); err != nil {
			t.Fatal(err)
		}
	})
}
