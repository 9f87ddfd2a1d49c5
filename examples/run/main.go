// Command run shows how a Go service runs an agent's workflow with the
// library: compile the document, resolve secrets from its own secret store
// (here: environment variables with a prefix), read attachments from the
// original .eml, and execute behind the SSRF guard.
//
// It starts its own receiver on 127.0.0.1 to play the ERP and the chat
// webhook, points the complete example at it, and prints the redacted record.
//
//	go run ./examples/run
//	go run ./examples/run -workflow my-workflow.json -eml my-email.eml
//
// The secrets are read from KOBANA_SECRET_FINANCE_TOKEN and
// KOBANA_SECRET_SLACK_WEBHOOK_URL; when unset, the example uses demo values.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// envSecrets is a resolve.Secrets over environment variables: the secret
// KEY is the variable Prefix+KEY. Any store works the same way: a vault,
// a database table, a cloud secret manager.
type envSecrets struct {
	Prefix string
	Lookup func(string) (string, bool) // os.LookupEnv in production
}

// Secret implements resolve.Secrets. A missing variable is a missing
// secret: the step that needs it fails before anything is sent.
func (s envSecrets) Secret(key string) (string, bool, error) {
	v, ok := s.Lookup(s.Prefix + key)
	return v, ok, nil
}

func main() {
	os.Exit(run(os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

func run(args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workflowPath := fs.String("workflow", "examples/workflows/payable.json", "the workflow document")
	emlPath := fs.String("eml", "examples/emails/acme-invoice.eml", "the triggering e-mail")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	// The local receiver: the ERP answers the creation with an id, every
	// other request with 200.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/payables" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_1001"}}`)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	// 1. Compile: the document is validated once; a nil Plan means errors
	// (or no workflow at all).
	doc, err := os.ReadFile(*workflowPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	doc = []byte(strings.ReplaceAll(string(doc), "https://erp.example.com", srv.URL)) // aim the example at the receiver
	plan, diags := compile.Compile(doc, compile.Options{})
	if diags.HasErrors() {
		for _, d := range diags.Errors() {
			fmt.Fprintln(stderr, d)
		}
		return 2
	}
	if plan == nil {
		fmt.Fprintln(stdout, "no workflow: nothing to do")
		return 0
	}

	// 2. The run's sources: our own secret store, the run facts, the .eml.
	secrets := envSecrets{Prefix: "KOBANA_SECRET_", Lookup: func(name string) (string, bool) {
		if v, ok := lookupEnv(name); ok {
			return v, true
		}
		demo := map[string]string{
			"KOBANA_SECRET_FINANCE_TOKEN":     "tok-example-5150",
			"KOBANA_SECRET_SLACK_WEBHOOK_URL": srv.URL + "/hooks/T01/B02/example-key",
		}
		v, ok := demo[name]
		return v, ok
	}}
	env := executor.Env{
		Secrets:     secrets,
		Facts:       resolve.FactMap{"email_id": "em_1001", "env": "sandbox"},
		Attachments: resolve.EMLFile(*emlPath),
		// The journal hears of every step; this one prints each as it ends.
		Journal: runrecord.DoneFunc(func(s runrecord.Step) {
			fmt.Fprintf(stderr, "step %d %q: %s\n", s.Index, s.Label, s.State)
			if s.Error != "" {
				fmt.Fprintf(stderr, "  %s\n", s.Error) // already redacted
			}
		}),
	}

	// 3. Execute behind the SSRF guard. Loopback is denied by default; the
	// receiver is reachable only because its address is allowed explicitly.
	ex := executor.New(executor.Options{
		Guard:       &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		StepTimeout: 10 * time.Second,
	})
	rec := ex.Run(context.Background(), plan, env)

	// 4. The record is safe to store and show: secrets are redacted and
	// attachments described, never their bytes.
	out, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, string(out))
	if rec.Status != runrecord.RunSucceeded {
		return 1
	}
	return 0
}
