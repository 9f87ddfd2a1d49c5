package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/mcpserver/store"
)

// EventConsoleAction is the system event the console records for each
// destructive action a person confirmed in it: the actor is the person,
// the payload names the console, the tool and its arguments.
const EventConsoleAction = "console.action"

// ConfirmationLifetime is how long a confirmation page's answer is taken.
const ConfirmationLifetime = 10 * time.Minute

// action is a destructive tool the console offers, with what its
// confirmation page says it does.
type action struct {
	Tool, What string
	// each, for a bulk action, splits its arguments into the arguments of
	// each call of the tool; nil for one call.
	each func(json.RawMessage) ([]json.RawMessage, error)
}

// actions are the destructive tools the console runs, by form name.
var actions = map[string]action{
	"reprocess-restart": {Tool: inboxmcp.ToolEmailsReprocess, What: "Runs the inbox's agent on the e-mail again and the workflow it answers with: every step's request is sent again, with new step identities."},
	"replay":            {Tool: inboxmcp.ToolWebhooksDeliveriesReplay, What: "Sends the delivery's event to its webhook again now, as one more attempt of the same delivery (same id, so the receiver can deduplicate), signed with the current secret. This calls a system outside Kobana."},
	"webhook-test":      {Tool: inboxmcp.ToolWebhooksTest, What: "Sends a signed webhook.test event to the endpoint's URL now and records the delivery. This calls a system outside Kobana."},
	"recover":           {Tool: inboxmcp.ToolWebhooksDeliveriesRecover, What: "Sends again, oldest first, every failed delivery of the endpoint whose event was recorded since the time given (at most 100 in one go; run it again for the rest), each as one more attempt of the same delivery. This calls a system outside Kobana."},
	"bulk-reprocess":    {Tool: inboxmcp.ToolEmailsReprocess, What: "Runs each e-mail's inbox agent again and the workflow it answers with: every step's request is sent again, with new step identities. Each e-mail is one emails_reprocess call.", each: eachReprocess},
	"bulk-replay":       {Tool: inboxmcp.ToolWebhooksDeliveriesReplay, What: "Sends each delivery's event to its webhook again now, as one more attempt of the same delivery (same id, so the receiver can deduplicate). This calls systems outside Kobana. Each delivery is one webhooks_deliveries_replay call.", each: eachReplay},
	"reprocess-resume":  {Tool: inboxmcp.ToolEmailsReprocess, What: "Takes up the e-mail's interrupted workflow run: the steps it ended are not sent again; the step whose outcome is unknown is sent again with the same X-Kobana-Step-Id and Idempotency-Key, and the steps after it follow."},
}

type confirmData struct {
	Name, Tool, What, Arguments, Back string
	Count                             int
	Nonce, Expires, Signature         string
}

// reprocess asks the person to confirm reprocessing an e-mail (restart or
// resume), once the tool's own check says the call can run.
func (c *Console) reprocess(w http.ResponseWriter, r *http.Request, s *session) {
	mode := r.PostFormValue("mode")
	name := "reprocess-" + mode
	if _, ok := actions[name]; !ok {
		c.message(w, r, s, http.StatusBadRequest, "Unknown way to reprocess an e-mail.")
		return
	}
	args, _ := jsonArgs(inboxmcp.ReprocessArg{ID: r.PathValue("id"), Mode: mode})
	c.ask(w, r, s, name, args, Prefix+"emails/"+r.PathValue("id"), 1)
}

// ask renders the confirmation page of an action: what it does, its
// arguments, how many records (count) — after the tool's check. Its form
// carries a signed, expiring, single-use answer bound to this session.
func (c *Console) ask(w http.ResponseWriter, r *http.Request, s *session, name string, args json.RawMessage, back string, count int) {
	a := actions[name]
	if !c.tools.May(s.principal, a.Tool) {
		c.message(w, r, s, http.StatusForbidden, "Your role does not allow this.")
		return
	}
	calls, err := a.calls(args)
	if err != nil {
		c.message(w, r, s, http.StatusBadRequest, "Nothing was asked: "+err.Error())
		return
	}
	for _, call := range calls {
		if err := c.tools.Check(r.Context(), s.principal, a.Tool, call); err != nil {
			if len(calls) > 1 {
				err = aboutCall(err, call)
			}
			c.fail(w, r, s, err)
			return
		}
	}
	var pretty map[string]any
	json.Unmarshal(args, &pretty)
	shown, _ := json.MarshalIndent(pretty, "", "  ")
	d := confirmData{Name: name, Tool: a.Tool, What: a.What, Arguments: string(shown), Back: back, Count: count,
		Nonce: store.RandomHex(16), Expires: strconv.FormatInt(c.now().Add(ConfirmationLifetime).Unix(), 10)}
	d.Signature = c.mac("confirm", s.grant, name, string(args), back, d.Nonce, d.Expires)
	c.render(w, r, s, http.StatusOK, "confirm", struct {
		confirmData
		Raw string
	}{d, string(args)})
}

