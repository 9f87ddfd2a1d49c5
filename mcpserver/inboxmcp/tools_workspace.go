package inboxmcp

import (
	"context"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// WorkspaceArg optionally names the workspace (it must be the token's).
type WorkspaceArg struct {
	ID string `json:"id,omitempty" jsonschema:"the workspace id; defaults to the token's workspace" pattern:"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"`
}

// RetentionArg is the input of workspaces_set_retention.
type RetentionArg struct {
	Days int `json:"days" jsonschema:"how many days to keep each e-mail's raw message (.eml, with its attachments), counted from when it was received; 0 keeps them as long as the plan allows (limits.retention_days, 0 there: forever)" minimum:"0" maximum:"36500"`
}

// NoArgs is the input of tools that take no arguments.
type NoArgs struct{}

// ModelList is the output of models_list.
type ModelList struct {
	Models []inbox.Model `json:"models"`
}

// UsageArg selects the usage period.
type UsageArg struct {
	Month string `json:"month,omitempty" jsonschema:"a calendar month YYYY-MM; default: the last 30 days" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])$"`
}

func (p *Product) workspacesGet(ctx context.Context, c *mcpserver.Caller, in WorkspaceArg) (inbox.Workspace, error) {
	return p.getWorkspace(ctx, c, in.ID)
}

// checkRetention is workspaces_set_retention's check: the days are within
// what the plan allows.
func (p *Product) checkRetention(ctx context.Context, c *mcpserver.Caller, in RetentionArg) error {
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return err
	}
	plan := w.Limits.RetentionDays
	switch {
	case in.Days < 0 || in.Days > 36500:
		return mcpserver.Errorf("invalid_arguments", "days must be between 0 and 36500, got %d", in.Days)
	case plan > 0 && in.Days > plan:
		return mcpserver.Errorf("limit_reached", "the plan keeps raw messages at most %d days; choose %d or fewer (0 keeps them that long)", plan, plan)
	}
	return nil
}

func (p *Product) workspacesSetRetention(ctx context.Context, c *mcpserver.Caller, in RetentionArg) (inbox.Workspace, error) {
	if err := p.checkRetention(ctx, c, in); err != nil {
		return inbox.Workspace{}, err
	}
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return inbox.Workspace{}, err
	}
	was := w.Retention()
	w.RetentionDays = in.Days
	if err := p.repo.Workspaces.Put(ctx, c.Workspace, w); err != nil {
		return inbox.Workspace{}, err
	}
	return w, p.event(ctx, c, inbox.EventWorkspaceRetentionSet, c.Workspace,
		map[string]int{"retention_days": in.Days, "effective_days": w.Retention(), "previous_effective_days": was})
}

func (p *Product) modelsList(ctx context.Context, c *mcpserver.Caller, in NoArgs) (ModelList, error) {
	return ModelList{Models: inbox.Models()}, nil
}

func (p *Product) usageGet(ctx context.Context, c *mcpserver.Caller, in UsageArg) (inbox.Usage, error) {
	from, to, err := p.period(in.Month)
	if err != nil {
		return inbox.Usage{}, err
	}
	return inbox.UsageOf(ctx, p.repo, c.Workspace, from, to)
}

func (p *Product) getWorkspace(ctx context.Context, c *mcpserver.Caller, id string) (inbox.Workspace, error) {
	if id != "" && id != c.Workspace {
		return inbox.Workspace{}, fmt.Errorf("workspace %q: %w", id, mcpserver.ErrNotFound)
	}
	return p.workspace(ctx, c.Workspace)
}

// period resolves a YYYY-MM month, or the last 30 days when empty.
func (p *Product) period(month string) (time.Time, time.Time, error) {
	now := p.now().UTC()
	if month == "" {
		return now.Add(-30 * 24 * time.Hour), now, nil
	}
	t, err := checkMonth(month)
	if err != nil {
		return time.Time{}, time.Time{}, mcpserver.Errorf("invalid_arguments", "%v", err)
	}
	return t, t.AddDate(0, 1, 0), nil
}

// checkMonth reads a month written exactly as YYYY-MM.
func checkMonth(s string) (time.Time, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || len(s) != 7 {
		return time.Time{}, fmt.Errorf("month must be YYYY-MM, e.g. 2026-10; got %q", s)
	}
	return t, nil
}

// checkDate reads a date written exactly as YYYY-MM-DD.
func checkDate(s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil || len(s) != 10 {
		return time.Time{}, fmt.Errorf("date must be YYYY-MM-DD, e.g. 2026-11-01; got %q", s)
	}
	return t, nil
}
