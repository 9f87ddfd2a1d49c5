package pipeline

import "github.com/kobana/workflow/mcpserver/inbox/queue"

// AgentRunID is the id of the agent run the intake's job for an e-mail
// creates, so a benchmark can tell which e-mail a run belongs to.
func AgentRunID(workspace, emailID string) string {
	return agentRunID(queue.AgentArgs{Workspace: workspace, EmailID: emailID})
}
