package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/confirm"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/store"
)

// Confirmation error codes, which a destructive tool's error result starts
// with when it did not run: the client cannot ask the user, the
// confirmation was already used, or it cannot be recorded. The code for a
// user who declined is the product's (Policy.DeclineCode).
const (
	CodeConfirmationRequired    = "confirmation_required"
	CodeConfirmationReplayed    = "confirmation_replayed"
	CodeConfirmationUnavailable = "confirmation_unavailable"
)

// ConfirmKey is the key of the confirmation question in inputRequests and
// inputResponses, and the boolean field of its form.
const ConfirmKey = "confirm"

// confirmPurpose is the signing-key family of request states.
const confirmPurpose = "confirm"

// ConfirmationWait bounds how long a confirmation waits for the store (its
// signing keys and its ledger of used confirmations). A store that cannot
// answer in time (a database locked by another writer) gets
// confirmation_unavailable and nothing runs: the user hears within this
// time that they should try again.
const ConfirmationWait = 2 * time.Second

// within runs one store call of a confirmation with the deadline of ctx and
// stops waiting for it at that deadline, even if the store does not honour
// the context (the call then finishes on its own; if it was the ledger's,
// the confirmation is spent and a retry is told it was used, and asked anew).
func within[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() { done <- r }()
		// A panic in the store's call is its error (the confirmation is
		// unavailable, nothing runs), reported on panics.MCP.
		defer panics.Recover(panics.MCP, "confirmation store call", &r.err)
		r.v, r.err = call(ctx)
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("the store did not answer within %v: %w", ConfirmationWait, ctx.Err())
	}
}

// confirm decides whether a destructive call may run now. It returns nil to
// run the tool, or the result to answer instead (a question, a refusal).
// Its store calls share one deadline, ConfirmationWait from now.
func (s *Server) confirm(ctx context.Context, c *Caller, t *Tool, p *Product, req *mcp.CallToolRequest) *mcp.CallToolResult {
	ctx, cancel := context.WithTimeout(ctx, s.confirmWait)
	defer cancel()
	if !c.Modern() || !c.FormElicitation {
		if p.Policy.LegacyRunsDirectly {
			return nil
		}
		if res := s.check(ctx, c, t, req); res != nil {
			return res
		}
		return errorResult(Errorf(CodeConfirmationRequired,
			"%s must be confirmed by the user before it runs, which needs protocol 2026-07-28 and a client that declares elicitation form support; nothing was run. Ask the user to perform this action from a client that supports confirmations.", t.Name))
	}
	digest, err := confirm.Digest(req.Params.Arguments)
	if err != nil {
		return errorResult(Errorf("invalid_arguments", "%v", err))
	}
	want := confirm.Claims{
		Tool:         t.Name,
		ArgsDigest:   digest,
		Person:       c.Person,
		Organization: c.Organization,
		Workspace:    c.Workspace,
	}
	where := p.Policy.where(c)
	if req.Params.RequestState == "" {
		return s.checkThenAsk(ctx, c, t, where, want, req)
	}
	claims, err := s.openState(ctx, req.Params.RequestState)
	if err != nil || !claims.Matches(want) {
		// Tampered, foreign, expired or for another call: ask again.
		return s.checkThenAsk(ctx, c, t, where, want, req)
	}
	answer, _ := req.Params.InputResponses[ConfirmKey].(*mcp.ElicitResult)
	if answer == nil {
		return s.checkThenAsk(ctx, c, t, where, want, req)
	}
	switch answer.Action {
	case "accept", "decline", "cancel":
	default:
		return s.checkThenAsk(ctx, c, t, where, want, req)
	}
	// Whatever the answer, this question is now spent: recording the nonce
	// first means a declined question cannot later be answered yes, and a
	// confirmed call runs at most once even when sent many times at once.
	_, err = within(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.opts.Store.Consume(ctx, claims.Nonce, claims.ExpiresAt())
	})
	switch {
	case errors.Is(err, store.ErrReplayed):
		return errorResult(Errorf(CodeConfirmationReplayed,
			"this confirmation was already used; nothing was run. To run %s again, call it without requestState and answer the new question.", t.Name))
	case err != nil && answer.Action == "accept" && explicitYes(answer):
		s.log.Error("confirmation ledger unavailable", "tool", t.Name, "error", err)
		return errorResult(Errorf(CodeConfirmationUnavailable,
			"the server cannot record the confirmation right now; nothing was run. Try again later."))
	case err != nil:
		s.log.Error("confirmation ledger unavailable", "tool", t.Name, "error", err)
	}
	if answer.Action == "accept" && explicitYes(answer) {
		return nil
	}
	return errorResult(Errorf(p.Policy.DeclineCode, "the user declined to run %s; nothing was changed.", t.Name))
}

