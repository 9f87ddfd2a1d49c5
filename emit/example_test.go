package emit_test

import (
	"fmt"
	"io"
	"log"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
)

// Render gives the request that goes on the wire and, from the same walk,
// its redacted record.
func ExampleRender() {
	plan, _ := compile.Compile([]byte(`{"result": 1, "workflow": [{"type": "request",
  "url": "https://erp.example.com/payables?source=${{kobana.email_id}}",
  "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"},
  "body": {"supplier": "ACME \"Ltda\"", "note": "token ${{secrets.FINANCE_TOKEN}}"}}]}`), compile.Options{})

	scope := &resolve.Scope{
		Secrets: resolve.SecretMap{"FINANCE_TOKEN": "tok-9f8e7d"},
		Facts:   resolve.FactMap{"email_id": "em_42"},
	}
	scope.Begin(0, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	req, err := emit.Render(plan.Steps[0], scope)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body())
	fmt.Println("sent:    ", req.Method, req.URL, req.Header.Get("Authorization"), req.ContentLength())
	fmt.Println("         ", string(body))
	fmt.Println("recorded:", req.Record.URL, req.Record.Headers["Authorization"])
	fmt.Println("         ", string(req.Record.Body))
	// Output:
	// sent:     POST https://erp.example.com/payables?source=em_42 Bearer tok-9f8e7d 54
	//           {"supplier":"ACME \"Ltda\"","note":"token tok-9f8e7d"}
	// recorded: https://erp.example.com/payables?source=em_42 Bearer [redacted secrets.FINANCE_TOKEN]
	//           {"supplier":"ACME \"Ltda\"","note":"token [redacted secrets.FINANCE_TOKEN]"}
}

// A header that substitution would give a line break fails the step before
// anything is sent.
func ExampleRender_failBeforeSend() {
	plan, _ := compile.Compile([]byte(`{"result": 1, "workflow": [{"type": "request",
  "url": "https://erp.example.com/", "headers": {"X-Note": "${{secrets.NOTE}}"}}]}`), compile.Options{})

	scope := &resolve.Scope{Secrets: resolve.SecretMap{"NOTE": "a\r\nX-Injected: 1"}}
	scope.Begin(0, time.Now())
	_, err := emit.Render(plan.Steps[0], scope)
	fmt.Println(emit.IsFailBeforeSend(err))
	fmt.Println(err)
	// Output:
	// true
	// header X-Note: the value contains a carriage return (CR) after substitution; it is not sent, as it could inject headers
}
