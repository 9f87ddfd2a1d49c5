package resolvetest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/resolvetest"
)

// A test of code that runs workflows gives the run an e-mail's attachments
// from memory, and counts what was read.
func ExampleAttachments() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, h, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, h.Filename)
	}))
	defer srv.Close()
	plan, _ := compile.Compile([]byte(strings.ReplaceAll(`{"result": 1, "workflow": [
  {"type": "request", "method": "POST", "url": "SERVER/files", "form": {"file": "${{email.attachments.0}}"}}]}`, "SERVER", srv.URL)), compile.Options{})

	att := &resolvetest.Attachments{Files: []resolvetest.File{{Filename: "invoice.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7")}}}
	ex := executor.New(executor.Options{Guard: &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	rec := ex.Run(context.Background(), plan, executor.Env{Attachments: func() (resolve.Attachments, error) { return att, nil }})
	fmt.Println(rec.Status, string(rec.Steps[0].Response.Body), att.Opens)
	// Output:
	// succeeded "invoice.pdf" 1
}
