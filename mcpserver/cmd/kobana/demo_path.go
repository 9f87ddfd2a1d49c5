package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/demo/inboxdemo"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/internal/txtdns"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// The demo's mail: the sample e-mail's sender, and the inbox it is sent to.
const (
	demoSender     = "faturamento@acme.example.com.br"
	demoSenderHost = "acme.example.com.br"
	demoAddress    = "financeiro@finance.in.kobana.email"
)

// runDemo runs the demo's whole path, printing to w: a kobana serve on
// loopback (SMTP, MCP over HTTP, the pipeline) on a fresh store; the sample
// e-mail sent to the demo inbox over SMTP; the agent's model (cfg, or the
// stand-in when cfg has no endpoint) answering it; the workflow running
// against the receiver; the runs read back through the MCP server. It
// reports whether the run succeeded and the uploaded file matched the
// e-mail's attachment.
func runDemo(ctx context.Context, w io.Writer, cfg agent.Config, keep bool) (ok bool, err error) {
	fmt.Fprintln(w, "kobana demo: the complete example, run end to end on this machine")
	fmt.Fprintln(w)
	standIn := !cfg.Configured()
	if standIn {
		var stop func()
		var err error
		if cfg, stop, err = startDemoModel(); err != nil {
			return false, err
		}
		defer stop()
	}
	msg, err := eml.New(strings.NewReader(examples.InvoiceEmail), int64(len(examples.InvoiceEmail)))
	if err != nil {
		return false, fmt.Errorf("the embedded sample e-mail: %w", err)
	}
	wantHash, err := attachmentSHA256(msg, 0)
	if err != nil {
		return false, fmt.Errorf("the embedded sample e-mail: %w", err)
	}
	rv, err := startDemoReceiver()
	if err != nil {
		return false, err
	}
	defer rv.close()
	dnsAddr, stopDNS, err := startDemoDNS()
	if err != nil {
		return false, err
	}
	defer stopDNS()
	dir, err := os.MkdirTemp("", "kobana-demo-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "kobana.db")
	token, hookSecret, err := seedDemoStore(ctx, db)
	if err != nil {
		return false, err
	}
	rv.hookSecret = hookSecret

	srv, err := startDemoServer(ctx, db, dnsAddr, rv, &agent.Runner{Config: cfg})
	if err != nil {
		return false, err
	}
	defer srv.stop()
	if keep {
		defer func() {
			if err == nil {
				err = keepServing(ctx, w, db, srv.http)
			}
		}()
	}

	fmt.Fprintln(w, "A kobana serve runs on this machine, on a fresh store with the demo organization:")
	for _, l := range strings.Split(strings.TrimSpace(srv.output.String()), "\n") {
		fmt.Fprintf(w, "  │ %s\n", l)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  inbox     %s (workspace Finance), accepting mail from @%s, read by the agent %q\n", demoAddress, demoSenderHost, demoAgent.Name)
	if standIn {
		fmt.Fprintln(w, "  model     the demo's model stand-in: a local OpenAI-compatible server that answers the sample e-mail with the complete")
		fmt.Fprintln(w, "            example (pass -model-base-url to ask a real model), asked through the real client, prompt and linter")
	} else {
		for _, l := range cfg.Describe() {
			fmt.Fprintf(w, "  model     %s\n", l)
		}
	}
	fmt.Fprintln(w, "  secrets   FINANCE_TOKEN, SLACK_WEBHOOK_URL in the workspace (demo values; every record must show them redacted)")
	fmt.Fprintf(w, "  DNS       %s publishes SPF (v=spf1 ip4:127.0.0.1 -all) and DMARC for %s, so the sender authenticates\n", dnsAddr, demoSenderHost)
	fmt.Fprintf(w, "  receiver  https://%s playing %s (the ERP) and %s (the chat webhook);\n", rv.addr, demoHosts[0], demoHosts[1])
	fmt.Fprintln(w, "            the SSRF guard denies loopback, so 127.0.0.1/32 is allowed explicitly (-allow), the only exception")

	// 1. The sample e-mail arrives over SMTP.
	fmt.Fprintf(w, "\n1. examples/emails/%s is sent over SMTP to %s:\n", examples.InvoiceEmailName, srv.smtp)
	emailID, reply, err := sendDemoMail(srv.smtp)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "   MAIL FROM:<%s> RCPT TO:<%s> DATA … %s\n", demoSender, demoAddress, reply)

	// 2. The records, read back through the MCP server as a client would.
	cs, err := connectDemoClient(ctx, srv.http, token)
	if err != nil {
		return false, err
	}
	defer cs.Close()
	e, err := waitProcessed(ctx, cs, emailID)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "\n2. The e-mail, read back through the MCP server (emails_get %s):\n", e.ID)
	fmt.Fprintf(w, "   status %s", e.Status)
	if e.StatusDetail != "" {
		fmt.Fprintf(w, " (%s)", e.StatusDetail)
	}
	fmt.Fprintf(w, "; subject %q; %d attachments\n", e.Subject, len(e.Attachments))
	if a := e.Auth; a != nil {
		fmt.Fprintf(w, "   sender %s: SPF %s, DMARC %s; authenticated as %q\n", e.From, a.SPF.Result, a.DMARC.Result, a.AuthenticatedFrom)
	}

	var run inbox.AgentRun
	if err := readDemoResource(ctx, cs, "kobana://inbox/agent-runs/"+e.AgentRunID, &run); err != nil {
		return false, err
	}
	fmt.Fprintf(w, "\n3. The agent run, read back through the MCP server (kobana://inbox/agent-runs/%s):\n", run.ID)
	fmt.Fprintf(w, "agent run: %s after %d request%s, %d repair round%s, %d input and %d output tokens, %.6f USD (prompt %s)\n",
		run.Status, len(run.Calls), plural(len(run.Calls)), len(run.Repairs), plural(len(run.Repairs)), run.Tokens.Input, run.Tokens.Output,
		run.CostUSD, run.PromptVersion)
	if run.Status != inbox.RunSucceeded && run.Cause != inbox.CauseWorkflowFailed {
		fmt.Fprintf(w, "\ndemo failed: the agent run failed (%s): %s\n", run.Cause, run.Error)
		if run.Answer != "" {
			fmt.Fprintf(w, "the model answered:\n%s\n", indent(run.Answer))
		}
		return false, nil
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, run.Output, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(run.Output)
	}
	fmt.Fprintf(w, "The model answered (validated by the platform's linter before anything runs):\n%s\n", indent(pretty.String()))
	if e.WorkflowRunID == "" {
		fmt.Fprintln(w, "\nThe agent asked for no action: there is no workflow to run.")
		return false, nil
	}

	var wr inbox.WorkflowRun
	if err := readDemoResource(ctx, cs, "kobana://inbox/workflow-runs/"+e.WorkflowRunID, &wr); err != nil {
		return false, err
	}
	steps := wr.Steps
	fmt.Fprintf(w, "\n4. The workflow ran in the server's pipeline; each step, and what the receiver got:\n")
	requests := rv.workflowRequests()
	for i, s := range steps {
		fmt.Fprintf(w, "\n%s\n", progressLine(s))
		if s.Request != nil && i < len(requests) {
			requests[i].print(w, wantHash)
		}
	}
	if d, ok := waitDelivery(ctx, cs); ok {
		fmt.Fprintf(w, "\nThe workspace's webhook %s got %s (delivery %s, attempt %d): %s, HTTP %d; the signature verified at the receiver: %v\n",
			d.WebhookID, d.Event, d.ID, len(d.Attempts), d.Status, d.HTTPStatus, rv.hookVerified())
	}
	fmt.Fprintf(w, "\n5. The workflow run, read back through the MCP server (kobana://inbox/workflow-runs/%s), as Kobana keeps it\n", wr.ID)
	fmt.Fprintln(w, "(secrets redacted, the attachment described, never its bytes):")
	if err := writeRecord(w, wr); err != nil {
		return false, err
	}
	switch uploaded := rv.uploadedHash(); {
	case wr.Status != runrecord.RunSucceeded:
		fmt.Fprintf(w, "\ndemo failed: the workflow run %s: %s\n", wr.Status, wr.Error)
		return false, nil
	case uploaded != wantHash:
		fmt.Fprintf(w, "\ndemo failed: the receiver got a file whose sha256 is %q, not the attachment's %s\n", uploaded, wantHash)
		return false, nil
	}
	fmt.Fprintf(w, "\ndemo succeeded: %d steps succeeded; the ERP received attachment 0 of the e-mail byte for byte (sha256 %s…).\n", len(steps), wantHash[:16])
	fmt.Fprintln(w, "Next: `kobana serve -demo -http 127.0.0.1:8080 -smtp 127.0.0.1:2525` runs the same server for you to explore;")
	if !keep {
		fmt.Fprintln(w, "`kobana demo -serve` keeps this one serving and prints its console's address, where this run is the first thing you see;")
	}
	fmt.Fprintln(w, "run your own workflow with `kobana run -h`, or check one with `kobana validate FILE`.")
	return true, nil
}