// confirm runs an action the person confirmed: the answer must be this
// session's, unexpired and unused (the store's ledger spends it), and the
// tool runs through the same handler as over MCP. The console records a
// system event naming the person and itself.
func (c *Console) confirm(w http.ResponseWriter, r *http.Request, s *session) {
	name, args, back := r.PostFormValue("action"), r.PostFormValue("arguments"), r.PostFormValue("back")
	nonce, expires := r.PostFormValue("nonce"), r.PostFormValue("expires")
	a, ok := actions[name]
	exp, err := strconv.ParseInt(expires, 10, 64)
	if !ok || err != nil || localNext(back) != back || r.PostFormValue("signature") != c.mac("confirm", s.grant, name, args, back, nonce, expires) {
		c.message(w, r, s, http.StatusForbidden, "This confirmation is not valid; nothing was run. Start again from the page you came from.")
		return
	}
	until := time.Unix(exp, 0)
	if !c.now().Before(until) {
		c.message(w, r, s, http.StatusForbidden, "This confirmation expired; nothing was run. Start again from the page you came from.")
		return
	}
	if err := c.store.Consume(r.Context(), "console-confirm:"+nonce, until); err != nil {
		if errors.Is(err, store.ErrReplayed) {
			c.message(w, r, s, http.StatusConflict, "This confirmation was already used; nothing was run again.")
			return
		}
		c.log.ErrorContext(r.Context(), "console: confirmation ledger", "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The confirmation cannot be recorded right now; nothing was run.")
		return
	}
	calls, err := a.calls(json.RawMessage(args))
	if err != nil {
		c.message(w, r, s, http.StatusBadRequest, "Nothing was run: "+err.Error())
		return
	}
	var out json.RawMessage
	if a.each == nil {
		if out, err = c.tools.CallConfirmed(r.Context(), s.principal, a.Tool, calls[0]); err != nil {
			c.fail(w, r, s, err)
			return
		}
	} else {
		out = c.runEach(r, s, a.Tool, calls)
	}
	ev, err := inbox.NewEvent(EventConsoleAction, inbox.PersonActor(s.principal.Person), back, map[string]any{
		"client": ClientID, "session": s.grant, "tool": a.Tool, "arguments": json.RawMessage(args), "result": json.RawMessage(out)}, c.now())
	if err == nil {
		err = inbox.NewRepo(c.store).Events.Put(r.Context(), s.principal.Workspace, ev)
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: recording the action", "tool", a.Tool, "error", err)
	}
	c.log.InfoContext(r.Context(), "console: action", "person", s.principal.Person, "tool", a.Tool, "arguments", args)
	c.render(w, r, s, http.StatusOK, "done", doneData{Tool: a.Tool, Result: string(out), Back: back})
}

// jsonArgs encodes a tool's arguments.
func jsonArgs(v any) (json.RawMessage, error) { return json.Marshal(v) }

type doneData struct {
	Tool, Result, Back string
}

// calls are the arguments of each call of the action's tool.
func (a action) calls(args json.RawMessage) ([]json.RawMessage, error) {
	if a.each == nil {
		return []json.RawMessage{args}, nil
	}
	return a.each(args)
}

// MaxBulk is how many records one bulk action may take.
const MaxBulk = 200

// bulkArgs are a bulk action's arguments: the records, in order.
type bulkArgs struct {
	IDs []string `json:"ids"`
}

func (b bulkArgs) check() error {
	switch {
	case len(b.IDs) == 0:
		return errors.New("no record was chosen")
	case len(b.IDs) > MaxBulk:
		return fmt.Errorf("%d records were chosen; one action takes at most %d — narrow the filters", len(b.IDs), MaxBulk)
	}
	return nil
}

func splitBulk(args json.RawMessage, one func(id string) any) ([]json.RawMessage, error) {
	var b bulkArgs
	if err := json.Unmarshal(args, &b); err != nil {
		return nil, fmt.Errorf("the action's arguments: %w", err)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(b.IDs))
	for i, id := range b.IDs {
		out[i], _ = json.Marshal(one(id))
	}
	return out, nil
}

func eachReprocess(args json.RawMessage) ([]json.RawMessage, error) {
	return splitBulk(args, func(id string) any { return inboxmcp.ReprocessArg{ID: id, Mode: inbox.ReprocessRestart} })
}

func eachReplay(args json.RawMessage) ([]json.RawMessage, error) {
	return splitBulk(args, func(id string) any { return inboxmcp.ReplayArg{DeliveryID: id} })
}

// aboutCall names the call a bulk action's refusal is about.
func aboutCall(err error, call json.RawMessage) error {
	var te *mcpserver.ToolError
	if errors.As(err, &te) {
		return &mcpserver.ToolError{Code: te.Code, Message: string(call) + ": " + te.Message}
	}
	return err
}

// bulkOutcome is one call's outcome in a bulk action's result.
type bulkOutcome struct {
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// runEach runs each call of a confirmed bulk action, one after the other;
// a call that fails does not stop the others. The result says each
// outcome.
func (c *Console) runEach(r *http.Request, s *session, tool string, calls []json.RawMessage) json.RawMessage {
	res := struct {
		Done     int           `json:"done"`
		Failed   int           `json:"failed"`
		Outcomes []bulkOutcome `json:"outcomes"`
	}{Outcomes: make([]bulkOutcome, 0, len(calls))}
	for _, call := range calls {
		out, err := c.tools.CallConfirmed(r.Context(), s.principal, tool, call)
		o := bulkOutcome{Arguments: call, Result: out}
		if err != nil {
			var te *mcpserver.ToolError
			if !errors.As(err, &te) {
				c.log.ErrorContext(r.Context(), "console: bulk action", "tool", tool, "arguments", string(call), "error", err)
				te = &mcpserver.ToolError{Code: "internal_error", Message: "the call could not run"}
			}
			o.Result, o.Error = nil, te.Code+": "+te.Message
			res.Failed++
		} else {
			res.Done++
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	b, _ := json.Marshal(res)
	return b
}
