package pipeline

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/kobana/workflow/mcpserver/inbox"
)

// ScriptedAgent is an AgentRunner that calls no model: it answers every
// e-mail with the same document, for demonstrations and tests. It stands
// where the model client goes (Config.Agents) and says what it is: its runs
// are recorded with the model "scripted".
type ScriptedAgent struct {
	// Output is the answer, {"result": …, "workflow": […]}.
	Output json.RawMessage
	// Tokens are reported as the run's usage (zero: none).
	Tokens inbox.Tokens
}

// ScriptedModel is the model ScriptedAgent's runs are recorded with.
const ScriptedModel = "scripted"

// RunAgent implements inbox.AgentRunner.
func (s ScriptedAgent) RunAgent(ctx context.Context, _ inbox.AgentInput) (inbox.AgentResult, error) {
	if err := ctx.Err(); err != nil {
		return inbox.AgentResult{}, err
	}
	if len(s.Output) == 0 {
		return inbox.AgentResult{}, errors.New("pipeline: the scripted agent has no output to answer with")
	}
	return inbox.AgentResult{Status: inbox.RunSucceeded, Output: s.Output, Tokens: s.Tokens, Model: ScriptedModel}, nil
}
