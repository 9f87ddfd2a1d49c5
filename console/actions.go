package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/store"
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
}

// actions are the destructive tools the console runs, by form name.
var actions = map[string]action{
	"reprocess-restart": {inboxmcp.ToolEmailsReprocess, "Runs the inbox's agent on the e-mail again and the workflow it answers with: every step's request is sent again, with new step identities."},
	"replay":            {inboxmcp.ToolWebhooksDeliveriesReplay, "Sends the delivery's event to its webhook again now, as one more attempt of the same delivery (same id, so the receiver can deduplicate), signed with the current secret. This calls a system outside Kobana."},
	"webhook-test":      {inboxmcp.ToolWebhooksTest, "Sends a signed webhook.test event to the endpoint's URL now and records the delivery. This calls a system outside Kobana."},
	"recover":           {inboxmcp.ToolWebhooksDeliveriesRecover, "Sends again, oldest first, every failed delivery of the endpoint whose event was recorded since the time given (at most 100 in one go; run it again for the rest), each as one more attempt of the same delivery. This calls a system outside Kobana."},
	"reprocess-resume":  {inboxmcp.ToolEmailsReprocess, "Takes up the e-mail's interrupted workflow run: the steps it ended are not sent again; the step whose outcome is unknown is sent again with the same X-Kobana-Step-Id and Idempotency-Key, and the steps after it follow."},
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
	if err := c.tools.Check(r.Context(), s.principal, a.Tool, args); err != nil {
		c.fail(w, r, s, err)
		return
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
	out, err := c.tools.CallConfirmed(r.Context(), s.principal, a.Tool, json.RawMessage(args))
	if err != nil {
		c.fail(w, r, s, err)
		return
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
