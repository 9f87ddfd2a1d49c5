package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// SecretName is a secret's name without its value.
type SecretName struct {
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SecretList is the output of secrets_list: names only.
type SecretList struct {
	Secrets []SecretName `json:"secrets"`
}

// SecretSetArg sets a secret.
type SecretSetArg struct {
	Name  string `json:"name" jsonschema:"the name workflows use as ${{secrets.NAME}}: letters, digits, _ and -, starting with a letter"`
	Value string `json:"value" jsonschema:"the secret value; it is stored encrypted and never shown again"`
}

// SecretNameArg names a secret.
type SecretNameArg struct {
	Name string `json:"name" jsonschema:"the secret name"`
}

// EventListArg filters system_events_list.
type EventListArg struct {
	Page
	Type string `json:"type,omitempty" jsonschema:"only events of this type, e.g. webhook.delivery_failed"`
}

// EventList is a page of system events.
type EventList struct {
	Events     []inbox.SystemEvent `json:"events"`
	NextBefore string              `json:"next_before,omitempty"`
}

// ValidateArg is the input of workflows_validate.
type ValidateArg struct {
	Document string `json:"document" jsonschema:"the agent output to check, as JSON text: {\"result\": …, \"workflow\": [steps]}"`
}

// Validation is the output of workflows_validate.
type Validation struct {
	OK          bool            `json:"ok"`
	Diagnostics json.RawMessage `json:"diagnostics"`
}

var secretNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

func (p *Product) secretTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "secrets_list", Title: "List secrets",
			Description: "Lists the names of the workspace's secrets (never their values) and when each was last set. Workflows use them as ${{secrets.NAME}}.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in struct{}) (SecretList, error) {
				infos, err := p.opts.Store.ListSecrets(ctx, c.Workspace)
				out := SecretList{Secrets: []SecretName{}}
				for _, s := range infos {
					if inbox.IsUserSecret(s.Name) {
						out.Secrets = append(out.Secrets, SecretName{Name: s.Name, UpdatedAt: s.Updated})
					}
				}
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "secrets_set", Title: "Set secret",
			Description: "Creates or replaces a workspace secret that workflows reference as ${{secrets.NAME}}. The value is stored encrypted, redacted from every run record, and never returned by any tool.",
			Access:      mcpserver.Admin, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in SecretSetArg) (SecretName, error) {
				if !secretNameRe.MatchString(in.Name) {
					return SecretName{}, mcpserver.Errorf("invalid_arguments", "secret names are 1-64 letters, digits, _ or -, starting with a letter")
				}
				if in.Value == "" {
					return SecretName{}, mcpserver.Errorf("invalid_arguments", "value is required")
				}
				if err := p.opts.Store.SetSecret(ctx, c.Workspace, in.Name, in.Value); err != nil {
					return SecretName{}, err
				}
				return SecretName{Name: in.Name, UpdatedAt: p.now().UTC()}, p.event(ctx, c, "secret.set", in.Name, map[string]string{"name": in.Name})
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "secrets_delete", Title: "Delete secret",
			Description: "Deletes a workspace secret. Workflow steps that reference it will fail before sending. Cannot be undone; the user is asked to confirm.",
			Access:      mcpserver.Admin, Destructive: true, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in SecretNameArg) (Deleted, error) {
				if !inbox.IsUserSecret(in.Name) || in.Name == "" {
					return Deleted{}, mcpserver.Errorf("not_found", "secret %q does not exist", in.Name)
				}
				if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, in.Name); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return Deleted{}, mcpserver.Errorf("not_found", "secret %q does not exist", in.Name)
					}
					return Deleted{}, err
				}
				return Deleted{ID: in.Name, Deleted: true}, p.event(ctx, c, "secret.deleted", in.Name, map[string]string{"name": in.Name})
			}),
	}
}

func (p *Product) eventTools() []mcpserver.Tool {
	return []mcpserver.Tool{
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "system_events_list", Title: "List system events",
			Description: "Lists the workspace's event log, most recent first: who changed what (inbox.created, secret.set, …) and what the platform did (webhook.delivery_failed, email.reprocessed, …). Filter by type.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in EventListArg) (EventList, error) {
				q, err := in.query()
				if err != nil {
					return EventList{}, err
				}
				q.Status = in.Type
				items, next, err := inbox.List[inbox.SystemEvent](ctx, p.repo, c.Workspace, q)
				out := EventList{Events: items}
				out.NextBefore = next
				return out, err
			}),
		mcpserver.NewTool(mcpserver.ToolSpec{Name: "system_events_get", Title: "Get system event",
			Description: "Returns one entry of the event log with its payload.",
			Access:      mcpserver.Read, Idempotent: true},
			func(ctx context.Context, c *mcpserver.Caller, in IDArg) (inbox.SystemEvent, error) {
				var e inbox.SystemEvent
				if err := required("id", in.ID); err != nil {
					return e, err
				}
				return e, load(ctx, p.repo, c.Workspace, in.ID, &e)
			}),
	}
}

func (p *Product) validateTool() mcpserver.Tool {
	return mcpserver.NewTool(mcpserver.ToolSpec{Name: "workflows_validate", Title: "Validate workflow",
		Description: "Checks an agent output document ({\"result\": …, \"workflow\": [steps]}) with the platform's workflow linter without running anything, and returns ok plus diagnostics with codes, messages, JSON pointers and line:column positions. Use it while writing an agent's system message or a workflow.",
		Access:      mcpserver.Read, Idempotent: true},
		func(ctx context.Context, c *mcpserver.Caller, in ValidateArg) (Validation, error) {
			if err := required("document", in.Document); err != nil {
				return Validation{}, err
			}
			diags, ok := p.opts.Lint([]byte(in.Document))
			if len(diags) == 0 {
				diags = json.RawMessage("[]")
			}
			return Validation{OK: ok, Diagnostics: diags}, nil
		})
}

// countSteps counts the steps of a run record's step list.
func countSteps(steps json.RawMessage) int {
	var s []json.RawMessage
	if json.Unmarshal(steps, &s) != nil {
		return 0
	}
	return len(s)
}
