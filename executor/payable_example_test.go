package executor_test

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

// Run the payable example as written — its URLs name erp.example.com and a
// chat webhook held in a secret — against one local HTTPS receiver: the
// Network sends every connection to it, with its certificate authority, and
// the guard allows its loopback address (and still checks it). The invoice
// e-mail's first attachment, the PDF, is streamed from the .eml into the
// second step's form.
func ExampleExecutor_Run_payable() {
	erp := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/payables":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_1"}}`)
		case strings.HasSuffix(r.URL.Path, "/attachments"):
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			f, h, err := r.FormFile("file")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			n, _ := io.Copy(io.Discard, f)
			fmt.Fprintf(w, "%s %s %d bytes", mt, h.Filename, n)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer erp.Close()

	plan, diags := compile.Compile([]byte(examples.Payable), compile.Options{SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}})
	if diags.HasErrors() {
		fmt.Println(diags.Err())
		return
	}
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	ex := executor.New(executor.Options{Guard: g, Network: guard.Network{
		Dial: g.DialTo(erp.Listener.Addr().String()),
		TLS:  erp.Client().Transport.(*http.Transport).TLSClientConfig,
	}})
	rec := ex.Run(context.Background(), plan, executor.Env{
		Secrets: resolve.SecretMap{"FINANCE_TOKEN": "tok-1", "SLACK_WEBHOOK_URL": "https://hooks.example.com/T1/B2"},
		Facts:   resolve.FactMap{"email_id": "em_42", "env": "production"},
		Attachments: func() (resolve.Attachments, error) {
			return eml.New(strings.NewReader(examples.InvoiceEmail), int64(len(examples.InvoiceEmail)))
		},
	})
	fmt.Println(rec.Status)
	for _, s := range rec.Steps {
		fmt.Printf("%d %s %s %d %s\n", s.Index, s.State, s.Request.URL, s.Response.Status, s.Response.Body)
	}
	// Output:
	// succeeded
	// 0 succeeded https://erp.example.com/payables 201 {"data":{"id":"pay_1"}}
	// 1 succeeded https://erp.example.com/payables/pay_1/attachments 200 "multipart/form-data DANFE-4521.pdf 1168 bytes"
	// 2 succeeded [redacted secrets.SLACK_WEBHOOK_URL] 200 "ok"
}
