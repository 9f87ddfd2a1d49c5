package pg_test

import (
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

func TestWorkspaceBySlug(t *testing.T) {
	dsn, _ := pgtest.SchemaDSN(t, "slug", "slug")
	storetest.WorkspaceBySlug(t, open(t, dsn, pg.Options{}))
}
