package inboxmcp

import (
	"context"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// AgentListArg filters agents_list.
type AgentListArg struct {
	Page
	Status string `json:"status,omitempty" jsonschema:"only agents in this status" enum:"active,paused"`
}

// AgentList is a page of agents.
type AgentList struct {
	Agents     []inbox.Agent `json:"agents"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// AgentCreateArg creates an agent.
type AgentCreateArg struct {
	Name          string   `json:"name" jsonschema:"a human name, e.g. Invoice reader" minLength:"1" maxLength:"200"`
	Model         string   `json:"model" jsonschema:"a model id from models_list" enum:"claude-sonnet-4-5,claude-haiku-4-5,gpt-4.1-mini,gemini-2.5-flash"`
	SystemMessage string   `json:"system_message" jsonschema:"the instructions the agent follows for every e-mail; it answers with {result, workflow}" minLength:"1" maxLength:"50000"`
	Skills        []string `json:"skills,omitempty" jsonschema:"skill names the agent may use, e.g. extract_invoice" maxItems:"50" pattern:"^[a-z][a-z0-9_]{0,63}$"`
	// Settings tune how the agent's model is called; absent means the
	// defaults.
	Settings *inbox.AgentSettings `json:"settings,omitempty" jsonschema:"how the agent's model is called: timeout, repair rounds, file inputs; absent for the defaults"`
}

// AgentUpdateArg changes an agent; absent fields stay as they are.
type AgentUpdateArg struct {
	ID            string    `json:"id" jsonschema:"the agent id" pattern:"^agt_[A-Za-z0-9_-]{1,64}$"`
	Name          *string   `json:"name,omitempty" minLength:"1" maxLength:"200"`
	Model         *string   `json:"model,omitempty" jsonschema:"a model id from models_list" enum:"claude-sonnet-4-5,claude-haiku-4-5,gpt-4.1-mini,gemini-2.5-flash"`
	SystemMessage *string   `json:"system_message,omitempty" minLength:"1" maxLength:"50000"`
	Skills        *[]string `json:"skills,omitempty" maxItems:"50" pattern:"^[a-z][a-z0-9_]{0,63}$"`
	Status        *string   `json:"status,omitempty" jsonschema:"active or paused" enum:"active,paused"`
	// Settings replaces the agent's settings whole.
	Settings *inbox.AgentSettings `json:"settings,omitempty" jsonschema:"how the agent's model is called, replacing the current settings whole"`
}

// checkSettings refuses settings out of their ranges.
func checkSettings(s *inbox.AgentSettings) error {
	if s == nil {
		return nil
	}
	if err := s.Check(); err != nil {
		return mcpserver.Errorf("invalid_arguments", "%v", err)
	}
	return nil
}

func checkModel(m string) error {
	if _, ok := inbox.ModelByID(m); !ok {
		return mcpserver.Errorf("invalid_arguments", "unknown model %q; use one of %s", m, strings.Join(inbox.ModelIDs(), ", "))
	}
	return nil
}

func (p *Product) agentsList(ctx context.Context, c *mcpserver.Caller, in AgentListArg) (AgentList, error) {
	q, err := in.Query()
	if err != nil {
		return AgentList{}, err
	}
	if err := checkEnum("status", in.Status, inbox.StatusActive, inbox.StatusPaused); err != nil {
		return AgentList{}, err
	}
	q.Status = in.Status
	items, next, err := listPage(ctx, p.repo.Agents, c.Workspace, q)
	return AgentList{Agents: items, NextCursor: next}, err
}

func (p *Product) agentsGet(ctx context.Context, c *mcpserver.Caller, in AgentIDArg) (inbox.Agent, error) {
	return p.getAgent(ctx, c.Workspace, in.ID)
}

func (p *Product) getAgent(ctx context.Context, ws, id string) (inbox.Agent, error) {
	if err := required("id", id); err != nil {
		return inbox.Agent{}, err
	}
	return p.repo.Agents.Get(ctx, ws, id)
}

func (p *Product) agentsCreate(ctx context.Context, c *mcpserver.Caller, in AgentCreateArg) (inbox.Agent, error) {
	if err := required("name", in.Name); err != nil {
		return inbox.Agent{}, err
	}
	if err := required("system_message", in.SystemMessage); err != nil {
		return inbox.Agent{}, err
	}
	if err := checkModel(in.Model); err != nil {
		return inbox.Agent{}, err
	}
	if err := checkSettings(in.Settings); err != nil {
		return inbox.Agent{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return inbox.Agent{}, err
	}
	if w.Limits.Agents > 0 {
		n, err := count(ctx, p.repo.Agents, c.Workspace)
		if err != nil {
			return inbox.Agent{}, err
		}
		if n >= w.Limits.Agents {
			return inbox.Agent{}, mcpserver.Errorf("limit_reached", "the plan allows %d agents and the workspace has %d", w.Limits.Agents, n)
		}
	}
	now := p.now().UTC()
	a := inbox.Agent{ID: inbox.NewID("agt"), Name: in.Name, Model: in.Model, SystemMessage: in.SystemMessage, Skills: in.Skills, Status: inbox.StatusActive, CreatedAt: now, UpdatedAt: now}
	if a.Skills == nil {
		a.Skills = []string{}
	}
	if in.Settings != nil {
		a.Settings = *in.Settings
	}
	if err := p.repo.Agents.Put(ctx, c.Workspace, a); err != nil {
		return inbox.Agent{}, err
	}
	return a, p.event(ctx, c, inbox.EventAgentCreated, a.ID, map[string]string{"agent_id": a.ID, "model": a.Model})
}

func (p *Product) agentsUpdate(ctx context.Context, c *mcpserver.Caller, in AgentUpdateArg) (inbox.Agent, error) {
	a, err := p.getAgent(ctx, c.Workspace, in.ID)
	if err != nil {
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
		if err := checkEnum("status", *in.Status, inbox.StatusActive, inbox.StatusPaused); err != nil {
			return a, err
		}
		a.Status, changed = *in.Status, append(changed, "status")
	}
	if in.Settings != nil {
		if err := checkSettings(in.Settings); err != nil {
			return a, err
		}
		a.Settings, changed = *in.Settings, append(changed, "settings")
	}
	if len(changed) == 0 {
		return a, mcpserver.Errorf("invalid_arguments", "nothing to change: pass at least one of name, model, system_message, skills, status, settings")
	}
	a.UpdatedAt = p.now().UTC()
	if err := p.repo.Agents.Put(ctx, c.Workspace, a); err != nil {
		return a, err
	}
	return a, p.event(ctx, c, inbox.EventAgentUpdated, a.ID, map[string]any{"agent_id": a.ID, "changed": changed})
}

// checkAgent is agents_delete's check.
func (p *Product) checkAgent(ctx context.Context, c *mcpserver.Caller, in AgentIDArg) error {
	_, err := p.getAgent(ctx, c.Workspace, in.ID)
	return err
}

func (p *Product) agentsDelete(ctx context.Context, c *mcpserver.Caller, in AgentIDArg) (Deleted, error) {
	if err := required("id", in.ID); err != nil {
		return Deleted{}, err
	}
	if err := p.repo.Agents.Delete(ctx, c.Workspace, in.ID); err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: in.ID, Deleted: true}, p.event(ctx, c, inbox.EventAgentDeleted, in.ID, map[string]string{"agent_id": in.ID})
}

// count counts a workspace's records of one kind, all of them.
func count[T any](ctx context.Context, r store.Repo[T], ws string) (int, error) {
	n := 0
	err := r.Each(ctx, ws, store.Query{}, func(T) error { n++; return nil })
	return n, err
}
