package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/golden"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve/eml"
)

// testNow is kobana.now in every golden plan.
var testNow = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// goldenInputs is testdata/NAME.inputs.json: what the plan of NAME.json is
// made with. Paths are relative to testdata.
type goldenInputs struct {
	SecretNames   []string                `json:"secret_names"`
	Facts         map[string]string       `json:"facts"`
	FactsFile     string                  `json:"facts_file"`
	EML           string                  `json:"eml"`
	Responses     json.RawMessage         `json:"responses"`
	ResponsesFile string                  `json:"responses_file"`
	Allow         []string                `json:"allow"`
	Lookup        map[string][]netip.Addr `json:"lookup"`
	Policy        json.RawMessage         `json:"policy"`
}

// inputs reads testdata/NAME.inputs.json, if any.
func inputs(t testing.TB, name string) plan.Inputs {
	t.Helper()
	in := plan.Inputs{Now: testNow}
	data, err := os.ReadFile(filepath.Join("testdata", name+".inputs.json"))
	if os.IsNotExist(err) {
		return in
	}
	if err != nil {
		t.Fatal(err)
	}
	var gi goldenInputs
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&gi); err != nil {
		t.Fatalf("%s.inputs.json: %v", name, err)
	}
	in.SecretNames = gi.SecretNames
	in.Facts = gi.Facts
	if gi.FactsFile != "" {
		b, err := os.ReadFile(filepath.Join("testdata", gi.FactsFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &in.Facts); err != nil {
			t.Fatal(err)
		}
	}
	if gi.EML != "" {
		msg, err := eml.Open(filepath.Join("testdata", gi.EML))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { msg.Close() })
		in.Email = msg
	}
	resp := []byte(gi.Responses)
	if gi.ResponsesFile != "" {
		if resp, err = os.ReadFile(filepath.Join("testdata", gi.ResponsesFile)); err != nil {
			t.Fatal(err)
		}
	}
	if len(resp) > 0 {
		if in.Responses, err = plan.ParseResponses(resp); err != nil {
			t.Fatal(err)
		}
	}
	if gi.Allow != nil {
		in.Guard = &guard.Guard{}
		for _, a := range gi.Allow {
			in.Guard.Allow = append(in.Guard.Allow, netip.MustParsePrefix(a))
		}
	}
	if len(gi.Policy) > 0 {
		if in.Policy, err = egress.ParsePolicy(gi.Policy); err != nil {
			t.Fatalf("%s.inputs.json: policy: %v", name, err)
		}
	}
	if gi.Lookup != nil {
		in.Lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			if addrs, ok := gi.Lookup[host]; ok {
				return addrs, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		}
	}
	return in
}

// TestGolden plans each testdata/NAME.json with NAME.inputs.json and
// compares the text (NAME.txt) and the JSON (NAME.plan.json) with the
// golden files; -update rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range docs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if strings.Contains(name, ".") {
			continue // NAME.inputs.json, NAME.plan.json
		}
		n++
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p := plan.Make(context.Background(), doc, inputs(t, name))
			var text bytes.Buffer
			if err := plan.WriteText(&text, p); err != nil {
				t.Fatal(err)
			}
			js, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			js = append(js, '\n')
			golden.Check(t, filepath.Join("testdata", name+".txt"), text.Bytes())
			golden.Check(t, filepath.Join("testdata", name+".plan.json"), js)
		})
	}
	if n < 5 {
		t.Fatalf("found %d golden documents", n)
	}
}

// TestResponsesWithoutStatus: an example response may leave the status out,
// as the language server's sidecar file allows; the step is then assumed to
// get the status it expects.
func TestResponsesWithoutStatus(t *testing.T) {
	t.Parallel()
	rs, err := plan.ParseResponses([]byte(`{"0": {"body": {"id": "p1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"workflow":[{"type":"request","url":"https://x.example/a","expected_status":201},
	 {"type":"request","url":"https://x.example/b/${{steps.0.response.body.id}}?s=${{steps.0.response.status}}"}]}`
	p := plan.Make(context.Background(), []byte(doc), plan.Inputs{Responses: rs, Now: testNow})
	if p.Steps[0].Example == nil || p.Steps[0].Example.Status != 201 || !p.Steps[0].Example.Succeeds {
		t.Errorf("step 0 example %+v", p.Steps[0].Example)
	}
	if p.Steps[1].Request == nil || p.Steps[1].Request.URL != "https://x.example/b/p1?s=201" {
		t.Errorf("step 1: %+v", p.Steps[1])
	}
	if _, err := plan.ParseResponses([]byte(`[{"status": 42}]`)); err == nil || !strings.Contains(err.Error(), "status 42 is not an HTTP status") {
		t.Errorf("status 42: %v", err)
	}
}