// keepServing tells where the demo server's console is, with a one-time
// sign-in code for the demo's owner, and waits until ctx ends (Ctrl-C).
func keepServing(ctx context.Context, w io.Writer, db, httpAddr string) error {
	st, err := sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		return err
	}
	code := store.NewSignInCode()
	exp := time.Now().Add(15 * time.Minute)
	err = st.CreateSignInCode(ctx, store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: exp})
	st.Close()
	if err != nil {
		return fmt.Errorf("a sign-in code for the console: %w", err)
	}
	fmt.Fprintf(w, "\nThe server keeps serving (-serve). Its console: http://%s/console/\n", httpAddr)
	fmt.Fprintf(w, "sign in with the one-time code %s (once, until %s; `kobana token signin -db %s -person %s -workspace %s` prints another)\n",
		code, exp.Format(time.Kitchen), db, demo.Owner, demo.Workspace)
	fmt.Fprintln(w, "Press Ctrl-C to stop; the demo's store is removed then.")
	<-ctx.Done()
	return nil
}

// seedDemoStore creates the store the demo's server runs on: the demo
// organization, and in its Finance workspace the demo's agent, its inbox
// (accepting mail from the sample's sender domain) and the secrets the
// complete example uses. It returns the owner's token and the signing secret
// of the workspace's ERP webhook.
func seedDemoStore(ctx context.Context, db string) (token, hookSecret string, err error) {
	st, err := sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		return "", "", err
	}
	defer st.Close()
	now := time.Now().UTC()
	tokens, err := inboxdemo.Load(ctx, st, now)
	if err != nil {
		return "", "", err
	}
	for _, t := range tokens {
		if t.Person == demo.Owner && t.Workspace == demo.Workspace {
			token = t.Token
		}
	}
	if token == "" {
		return "", "", errors.New("the demo organization has no owner token")
	}
	repo := inbox.NewRepo(st)
	ag := demoAgent
	ag.CreatedAt, ag.UpdatedAt = now, now
	ib := demoInbox
	ib.Address, ib.Recipients, ib.CreatedAt, ib.UpdatedAt = demoAddress, []string{"@" + demoSenderHost}, now, now
	if err := repo.Agents.Put(ctx, demo.Workspace, ag); err != nil {
		return "", "", err
	}
	if err := repo.Inboxes.Put(ctx, demo.Workspace, ib); err != nil {
		return "", "", err
	}
	for name, value := range map[string]string{"FINANCE_TOKEN": demoFinanceToken, "SLACK_WEBHOOK_URL": demoWebhookURL} {
		if err := st.SetSecret(ctx, demo.Workspace, name, value); err != nil {
			return "", "", err
		}
	}
	secrets, err := st.RevealSecrets(ctx, demo.Workspace)
	if err != nil {
		return "", "", err
	}
	return token, secrets[inbox.WebhookSecretName(demoERPWebhook)], nil
}

