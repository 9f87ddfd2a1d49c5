package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// SecretName is a secret's name without its value, and where it may be
// sent.
type SecretName struct {
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
	// Destinations are the only hosts a workflow may send the secret to;
	// absent when it may go to any host the agent's egress list allows.
	Destinations []string `json:"destinations,omitempty"`
	// BoundBy says where Destinations come from: "secrets_set" (given
	// when the secret was set) or "url" (the secret is a URL, bound to its
	// own host).
	BoundBy string `json:"bound_by,omitempty"`
}

// SecretList is the output of secrets_list: names only.
type SecretList struct {
	Secrets []SecretName `json:"secrets"`
}

// SecretSetArg sets a secret.
type SecretSetArg struct {
	Name string `json:"name" jsonschema:"the name workflows use as ${{secrets.NAME}}: letters, digits, _ and -, starting with a letter" pattern:"^[A-Za-z][A-Za-z0-9_-]{0,63}$"`
	// Value is the secret's value; omitted, the secret keeps its value and
	// only its destinations change.
	Value string `json:"value,omitempty" jsonschema:"the secret value; it is stored encrypted and never shown again. Omit it to change only the destinations of an existing secret" maxLength:"65536"`
	// Destinations, when given, replace the hosts the secret may be sent
	// to; omitted, a secret keeps the ones it had.
	Destinations []string `json:"destinations,omitempty" jsonschema:"the only hosts workflows may send this secret to, in a URL, header, body or form: host names such as erp.example.com, *.example.com for every host below a domain, host:port; [\"*\"] for any host. Omit to keep the secret's current destinations; a new secret whose value is a URL is bound to that URL's host" maxItems:"50"`
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
	AgentID  string `json:"agent_id,omitempty" jsonschema:"check it as this agent's answer: with the agent's egress list (the workspace's secret names and destinations always apply)" pattern:"^agt_[A-Za-z0-9_-]{1,64}$"`
}

// Validation is the output of workflows_validate.
type Validation struct {
	OK          bool            `json:"ok"`
	Diagnostics json.RawMessage `json:"diagnostics"`
}

var secretNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

func (p *Product) secretsList(ctx context.Context, c *mcpserver.Caller, in NoArgs) (SecretList, error) {
	infos, err := p.opts.Store.ListSecrets(ctx, c.Workspace)
	if err != nil {
		return SecretList{}, err
	}
	all, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return SecretList{}, err
	}
	_, policy := inbox.SecretsPolicy(all)
	out := SecretList{Secrets: []SecretName{}}
	for _, s := range infos {
		if inbox.IsUserSecret(s.Name) {
			out.Secrets = append(out.Secrets, secretName(s.Name, s.Updated, all, policy))
		}
	}
	return out, nil
}

// secretName describes a secret and where it may go, never its value.
func secretName(name string, updated time.Time, all map[string]string, policy *egress.Policy) SecretName {
	sn := SecretName{Name: name, UpdatedAt: updated}
	if d, ok := policy.Destinations(name); ok {
		sn.Destinations = d.Strings()
		sn.BoundBy = "url"
		if _, declared := all[inbox.DestinationsSecretName(name)]; declared {
			sn.BoundBy = "secrets_set"
		}
	}
	return sn
}

func (p *Product) secretsSet(ctx context.Context, c *mcpserver.Caller, in SecretSetArg) (SecretName, error) {
	if !secretNameRe.MatchString(in.Name) {
		return SecretName{}, mcpserver.Errorf("invalid_arguments", "secret names are 1-64 letters, digits, _ or -, starting with a letter")
	}
	all, err := p.opts.Store.RevealSecrets(ctx, c.Workspace)
	if err != nil {
		return SecretName{}, err
	}
	destName := inbox.DestinationsSecretName(in.Name)
	_, existed := all[in.Name]
	if in.Value == "" && (in.Destinations == nil || !existed) {
		return SecretName{}, mcpserver.Errorf("invalid_arguments", "value is required, unless destinations are given for an existing secret")
	}
	switch {
	case in.Destinations != nil:
		if len(in.Destinations) == 0 {
			return SecretName{}, mcpserver.Errorf("invalid_arguments", `destinations is empty: give the hosts the secret may be sent to, or ["*"] for any host`)
		}
		d, err := egress.ParseList(in.Destinations)
		if err != nil {
			return SecretName{}, mcpserver.Errorf("invalid_arguments", "destinations%v", err)
		}
		// The destinations are written before the value: a failure
		// between the two leaves the old value with the new (narrower or
		// different) destinations, never a new value unbound.
		if err := p.opts.Store.SetSecret(ctx, c.Workspace, destName, inbox.EncodeDestinations(d)); err != nil {
			return SecretName{}, err
		}
		all[destName] = inbox.EncodeDestinations(d)
	case !existed:
		// A new secret does not inherit the destinations of a deleted one
		// of the same name.
		if _, stale := all[destName]; stale {
			if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, destName); err != nil && !errors.Is(err, store.ErrNotFound) {
				return SecretName{}, err
			}
			delete(all, destName)
		}
	}
	if in.Value != "" {
		if err := p.opts.Store.SetSecret(ctx, c.Workspace, in.Name, in.Value); err != nil {
			return SecretName{}, err
		}
		all[in.Name] = in.Value
	}
	_, policy := inbox.SecretsPolicy(all)
	out := secretName(in.Name, p.now().UTC(), all, policy)
	payload := map[string]string{"name": in.Name}
	if out.Destinations != nil {
		payload["destinations"] = strings.Join(out.Destinations, ", ")
	}
	return out, p.event(ctx, c, inbox.EventSecretSet, in.Name, payload)
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
	if err := p.opts.Store.DeleteSecret(ctx, c.Workspace, inbox.DestinationsSecretName(in.Name)); err != nil && !errors.Is(err, store.ErrNotFound) {
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
	// agents' repair rounds use and with what they know of the workspace:
	// what an author sees is what an agent is told.
	names, pol, err := p.workspacePolicy(ctx, c.Workspace, in.AgentID)
	if err != nil {
		return Validation{}, err
	}
	r := lint.Bytes(answerFile, []byte(in.Document), lint.Options{SecretNames: names, Policy: pol})
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

// workspacePolicy is what a workspace's runs are checked with: its
// secret names, sorted, and where requests may go — its secrets'
// destinations and, for an agent, its egress list.
func (p *Product) workspacePolicy(ctx context.Context, ws, agentID string) ([]string, *egress.Policy, error) {
	all, err := p.opts.Store.RevealSecrets(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	user, pol := inbox.SecretsPolicy(all)
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	slices.Sort(names)
	if agentID != "" {
		ag, err := p.getAgent(ctx, ws, agentID)
		if err != nil {
			return nil, nil, err
		}
		pol = inbox.RunPolicy(pol, ag)
	}
	return names, pol, nil
}

// answerFile is the name a document is linted under: an agent's answer.
const answerFile = "answer.json"
