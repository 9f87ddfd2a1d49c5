package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BaseDSN returns the test database's connection string, or skips the test
// when KOBANA_TEST_POSTGRES is not set.
func BaseDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("KOBANA_TEST_POSTGRES")
	if dsn == "" {
		tb.Skip("KOBANA_TEST_POSTGRES is not set: PostgreSQL tests skipped (`source .ci/postgres` starts a throwaway cluster and sets it; see docs/postgres.md)")
	}
	return dsn
}

var (
	adminOnce sync.Once
	adminPool *pgxpool.Pool
	adminErr  error
)

// Admin returns a pool on the test database itself (no search_path), for
// creating schemas and inspecting or disturbing the server.
func Admin(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	dsn := BaseDSN(tb)
	adminOnce.Do(func() {
		adminPool, adminErr = pgxpool.New(context.Background(), dsn)
		if adminErr == nil {
			adminErr = adminPool.Ping(context.Background())
		}
	})
	if adminErr != nil {
		tb.Fatalf("connecting to KOBANA_TEST_POSTGRES: %v", adminErr)
	}
	return adminPool
}

// Endpoint is where a DSN's server listens: network "unix" or "tcp".
type Endpoint struct {
	Network, Address string
}

// ServerEndpoint returns where the test database's server listens.
func ServerEndpoint(tb testing.TB) Endpoint {
	tb.Helper()
	cfg, err := pgconn.ParseConfig(BaseDSN(tb))
	if err != nil {
		tb.Fatalf("KOBANA_TEST_POSTGRES: %v", err)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return Endpoint{"unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)}
	}
	return Endpoint{"tcp", cfg.Host + ":" + strconv.Itoa(int(cfg.Port))}
}

// DSN returns a keyword/value connection string for the test database's
// user and database, at host:port (the server's own when host is empty),
// with the given run-time parameters (search_path, application_name, …).
func DSN(tb testing.TB, host string, port uint16, params map[string]string) string {
	tb.Helper()
	cfg, err := pgconn.ParseConfig(BaseDSN(tb))
	if err != nil {
		tb.Fatalf("KOBANA_TEST_POSTGRES: %v", err)
	}
	if host == "" {
		host, port = cfg.Host, cfg.Port
	}
	kv := map[string]string{"host": host, "port": strconv.Itoa(int(port)), "user": cfg.User, "dbname": cfg.Database, "sslmode": "disable"}
	if cfg.Password != "" {
		kv["password"] = cfg.Password
	}
	if cfg.TLSConfig != nil {
		kv["sslmode"] = "require"
	}
	for k, v := range cfg.RuntimeParams {
		kv[k] = v
	}
	for k, v := range params {
		kv[k] = v
	}
	quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	var b strings.Builder
	for k, v := range kv {
		fmt.Fprintf(&b, "%s='%s' ", k, quote.Replace(v))
	}
	return strings.TrimSpace(b.String())
}

// FreshSchema creates an empty schema, dropped when the test ends, and
// returns its name.
func FreshSchema(tb testing.TB, prefix string) string {
	tb.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "t_" + prefix + "_" + hex.EncodeToString(b)
	pool := Admin(tb)
	if _, err := pool.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		tb.Fatalf("creating schema %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			tb.Errorf("dropping schema %s: %v", name, err)
		}
	})
	return name
}

// SchemaDSN returns a connection string on a fresh schema (see FreshSchema),
// naming its connections app.
func SchemaDSN(tb testing.TB, prefix, app string) (dsn, schema string) {
	tb.Helper()
	schema = FreshSchema(tb, prefix)
	return DSN(tb, "", 0, map[string]string{"search_path": schema, "application_name": app}), schema
}

// SchemaURL is SchemaDSN as a postgres:// URL, for what takes URLs only
// (kobana serve -db).
func SchemaURL(tb testing.TB, prefix, app string) string {
	tb.Helper()
	schema := FreshSchema(tb, prefix)
	cfg, err := pgconn.ParseConfig(BaseDSN(tb))
	if err != nil {
		tb.Fatalf("KOBANA_TEST_POSTGRES: %v", err)
	}
	q := url.Values{}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	q.Set("host", cfg.Host)
	q.Set("port", strconv.Itoa(int(cfg.Port)))
	q.Set("sslmode", "disable")
	if cfg.TLSConfig != nil {
		q.Set("sslmode", "require")
	}
	q.Set("search_path", schema)
	q.Set("application_name", app)
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u.String()
}