// demoERPWebhook is the demo workspace's webhook to the ERP (email.processed).
const demoERPWebhook = "whk_erp"

// demoServer is the demo's kobana serve, running in this process.
type demoServer struct {
	http, smtp string
	output     *syncbuf.Buffer
	cancel     context.CancelFunc
	done       chan int
}

// startDemoServer runs kobana serve on db (MCP over HTTP and SMTP on
// loopback, the pipeline working the queue), its agents answered by agents
// and its outgoing requests sent to the receiver, and returns once it
// serves.
func startDemoServer(ctx context.Context, db, dnsAddr string, rv *demoReceiver, agents inbox.AgentRunner) (*demoServer, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &demoServer{output: &syncbuf.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	ready := make(chan map[string]net.Addr, 1)
	c := &Command{Stdout: s.output, Stderr: s.output, Context: ctx, Getenv: func(string) string { return "" },
		Ready: func(addrs map[string]net.Addr) { ready <- addrs }}
	args := []string{"-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", dnsAddr, "-allow", "127.0.0.1/32", "-products", "inbox", "-log-level", "error"}
	go func() {
		s.done <- serveWith(c, args, func(cfg *server.Config) {
			cfg.AgentRunner = agents
			cfg.Outbound = rv.network(cfg.Guard)
		})
	}()
	select {
	case addrs := <-ready:
		s.http, s.smtp = addrs["http"].String(), addrs["smtp"].String()
		return s, nil
	case code := <-s.done:
		cancel()
		return nil, fmt.Errorf("the server stopped (exit %d): %s", code, strings.TrimSpace(s.output.String()))
	case <-ctx.Done():
		cancel()
		<-s.done
		return nil, ctx.Err()
	}
}

// stop stops the server and waits for it.
func (s *demoServer) stop() {
	s.cancel()
	<-s.done
}

// sendDemoMail sends the sample e-mail to the demo inbox over SMTP, and
// returns the id the server stored it as and its reply.
func sendDemoMail(addr string) (id, reply string, err error) {
	c, err := smtp.Dial(addr)
	if err != nil {
		return "", "", fmt.Errorf("connecting to the SMTP server: %w", err)
	}
	defer c.Close()
	if err := c.Hello("mail." + demoSenderHost); err != nil {
		return "", "", err
	}
	if err := c.Mail(demoSender, nil); err != nil {
		return "", "", fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(demoAddress, nil); err != nil {
		return "", "", fmt.Errorf("RCPT TO: %w", err)
	}
	wc, err := c.Data()
	if err != nil {
		return "", "", fmt.Errorf("DATA: %w", err)
	}
	if _, err := io.WriteString(wc, examples.InvoiceEmail); err != nil {
		return "", "", fmt.Errorf("DATA: %w", err)
	}
	resp, err := wc.CloseWithResponse()
	if err != nil {
		return "", "", fmt.Errorf("DATA: %w", err)
	}
	c.Quit()
	reply = "250 " + resp.StatusText
	_, id, ok := strings.Cut(resp.StatusText, "stored as ")
	if !ok || id == "" {
		return "", reply, fmt.Errorf("the SMTP server answered %q, which names no stored e-mail", reply)
	}
	return strings.Fields(id)[0], reply, nil
}

// connectDemoClient connects an MCP client (the official Go SDK) to the
// server's Streamable HTTP endpoint with token.
func connectDemoClient(ctx context.Context, addr, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "kobana-demo", Version: "1"}, nil)
	httpClient := &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: httpClient}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting an MCP client: %w", err)
	}
	return cs, nil
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// callDemoTool calls a tool and decodes its structured result into out.
func callDemoTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return err
	}
	if r.IsError {
		return fmt.Errorf("%s: %s", name, b)
	}
	return json.Unmarshal(b, out)
}

