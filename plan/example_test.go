package plan_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/plan"
)

// A dry run of the payable example with only the workspace's secret names
// known: SLACK_WEBHOOK_URL is missing, so its step would fail before
// sending; the others would go, with values known only at run time shown as
// their references.
func ExampleMake() {
	p := plan.Make(context.Background(), []byte(examples.Payable), plan.Inputs{SecretNames: []string{"FINANCE_TOKEN"}})
	for _, s := range p.Steps {
		fmt.Println(s.Index, s.Outcome, s.Reason, s.DependsOn, s.Unknown)
	}
	fmt.Printf("send %d, fail %d, skip %d\n", p.Summary.Send, p.Summary.Fail, p.Summary.Skip)
	// Output:
	// 0 send  [] [secrets.FINANCE_TOKEN kobana.email_id]
	// 1 send  [0] [steps.0.response.body.data.id secrets.FINANCE_TOKEN email.attachments.0 kobana.email_id]
	// 2 fail missing-secret [0] []
	// send 2, fail 1, skip 0
}

// WriteText prints a plan for a person, as kobana plan does.
func ExampleWriteText() {
	p := plan.Make(context.Background(), []byte(`{"result": 1, "workflow": [
  {"type": "request", "label": "ping", "url": "https://erp.example.com/ping"}]}`), plan.Inputs{Now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)})
	plan.WriteText(os.Stdout, p)
	// Output:
	// 1 step: 1 would be sent, 0 would fail before sending, 0 would be skipped
	// secrets: names not given; every secret is assumed to exist
	// facts: not given; shown as references (kobana.now is 2026-12-01T09:00:00.000Z)
	// e-mail: not given; attachments shown as references
	// example responses: none; references to responses are shown as written
	//
	// step 0 "ping": would be sent
	//   POST https://erp.example.com/ping
	//   no body
	//   guard: host erp.example.com is a name: the guard checks the address it resolves to when the request is sent
	//   expects any 2xx status
}
