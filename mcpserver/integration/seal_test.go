package integration_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// TestSecretsMoveBetweenStores: a sealed secret copied as it is stored (a
// migration from the embedded store to PostgreSQL, or back) opens in the
// other store given the same key, and in neither under another key or
// another workspace.
func TestSecretsMoveBetweenStores(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{0x5a}, store.SecretKeySize)
	other := bytes.Repeat([]byte{0xa5}, store.SecretKeySize)
	dir := t.TempDir()
	litePath := filepath.Join(dir, "kobana.db")
	lite, err := sqlite.Open(ctx, litePath, store.Options{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	dsn, schema := pgtest.SchemaDSN(t, "seal", "seal")
	pgs := openPG(t, dsn, pg.Options{Options: store.Options{SecretKey: key}})
	admin := pgtest.Admin(t)

	// The rows as stored, read and written beside the stores.
	raw, err := sql.Open("sqlite", "file:"+litePath)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	sealedInSQLite := func(ws, name string) []byte {
		t.Helper()
		var b []byte
		if err := raw.QueryRow(`SELECT sealed FROM secrets WHERE workspace_id = $1 AND name = $2`, ws, name).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	sealedInPG := func(ws, name string) []byte {
		t.Helper()
		var b []byte
		if err := admin.QueryRow(ctx, `SELECT sealed FROM `+schema+`.secrets WHERE workspace_id = $1 AND name = $2`, ws, name).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}

	// SQLite → PostgreSQL.
	const v1 = "sk_live_from_sqlite é\x00"
	if err := lite.SetSecret(ctx, "w1", "ERP_TOKEN", v1); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `INSERT INTO `+schema+`.secrets (workspace_id, name, sealed, updated_at) VALUES ($1, $2, $3, 1)`,
		"w1", "ERP_TOKEN", sealedInSQLite("w1", "ERP_TOKEN")); err != nil {
		t.Fatal(err)
	}
	if got, err := pgs.RevealSecrets(ctx, "w1"); err != nil || got["ERP_TOKEN"] != v1 {
		t.Errorf("PostgreSQL reveals the SQLite-sealed secret as %q, %v; want %q", got["ERP_TOKEN"], err, v1)
	}

	// PostgreSQL → SQLite.
	const v2 = "sealed by postgres"
	if err := pgs.SetSecret(ctx, "w2", "API_KEY", v2); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO secrets (workspace_id, name, sealed, updated_at) VALUES ($1, $2, $3, 1)`,
		"w2", "API_KEY", sealedInPG("w2", "API_KEY")); err != nil {
		t.Fatal(err)
	}
	if got, err := lite.RevealSecrets(ctx, "w2"); err != nil || got["API_KEY"] != v2 {
		t.Errorf("SQLite reveals the PostgreSQL-sealed secret as %q, %v; want %q", got["API_KEY"], err, v2)
	}

	// The workspace and name are bound: moved under another name, it does
	// not open (and the error does not show the value).
	if _, err := raw.Exec(`INSERT INTO secrets (workspace_id, name, sealed, updated_at) VALUES ('w2', 'RENAMED', $1, 1)`, sealedInPG("w2", "API_KEY")); err != nil {
		t.Fatal(err)
	}
	if got, err := lite.RevealSecrets(ctx, "w2"); !errors.Is(err, store.ErrUnsealable) || got != nil {
		t.Errorf("a sealed value under another name: %v %v, want ErrUnsealable", got, err)
	} else if bytes.Contains([]byte(err.Error()), []byte(v2)) {
		t.Errorf("the error shows the value: %v", err)
	}

	// Another key opens neither.
	pgOther := openPG(t, dsn, pg.Options{Options: store.Options{SecretKey: other}})
	if _, err := pgOther.RevealSecrets(ctx, "w1"); !errors.Is(err, store.ErrUnsealable) {
		t.Errorf("PostgreSQL under another key: %v, want ErrUnsealable", err)
	}
	liteOther, err := sqlite.Open(ctx, litePath, store.Options{SecretKey: other})
	if err != nil {
		t.Fatal(err)
	}
	defer liteOther.Close()
	if _, err := liteOther.RevealSecrets(ctx, "w1"); !errors.Is(err, store.ErrUnsealable) {
		t.Errorf("SQLite under another key: %v, want ErrUnsealable", err)
	}
}