// waitProcessed polls emails_get until the e-mail has left pending.
func waitProcessed(ctx context.Context, cs *mcp.ClientSession, id string) (inbox.Email, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		var e inbox.Email
		if err := callDemoTool(ctx, cs, "emails_get", map[string]any{"id": id}, &e); err != nil {
			return e, err
		}
		if e.Status != inbox.EmailPending {
			return e, nil
		}
		select {
		case <-ctx.Done():
			return e, fmt.Errorf("e-mail %s was not processed within a minute", id)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitDelivery waits (a few seconds at most) for the ERP webhook's
// delivery of email.processed to be attempted, and returns it.
func waitDelivery(ctx context.Context, cs *mcp.ClientSession) (inbox.Delivery, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var list struct {
			Deliveries []inbox.Delivery `json:"deliveries"`
		}
		if err := callDemoTool(ctx, cs, "webhooks_deliveries_list", map[string]any{"webhook_id": demoERPWebhook, "limit": 1}, &list); err != nil {
			return inbox.Delivery{}, false
		}
		if len(list.Deliveries) > 0 && list.Deliveries[0].Status != inbox.DeliveryPending {
			return list.Deliveries[0], true
		}
		select {
		case <-ctx.Done():
			return inbox.Delivery{}, false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readDemoResource reads a resource and decodes its JSON into out.
func readDemoResource(ctx context.Context, cs *mcp.ClientSession, uri string, out any) error {
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return fmt.Errorf("reading %s: %w", uri, err)
	}
	if len(r.Contents) == 0 {
		return fmt.Errorf("reading %s: no contents", uri)
	}
	if err := json.Unmarshal([]byte(r.Contents[0].Text), out); err != nil {
		return fmt.Errorf("reading %s: %w", uri, err)
	}
	return nil
}

// startDemoDNS serves, on loopback, the DNS records of the sample's sender
// domain: SPF allowing 127.0.0.1 and a DMARC policy, so the intake
// authenticates the sender as it would a real one. Other names do not
// exist.
func startDemoDNS() (string, func(), error) {
	addr, stop, err := txtdns.Start(map[string]string{
		demoSenderHost:             "v=spf1 ip4:127.0.0.1 -all",
		"_dmarc." + demoSenderHost: "v=DMARC1; p=reject",
	})
	if err != nil {
		return "", nil, fmt.Errorf("starting the demo's DNS server: %w", err)
	}
	return addr, stop, nil
}
