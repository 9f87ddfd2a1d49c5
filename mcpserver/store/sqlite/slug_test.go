package sqlite_test

import (
	"testing"

	"github.com/kobana/workflow/mcpserver/store/storetest"
)

func TestWorkspaceBySlug(t *testing.T) {
	st, _ := open(t, nil)
	storetest.WorkspaceBySlug(t, st)
}
