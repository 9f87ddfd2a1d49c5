package pg_test

import (
	"testing"

	"github.com/kobana/workflow/internal/pgtest"
	"github.com/kobana/workflow/store/pg"
	"github.com/kobana/workflow/store/storetest"
)

func TestWorkspaceBySlug(t *testing.T) {
	dsn, _ := pgtest.SchemaDSN(t, "slug", "slug")
	storetest.WorkspaceBySlug(t, open(t, dsn, pg.Options{}))
}
