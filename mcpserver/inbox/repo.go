package inbox

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// NewID returns a fresh random id with a kind prefix, e.g. "eml_3f2a…".
func NewID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// Repo is the domain's typed repositories (store.Repo) over one store's
// records, or a transaction's (In). Every read and write names the
// workspace, so a record of another workspace is not found; errors are
// *store.RecordError naming the kind and id, matching store.ErrNotFound
// and store.ErrConflict with errors.Is.
type Repo struct {
	Workspaces   store.Repo[Workspace]
	Inboxes      store.Repo[Inbox]
	Emails       store.Repo[Email]
	Agents       store.Repo[Agent]
	AgentRuns    store.Repo[AgentRun]
	WorkflowRuns store.Repo[WorkflowRun]
	Webhooks     store.Repo[Webhook]
	Deliveries   store.Repo[Delivery]
	Events       store.Repo[SystemEvent]
}

// NewRepo returns the repositories over records.
func NewRepo(records store.Records) Repo {
	return Repo{
		Workspaces:   repoOf[Workspace](records, "workspace"),
		Inboxes:      repoOf[Inbox](records, "inbox"),
		Emails:       repoOf[Email](records, "e-mail"),
		Agents:       repoOf[Agent](records, "agent"),
		AgentRuns:    repoOf[AgentRun](records, "agent run"),
		WorkflowRuns: repoOf[WorkflowRun](records, "workflow run"),
		Webhooks:     repoOf[Webhook](records, "webhook"),
		Deliveries:   repoOf[Delivery](records, "delivery"),
		Events:       repoOf[SystemEvent](records, "event"),
	}
}

// In returns the repositories over other records of the same store, such
// as a transaction's (store.Tx), so that records written together commit
// together.
func (r Repo) In(records store.Records) Repo { return NewRepo(records) }

// repoOf is the repository of a Document type: its Key gives the columns.
func repoOf[T Document](records store.Records, name string) store.Repo[T] {
	var zero T
	return store.Repo[T]{Records: records, Kind: zero.Key().Kind, Name: name, Meta: func(v *T) store.Meta {
		k := (*v).Key()
		return store.Meta{ID: k.ID, Parent: k.Parent, Status: k.Status, Created: k.Created}
	}}
}

// CreatedIn keeps the records created in [from, to): the filters of a period.
func CreatedIn(from, to time.Time) []store.Filter {
	return []store.Filter{store.GreaterOrEqual(store.CreatedField, from), store.Less(store.CreatedField, to)}
}
