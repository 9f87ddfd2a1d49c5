package console

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// moment is one entry of an e-mail's timeline.
type moment struct {
	At time.Time
	// What the moment is ("Received", "Agent run", …); Link and LinkText
	// the record it names, when there is one.
	What, Link, LinkText string
	Status               string
	// Detail says more: a cause, a model, steps, attempts.
	Detail string
	// Until is when it ended, for a run.
	Until time.Time
	// Attempts are a webhook delivery's attempts.
	Attempts []inbox.DeliveryAttempt
	// Next is when a delivery or the agent tries again.
	Next time.Time
}

// timelineLimit caps the workflow runs and deliveries an e-mail's
// timeline lists.
const timelineLimit = 50

// timeline is what happened to an e-mail, in time order: received, its
// agent run, its workflow runs, each webhook delivery about it, and the
// agent's next attempt — each read through the tools, as an MCP client
// would.
func (c *Console) timeline(r *http.Request, s *session, e inbox.Email) ([]moment, error) {
	out := []moment{{At: e.ReceivedAt, What: "Received", Detail: e.From}}
	if e.AgentRunID != "" {
		var run inbox.AgentRun
		err := c.call(r, s, inboxmcp.ToolAgentRunsGet, inboxmcp.AgentRunIDArg{ID: e.AgentRunID}, &run)
		switch {
		case isNotFound(err):
			out = append(out, moment{At: e.ReceivedAt, What: "Agent run", LinkText: e.AgentRunID, Detail: "no longer kept"})
		case err != nil:
			return nil, err
		default:
			detail := run.Model
			if run.Cause != "" {
				detail += " · " + string(run.Cause)
			}
			out = append(out, moment{At: run.StartedAt, Until: run.FinishedAt, What: "Agent run", Link: Prefix + "agent-runs/" + run.ID, LinkText: run.ID, Status: run.Status, Detail: detail})
			var runs inboxmcp.WorkflowRunList
			if err := c.call(r, s, inboxmcp.ToolWorkflowRunsList, inboxmcp.WorkflowRunListArg{Page: mcpserver.Page{Limit: timelineLimit}, AgentRunID: run.ID}, &runs); err != nil {
				return nil, err
			}
			for _, w := range runs.Runs {
				out = append(out, moment{At: w.StartedAt, Until: w.FinishedAt, What: "Workflow run", Link: Prefix + "workflow-runs/" + w.ID, LinkText: w.ID,
					Status: string(w.Status), Detail: strconv.Itoa(w.Steps) + " steps"})
			}
		}
	}
	var ds inboxmcp.DeliveryList
	if err := c.call(r, s, inboxmcp.ToolWebhooksDeliveriesList, inboxmcp.DeliveryListArg{Page: mcpserver.Page{Limit: timelineLimit}, EmailID: e.ID}, &ds); err != nil {
		return nil, err
	}
	for _, d := range ds.Deliveries {
		at := d.CreatedAt
		if at.IsZero() {
			at = d.AttemptedAt
		}
		out = append(out, moment{At: at, What: "Webhook delivery", Link: Prefix + "webhooks/" + d.WebhookID + "#" + d.ID, LinkText: d.ID,
			Status: d.Status, Detail: d.Event + " to " + d.WebhookID, Attempts: d.Attempts, Next: d.NextAttemptAt})
	}
	if !e.NextAttemptAt.IsZero() {
		out = append(out, moment{At: e.NextAttemptAt, What: "The agent tries again", Detail: e.StatusDetail})
	}
	slices.SortStableFunc(out, func(a, b moment) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
	return out, nil
}

// isNotFound says whether a tool answered not_found.
func isNotFound(err error) bool {
	var te *mcpserver.ToolError
	return errors.As(err, &te) && te.Code == "not_found"
}
