package executor_test

import (
	"context"
	"fmt"

	"github.com/kobana/workflow/executor"
)

// An agent's document that does not validate runs nothing: its record is a
// failed run with no steps, and the errors say why.
func ExampleRunDocument() {
	rec := executor.RunDocument(context.Background(), []byte(`{"result": 1, "workflow": [
  {"type": "request", "url": "https://erp.example.com/payables", "method": "post"}]}`), executor.Env{})
	fmt.Println(rec.Status, len(rec.Steps), rec.Error)
	for _, d := range rec.Diagnostics {
		fmt.Println(d.Severity, d.Code, d.Pointer)
	}
	// Output:
	// failed 0 the workflow did not validate; nothing was sent
	// error method-invalid /workflow/0/method
}
