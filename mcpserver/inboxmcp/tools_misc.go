package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
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
	Name  string `json:"name" jsonschema:"the name workflows use as ${{secrets.NAME}}: letters, digits, _ and -, starting with a letter" pattern:"^[A-Za-z][A-Za-z0-9_-]{0,63}$"`
	Value string `json:"value" jsonschema:"the secret value; it is stored encrypted and never shown again" minLength:"1" maxLength:"65536"`
}

// SecretNameArg names a secret.
type SecretNameArg struct {
	Name string `json:"name" jsonschema:"the secret name" pattern:"^[A-Za-z][A-Za-z0-9_-]{0,63}$"`
}

// EventListArg filters system_events_list.
type EventListArg struct {
	Page
	Type string `json:"type,omitempty" jsonschema:"only events of this type, e.g. webhook.delivery_failed" pattern:"^[a-z_]+\\.[a-z_]+$" maxLength:"64"`
}

// EventList is a page of system events.
type EventList struct {
	Events     []inbox.SystemEvent `json:"events"`
	NextCursor string              `json:"next_cursor,omitempty"`
}

// ValidateArg is the input of workflows_validate.
type ValidateArg struct {
	Document string `json:"document" jsonschema:"the agent output to check, as JSON text: {\"result\": …, \"workflow\": [steps]}" minLength:"1" maxLength:"1048576"`
}

// Validation is the output of workflows_validate.
type Validation struct {
	OK          bool            `json:"ok"`
	Diagnostics json.RawMessage `json:"diagnostics"`
}

var secretNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

func (p *Product) secretsList(ctx context.Context, c *mcpserver.Caller, in NoArgs) (SecretList, error) {
	infos, err := p.opts.Store.ListSecrets(ctx, c.Workspace)
	out := SecretList{Secrets: []SecretName{}}
	for _, s := range infos {
		if inbox.IsUserSecret(s.Name) {
			out.Secrets = append(out.Secrets, SecretName{Name: s.Name, UpdatedAt: s.Updated})
		}
	}
	return out, err
}

func (p *Product) secretsSet(ctx context.Context, c *mcpserver.Caller, in SecretSetArg) (SecretName, error) {
	if !secretNameRe.MatchString(in.Name) {
		return SecretName{}, mcpserver.Errorf("invalid_arguments", "secret names are 1-64 letters, digits, _ or -, starting with a letter")
	}
	if in.Value == "" {
		return SecretName{}, mcpserver.Errorf("invalid_arguments", "value is required")
	}
	if err := p.opts.Store.SetSecret(ctx, c.Workspace, in.Name, in.Value); err != nil {
		return SecretName{}, err
	}
	return SecretName{Name: in.Name, UpdatedAt: p.now().UTC()}, p.event(ctx, c, inbox.EventSecretSet, in.Name, map[string]string{"name": in.Name})
}

// checkSecret is secrets_delete's check: the user secret exists.
func (p *Product) checkSecret(ctx context.Context, c *mcpserver.Caller, in SecretNameArg) error {
	if !secretNameRe.MatchString(in.Name) || !inbox.IsUserSecret(in.Name) {
		return mcpserver.Errorf("not_found", "secret %q does not exist", in.Name)
	}
	infos, err := p.opts.Store.ListSecrets(ctx, c.Workspace)
	if err != nil {
		return err
	}
	for _, s := range infos {
		if s.Name == in.Name {
			return nil
		}
	}
	return mcpserver.Errorf("not_found", "secret %q does not exist (see secrets_list)", in.Name)
}

func (p *Product) secretsDelete(ctx context.Context, c *mcpserver.Caller, in SecretNameArg) (Deleted, error) {
	if !secretNameRe.MatchString(in.Name) || !inbox.IsUserSecret(in.Name) {
		return Deleted{}, mcpserver.Errorf("not_found", "secret %q does not exist", in.Name)
	}
	if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, in.Name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Deleted{}, mcpserver.Errorf("not_found", "secret %q does not exist", in.Name)
		}
		return Deleted{}, err
	}
	return Deleted{ID: in.Name, Deleted: true}, p.event(ctx, c, inbox.EventSecretDeleted, in.Name, map[string]string{"name": in.Name})
}

func (p *Product) systemEventsList(ctx context.Context, c *mcpserver.Caller, in EventListArg) (EventList, error) {
	q, err := in.Query()
	if err != nil {
		return EventList{}, err
	}
	q.Status = in.Type
	items, next, err := listPage(ctx, p.repo.Events, c.Workspace, q)
	return EventList{Events: items, NextCursor: next}, err
}

func (p *Product) systemEventsGet(ctx context.Context, c *mcpserver.Caller, in EventIDArg) (inbox.SystemEvent, error) {
	if err := required("id", in.ID); err != nil {
		return inbox.SystemEvent{}, err
	}
	return p.repo.Events.Get(ctx, c.Workspace, in.ID)
}

func (p *Product) workflowsValidate(ctx context.Context, c *mcpserver.Caller, in ValidateArg) (Validation, error) {
	if err := required("document", in.Document); err != nil {
		return Validation{}, err
	}
	// The linter the agents' answers are checked with, under the name the
	// agents' repair rounds use: what an author sees is what an agent is told.
	r := lint.File(answerFile, []byte(in.Document))
	ds := r.Diagnostics
	if ds == nil {
		ds = compile.Diagnostics{}
	}
	b, err := json.Marshal(ds)
	if err != nil {
		return Validation{}, err
	}
	return Validation{OK: r.Errors() == 0, Diagnostics: b}, nil
}

// answerFile is the name a document is linted under: an agent's answer.
const answerFile = "answer.json"
