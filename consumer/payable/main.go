// Command payable runs the payable example, with the invoice e-mail's
// attachments, against one receiver: payable RECEIVER_ADDR (host:port,
// plain HTTP). Every host the workflow names is sent there.
package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout)) }

func run(ctx context.Context, args []string, out io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(out, "usage: payable RECEIVER_ADDR")
		return 2
	}
	// The example's notification goes to a webhook URL held in a secret.
	doc := strings.ReplaceAll(examples.Payable, "https://", "http://")
	plan, diags := compile.Compile([]byte(doc), compile.Options{SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}})
	if diags.HasErrors() {
		fmt.Fprintln(out, diags.Err())
		return 1
	}
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	ex := executor.New(executor.Options{Guard: g, Network: guard.Network{Dial: g.DialTo(args[0])}})
	rec := ex.Run(ctx, plan, executor.Env{
		Secrets: resolve.SecretMap{"FINANCE_TOKEN": "tok-1", "SLACK_WEBHOOK_URL": "http://hooks.example.com/T1/B2"},
		Facts:   resolve.FactMap{"email_id": "em_42", "env": "sandbox"},
		Attachments: func() (resolve.Attachments, error) {
			return eml.New(strings.NewReader(examples.InvoiceEmail), int64(len(examples.InvoiceEmail)))
		},
	})
	for _, s := range rec.Steps {
		fmt.Fprintf(out, "step %d %s %s\n", s.Index, s.State, s.Error)
	}
	fmt.Fprintln(out, rec.Status)
	if rec.Status != "succeeded" {
		return 1
	}
	return 0
}
