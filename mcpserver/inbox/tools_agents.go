package inbox

import (
	"context"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// AgentList is a page of agents.
type AgentList struct {
	Agents     []Agent `json:"agents"`
	NextBefore string  `json:"next_before,omitempty"`
}

// AgentCreateArg creates an agent.
type AgentCreateArg struct {
	Name          string   `json:"name" jsonschema:"a human name, e.g. Invoice reader"`
	Model         string   `json:"model" jsonschema:"a model id from models_list"`
	SystemMessage string   `json:"system_message" jsonschema:"the instructions the agent follows for every e-mail; it answers with {result, workflow}"`
	Skills        []string `json:"skills,omitempty" jsonschema:"skill names the agent may use, e.g. extract_invoice"`
}

// AgentUpdateArg changes an agent; absent fields stay as they are.
type AgentUpdateArg struct {
	ID            string    `json:"id" jsonschema:"the agent id"`
	Name          *string   `json:"name,omitempty"`
	Model         *string   `json:"model,omitempty" jsonschema:"a model id from models_list"`
	SystemMessage *string   `json:"system_message,omitempty"`
	Skills        *[]string `json:"skills,omitempty"`
	Status        *string   `json:"status,omitempty" jsonschema:"active or paused"`
}

func checkModel(m string) error {
	if _, ok := modelByID(m); !ok {
		ids := make([]string, 0, len(Models))
		for _, x := range Models {
			ids = append(ids, x.ID)
		}
		return mcpserver.Errorf("invalid_arguments", "unknown model %q; use one of %s", m, strings.Join(ids, ", "))
	}
	return nil
}

func (p *Product) agentTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agents_list", Title: "List agents",
			Description: "Lists the workspace's AI agents, most recent first, with model, system message and skills.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in Page) (AgentList, error) {
				q, err := in.query()
				if err != nil {
					return AgentList{}, err
				}
				items, next, err := list[Agent](ctx, p.repo, c.Workspace, KindAgent, q)
				out := AgentList{Agents: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agents_get", Title: "Get agent",
			Description: "Returns one agent: model, system message, skills and status.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Agent, error) {
				var a Agent
				if err := required("id", in.ID); err != nil {
					return a, err
				}
				return a, p.repo.get(ctx, c.Workspace, KindAgent, in.ID, &a)
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agents_create", Title: "Create agent",
			Description: "Creates an AI agent on a model from models_list with a system message. Attach it to an inbox with inboxes_update (agent_id). Returns the agent.",
			Access:      mcpserver.Write},
			func(ctx context.Context, c *mcpserver.Caller, in AgentCreateArg) (Agent, error) {
				if err := required("name", in.Name); err != nil {
					return Agent{}, err
				}
				if err := required("system_message", in.SystemMessage); err != nil {
					return Agent{}, err
				}
				if err := checkModel(in.Model); err != nil {
					return Agent{}, err
				}
				w, err := p.workspace(ctx, c.Workspace)
				if err != nil {
					return Agent{}, err
				}
				if w.Limits.Agents > 0 {
					n, _, err := list[Agent](ctx, p.repo, c.Workspace, KindAgent, store.Query{Limit: 1000})
					if err != nil {
						return Agent{}, err
					}
					if len(n) >= w.Limits.Agents {
						return Agent{}, mcpserver.Errorf("limit_reached", "the plan allows %d agents and the workspace has %d", w.Limits.Agents, len(n))
					}
				}
				now := p.now().UTC()
				a := Agent{ID: newID("agt"), Name: in.Name, Model: in.Model, SystemMessage: in.SystemMessage, Skills: in.Skills, Status: "active", CreatedAt: now, UpdatedAt: now}
				if a.Skills == nil {
					a.Skills = []string{}
				}
				if err := p.repo.put(ctx, c.Workspace, KindAgent, a.ID, "", a.Status, now, a); err != nil {
					return Agent{}, err
				}
				return a, p.event(ctx, c, "agent.created", a.ID, map[string]string{"agent_id": a.ID, "model": a.Model})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agents_update", Title: "Update agent",
			Description: "Changes an agent's name, model, system message, skills or status (active/paused); fields left out stay as they are. New e-mails use the new configuration.",
			Access:      mcpserver.Write, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in AgentUpdateArg) (Agent, error) {
				var a Agent
				if err := required("id", in.ID); err != nil {
					return a, err
				}
				if err := p.repo.get(ctx, c.Workspace, KindAgent, in.ID, &a); err != nil {
					return a, err
				}
				var changed []string
				if in.Name != nil {
					if err := required("name", *in.Name); err != nil {
						return a, err
					}
					a.Name, changed = *in.Name, append(changed, "name")
				}
				if in.Model != nil {
					if err := checkModel(*in.Model); err != nil {
						return a, err
					}
					a.Model, changed = *in.Model, append(changed, "model")
				}
				if in.SystemMessage != nil {
					if err := required("system_message", *in.SystemMessage); err != nil {
						return a, err
					}
					a.SystemMessage, changed = *in.SystemMessage, append(changed, "system_message")
				}
				if in.Skills != nil {
					a.Skills, changed = *in.Skills, append(changed, "skills")
				}
				if in.Status != nil {
					if err := checkStatus(*in.Status); err != nil {
						return a, err
					}
					a.Status, changed = *in.Status, append(changed, "status")
				}
				if len(changed) == 0 {
					return a, mcpserver.Errorf("invalid_arguments", "nothing to change: pass at least one of name, model, system_message, skills, status")
				}
				a.UpdatedAt = p.now().UTC()
				if err := p.repo.put(ctx, c.Workspace, KindAgent, a.ID, "", a.Status, a.CreatedAt, a); err != nil {
					return a, err
				}
				return a, p.event(ctx, c, "agent.updated", a.ID, map[string]any{"agent_id": a.ID, "changed": changed})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "agents_delete", Title: "Delete agent",
			Description: "Deletes an agent. Inboxes using it stop processing e-mails until another agent is attached. Its past runs are kept. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (Deleted, error) {
				if err := required("id", in.ID); err != nil {
					return Deleted{}, err
				}
				if err := p.repo.delete(ctx, c.Workspace, KindAgent, in.ID); err != nil {
					return Deleted{}, err
				}
				return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, "agent.deleted", in.ID, map[string]string{"agent_id": in.ID})
			}),
	}
}
