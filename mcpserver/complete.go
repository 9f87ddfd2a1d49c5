package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/store"
)

// IDSource says where suggestions for a record id come from: the kind of
// record and the listing tool the caller must be allowed to run (no
// permission, no suggestion).
type IDSource struct {
	Kind string
	Tool string
}

// IDCompleter answers completion/complete for a product from declared
// sources: record ids by typed prefix, most recent first, and "month" as the
// last twelve months.
type IDCompleter struct {
	Records store.Records
	// Owner returns the key the caller's records are stored under (its
	// workspace, or its organization).
	Owner func(*Caller) string
	// Templates maps a resource template URI to the source of its {id}.
	Templates map[string]IDSource
	// Prompts maps a prompt argument name to its source.
	Prompts map[string]IDSource
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Location is where months are counted; nil means UTC.
	Location *time.Location
}

// MaxSuggestions bounds the ids one completion returns.
const MaxSuggestions = 100

// Complete implements CompleteFunc.
func (ic *IDCompleter) Complete(ctx context.Context, c *Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, _ map[string]string) ([]string, error) {
	var (
		src IDSource
		ok  bool
	)
	switch ref.Type {
	case "ref/prompt":
		if arg.Name == "month" {
			return ic.Months(arg.Value), nil
		}
		src, ok = ic.Prompts[arg.Name]
	case "ref/resource":
		if arg.Name == "id" {
			src, ok = ic.Templates[ref.URI]
		}
	}
	if !ok {
		return nil, nil
	}
	return ic.IDs(ctx, c, src, arg.Value)
}

// IDs returns the ids of src's records that start with prefix, most recent
// first, or nothing when the caller may not run src's listing tool.
func (ic *IDCompleter) IDs(ctx context.Context, c *Caller, src IDSource, prefix string) ([]string, error) {
	if !c.May(src.Tool) {
		return nil, nil
	}
	recs, err := ic.Records.ListRecords(ctx, ic.Owner(c), src.Kind, store.Query{Prefix: prefix, Limit: MaxSuggestions})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out, nil
}

// Months returns the last twelve months as YYYY-MM, current first, that
// start with prefix.
func (ic *IDCompleter) Months(prefix string) []string {
	now := time.Now()
	if ic.Now != nil {
		now = ic.Now()
	}
	loc := ic.Location
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	out := make([]string, 0, 12)
	for i := range 12 {
		m := first.AddDate(0, -i, 0).Format("2006-01")
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}
