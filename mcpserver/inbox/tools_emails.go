package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
)

// EmailListArg filters emails_list.
type EmailListArg struct {
	Page
	InboxID string `json:"inbox_id,omitempty" jsonschema:"only e-mails received by this inbox"`
	Status  string `json:"status,omitempty" jsonschema:"only e-mails in this processing status: pending, processed, failed or rejected"`
}

// EmailSummary is an e-mail without its body, for listings.
type EmailSummary struct {
	ID          string    `json:"id"`
	InboxID     string    `json:"inbox_id"`
	From        string    `json:"from"`
	Subject     string    `json:"subject"`
	Attachments int       `json:"attachments"`
	Status      string    `json:"status"`
	AgentRunID  string    `json:"agent_run_id,omitempty"`
	ReceivedAt  time.Time `json:"received_at"`
}

// EmailList is a page of e-mails.
type EmailList struct {
	Emails     []EmailSummary `json:"emails"`
	NextBefore string         `json:"next_before,omitempty"`
}

// EMLLink is a short-lived download link to a raw .eml.
type EMLLink struct {
	EmailID   string    `json:"email_id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	SizeBytes int       `json:"size_bytes"`
}

// Reprocessed is the outcome of emails_reprocess.
type Reprocessed struct {
	EmailID     string       `json:"email_id"`
	Status      string       `json:"status"`
	AgentRun    AgentRun     `json:"agent_run"`
	WorkflowRun *WorkflowRun `json:"workflow_run,omitempty"`
}

func summarize(e Email) EmailSummary {
	return EmailSummary{ID: e.ID, InboxID: e.InboxID, From: e.From, Subject: e.Subject, Attachments: len(e.Attachments), Status: e.Status, AgentRunID: e.AgentRunID, ReceivedAt: e.ReceivedAt}
}

func (p *Product) emailTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_list", Title: "List e-mails",
			Description: "Lists received e-mails, most recent first, optionally of one inbox or in one status (pending, processed, failed, rejected). Each item has the sender, subject, number of attachments and the agent run that processed it. Use emails_get for the body.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in EmailListArg) (EmailList, error) {
				q, err := in.query()
				if err != nil {
					return EmailList{}, err
				}
				q.Parent, q.Status = in.InboxID, in.Status
				items, next, err := list[Email](ctx, p.repo, c.Workspace, KindEmail, q)
				out := EmailList{Emails: make([]EmailSummary, 0, len(items))}
				for _, e := range items {
					out.Emails = append(out.Emails, summarize(e))
				}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_get", Title: "Get e-mail",
			Description: "Returns one received e-mail: headers, text body, attachments (index, filename, type, size — the N of ${{email.attachments.N}}) and processing status with its agent and workflow runs.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Email, error) {
				return p.getEmail(ctx, c.Workspace, in.ID)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_eml", Title: "Download raw e-mail",
			Description: "Returns a signed URL to download the raw .eml of an e-mail, valid for 5 minutes. Hand it to the user or fetch it; the URL is the credential, so do not post it anywhere public.",
			Access:      mcpserver.Read},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (EMLLink, error) {
				e, err := p.getEmail(ctx, c.Workspace, in.ID)
				if err != nil {
					return EMLLink{}, err
				}
				u, exp, err := p.signedEMLURL(ctx, c.Workspace, e.ID)
				return EMLLink{EmailID: e.ID, URL: u, ExpiresAt: exp, SizeBytes: e.SizeBytes}, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_delete", Title: "Delete e-mail",
			Description: "Deletes an e-mail and its raw .eml. Its agent and workflow runs are kept, but workflows can no longer read its attachments. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if _, err := p.getEmail(ctx, c.Workspace, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.repo.delete(ctx, c.Workspace, KindEmail, in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.opts.Store.DeleteBlob(ctx, c.Workspace, in.ID); err != nil && !errors.Is(err, mcpserver.ErrNotFound) && !isStoreNotFound(err) {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, "email.deleted", in.ID, map[string]string{"email_id": in.ID})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "emails_reprocess", Title: "Reprocess e-mail",
			Description: "Runs the inbox's agent on the e-mail again and executes the workflow it answers with: outgoing requests are really sent and the agent may reply or act. Records a new agent run and workflow run and returns them. The user is asked to confirm.",
			Access:      mcpserver.Write, Destructive: true, OpenWorld: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Reprocessed, error) {
				return p.reprocess(ctx, c, in.ID)
			}),
	}
}

func (p *Product) getEmail(ctx context.Context, ws, id string) (Email, error) {
	var e Email
	if err := required("id", id); err != nil {
		return e, err
	}
	err := p.repo.get(ctx, ws, KindEmail, id, &e)
	return e, err
}

func (p *Product) reprocess(ctx context.Context, c *mcpserver.Caller, id string) (Reprocessed, error) {
	e, err := p.getEmail(ctx, c.Workspace, id)
	if err != nil {
		return Reprocessed{}, err
	}
	ib, err := p.getInbox(ctx, c.Workspace, e.InboxID)
	if err != nil {
		return Reprocessed{}, mcpserver.Errorf("no_inbox", "the inbox of e-mail %s no longer exists", e.ID)
	}
	if ib.AgentID == "" {
		return Reprocessed{}, mcpserver.Errorf("no_agent", "inbox %s has no agent; attach one with inboxes_update", ib.ID)
	}
	var ag Agent
	if err := p.repo.get(ctx, c.Workspace, KindAgent, ib.AgentID, &ag); err != nil {
		return Reprocessed{}, mcpserver.Errorf("no_agent", "the agent %s of inbox %s no longer exists", ib.AgentID, ib.ID)
	}
	raw, err := p.opts.Store.GetBlob(ctx, c.Workspace, e.ID)
	if err != nil {
		if isStoreNotFound(err) {
			return Reprocessed{}, mcpserver.Errorf("eml_unavailable", "the raw .eml of %s is no longer stored (retention); it cannot be reprocessed", e.ID)
		}
		return Reprocessed{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return Reprocessed{}, err
	}
	prev, err := p.lastOutput(ctx, c.Workspace, e.AgentRunID, ag.ID)
	if err != nil {
		return Reprocessed{}, err
	}
	started := p.now().UTC()
	res, err := p.opts.AgentRunner.RunAgent(ctx, AgentInput{Workspace: w, Inbox: ib, Agent: ag, Email: e, EML: raw, Previous: prev})
	if err != nil {
		return Reprocessed{}, fmt.Errorf("running agent %s: %w", ag.ID, err)
	}
	run := AgentRun{ID: newID("arun"), AgentID: ag.ID, EmailID: e.ID, InboxID: ib.ID, Model: ag.Model,
		Status: res.Status, Cause: res.Cause, Error: res.Error, Output: res.Output, Tokens: res.Tokens,
		CostUSD: cost(ag.Model, res.Tokens), StartedAt: started}
	if prev != nil {
		run.ReprocessOf = prev.ID
	}
	if run.Status == "succeeded" && !isAgentDocument(run.Output) {
		run.Status, run.Cause, run.Error = "failed", "invalid_output", "the agent's answer is not a JSON object with a result"
	}
	var wrun *WorkflowRun
	if run.Status == "succeeded" && hasWorkflow(run.Output) {
		wr, err := p.runWorkflow(ctx, c, w, ib, e, ag, &run, raw)
		if err != nil {
			return Reprocessed{}, err
		}
		wrun = &wr
		run.WorkflowRunID = wr.ID
		if wr.Status != "succeeded" {
			run.Status, run.Cause, run.Error = "failed", "workflow_failed", "one or more workflow steps failed or were skipped"
		}
	}
	run.FinishedAt = p.now().UTC()
	// The runs happened: record them even if the caller has gone away.
	ctx = context.WithoutCancel(ctx)
	if err := p.repo.put(ctx, c.Workspace, KindAgentRun, run.ID, run.AgentID, run.Status, run.StartedAt, run); err != nil {
		return Reprocessed{}, err
	}
	e.AgentRunID, e.WorkflowRunID = run.ID, run.WorkflowRunID
	e.Status, e.StatusDetail = "processed", ""
	if run.Status != "succeeded" {
		e.Status, e.StatusDetail = "failed", run.Cause
	}
	if err := p.repo.put(ctx, c.Workspace, KindEmail, e.ID, e.InboxID, e.Status, e.ReceivedAt, e); err != nil {
		return Reprocessed{}, err
	}
	out := Reprocessed{EmailID: e.ID, Status: run.Status, AgentRun: run, WorkflowRun: wrun}
	return out, p.event(ctx, c, "email.reprocessed", e.ID, map[string]string{"email_id": e.ID, "agent_run_id": run.ID, "workflow_run_id": run.WorkflowRunID, "status": run.Status})
}

// lastOutput walks an e-mail's runs, newest first (each reprocess points at
// the run it replaced), to the latest run of the agent that recorded an
// output: what the replay runner answers with. nil when there is none.
func (p *Product) lastOutput(ctx context.Context, ws, runID, agentID string) (*AgentRun, error) {
	var newest *AgentRun
	for hops := 0; runID != "" && hops < 100; hops++ {
		var r AgentRun
		if err := p.repo.get(ctx, ws, KindAgentRun, runID, &r); err != nil {
			if errors.Is(err, mcpserver.ErrNotFound) {
				break
			}
			return nil, err
		}
		if r.AgentID == agentID {
			if newest == nil {
				n := r
				newest = &n
			}
			if len(r.Output) > 0 {
				// The newest run is the one replaced; the output replayed is
				// the latest one recorded.
				out := *newest
				out.Output, out.Tokens = r.Output, r.Tokens
				return &out, nil
			}
		}
		runID = r.ReprocessOf
	}
	return newest, nil
}

// isAgentDocument reports whether an agent's output is a JSON object with a
// result, the shape SPEC Part 1 requires.
func isAgentDocument(output json.RawMessage) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(output, &doc) != nil {
		return false
	}
	_, ok := doc["result"]
	return ok
}

func hasWorkflow(output json.RawMessage) bool {
	var doc struct {
		Workflow json.RawMessage `json:"workflow"`
	}
	if json.Unmarshal(output, &doc) != nil {
		return false
	}
	w := strings.TrimSpace(string(doc.Workflow))
	return w != "" && w != "null" && w != "[]"
}

func (p *Product) runWorkflow(ctx context.Context, c *mcpserver.Caller, w Workspace, ib Inbox, e Email, ag Agent, run *AgentRun, raw []byte) (WorkflowRun, error) {
	if p.opts.Runner == nil {
		return WorkflowRun{}, mcpserver.Errorf("workflow_runner_unavailable", "this server has no workflow executor configured; the agent answered with a workflow that cannot run here")
	}
	secrets, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return WorkflowRun{}, fmt.Errorf("reading secrets: %w", err)
	}
	for name := range secrets {
		if !userSecretName(name) {
			delete(secrets, name) // internal secrets (webhook signing) are not workflow secrets
		}
	}
	wr := WorkflowRun{ID: newID("wrun"), AgentRunID: run.ID, EmailID: e.ID, InboxID: ib.ID, StartedAt: p.now().UTC()}
	facts := map[string]string{
		"env": p.opts.Environment, "app_url": p.opts.PublicURL, "workspace_id": w.ID,
		"inbox_id": ib.ID, "inbox_email": ib.Address, "email_id": e.ID, "email_message_id": e.MessageID,
		"agent_id": ag.ID, "agent_run_id": run.ID, "workflow_run_id": wr.ID,
	}
	if w.Slug != "" {
		facts["workspace_slug"] = w.Slug
	}
	if w.ExternalID != "" {
		facts["workspace_external_id"] = w.ExternalID
	}
	record, err := p.opts.Runner.RunWorkflow(ctx, WorkflowInput{Document: run.Output, Secrets: secrets, EML: raw, Facts: facts})
	if err != nil {
		return WorkflowRun{}, fmt.Errorf("running workflow: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	var rec struct {
		Status string          `json:"status"`
		Steps  json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		return WorkflowRun{}, fmt.Errorf("workflow runner returned an invalid record: %w", err)
	}
	if rec.Status != "succeeded" && rec.Status != "failed" {
		return WorkflowRun{}, fmt.Errorf("workflow runner returned status %q", rec.Status)
	}
	if len(rec.Steps) == 0 {
		rec.Steps = json.RawMessage("[]")
	}
	wr.Status, wr.Steps, wr.FinishedAt = rec.Status, rec.Steps, p.now().UTC()
	if err := p.repo.put(ctx, c.Workspace, KindWorkflowRun, wr.ID, run.ID, wr.Status, wr.StartedAt, wr); err != nil {
		return WorkflowRun{}, err
	}
	return wr, nil
}