// explicitYes is true only for content {"confirm": true}.
func explicitYes(r *mcp.ElicitResult) bool {
	v, ok := r.Content[ConfirmKey].(bool)
	return ok && v
}

func (s *Server) openState(ctx context.Context, state string) (confirm.Claims, error) {
	kid, err := confirm.KeyID(state)
	if err != nil {
		return confirm.Claims{}, err
	}
	k, err := within(ctx, func(ctx context.Context) (store.Key, error) {
		return s.opts.Store.VerifyingKey(ctx, confirmPurpose, kid)
	})
	if err != nil {
		return confirm.Claims{}, fmt.Errorf("%w: %v", confirm.ErrUnknownKey, err)
	}
	return confirm.Open(state, k.Secret, s.now())
}

// check runs the tool's check (WithCheck) before anyone is asked: nil when
// the call may be put to the user, else the answer. A check that cannot
// reach the store answers confirmation_unavailable, as the ledger would.
func (s *Server) check(ctx context.Context, c *Caller, t *Tool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	if t.check == nil {
		return nil
	}
	_, err := within(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, t.check(ctx, c, req.Params.Arguments)
	})
	var te *ToolError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te), errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
		return s.failure(t, err)
	default:
		s.log.Error("checking a call before confirmation", "tool", t.Name, "error", err)
		return errorResult(Errorf(CodeConfirmationUnavailable,
			"the server cannot check this call right now; nothing was run. Try again later."))
	}
}

// checkThenAsk asks the user to confirm a call that passes its check.
func (s *Server) checkThenAsk(ctx context.Context, c *Caller, t *Tool, where string, want confirm.Claims, req *mcp.CallToolRequest) *mcp.CallToolResult {
	if res := s.check(ctx, c, t, req); res != nil {
		return res
	}
	return s.ask(ctx, c, t, where, want, req)
}

// ask returns the one-question form and a fresh signed state; where names
// the place the call acts in ("workspace ws_1").
func (s *Server) ask(ctx context.Context, c *Caller, t *Tool, where string, want confirm.Claims, req *mcp.CallToolRequest) *mcp.CallToolResult {
	k, err := within(ctx, func(ctx context.Context) (store.Key, error) {
		return s.opts.Store.SigningKey(ctx, confirmPurpose)
	})
	if err != nil {
		s.log.Error("confirmation key unavailable", "tool", t.Name, "error", err)
		return errorResult(Errorf(CodeConfirmationUnavailable,
			"the server cannot ask for confirmation right now; nothing was run. Try again later."))
	}
	want.Nonce = confirm.NewNonce()
	want.Expires = s.now().Add(confirm.TTL).UnixMilli()
	state, err := confirm.Seal(k.ID, k.Secret, want)
	if err != nil {
		s.log.Error("sealing confirmation", "tool", t.Name, "error", err)
		return errorResult(Errorf(CodeConfirmationUnavailable, "the server cannot ask for confirmation right now; nothing was run."))
	}
	canon, _ := confirm.Canonical(req.Params.Arguments)
	title := t.Title
	if title == "" {
		title = t.Name
	}
	msg := fmt.Sprintf("Run %q (%s) in %s with these arguments?\n%s\n%s\nThis question expires in 5 minutes.",
		title, t.Name, where, string(canon), strings.TrimSpace(firstSentence(t.Description)))
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{
			ConfirmKey: &mcp.ElicitParams{
				Mode:    "form",
				Message: msg,
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						ConfirmKey: map[string]any{
							"type":        "boolean",
							"title":       "Run this action?",
							"description": fmt.Sprintf("Yes runs %s once with the arguments shown.", t.Name),
							"default":     false,
						},
					},
					"required": []string{ConfirmKey},
				},
			},
		},
		RequestState: state,
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
