package pipeline_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// Three replicas on one PostgreSQL database, 100 e-mails sent to all of
// them (each to one replica, in turn): each e-mail is processed once and
// each workflow runs once, whichever replica takes each stage.
func TestThreeReplicasProcessEachEmailOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ctx := t.Context()
	dsn, schema := pgtest.SchemaDSN(t, "replicas", "pipeline-replicas")
	recv := newReceiver(t)
	st, err := pg.Open(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seedRecords(t, ctx, st, recv)

	var servers []*server
	for i := range 3 {
		servers = append(servers, startServer(t, serverConfig{DB: dsn, Postgres: true, Data: t.TempDir(), Replica: fmt.Sprintf("replica-%d", i)}))
	}
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := send(servers[i%len(servers)].addr, uniqueEmail(i)); err != nil {
				errs <- fmt.Errorf("message %d to replica %d: %w", i, i%len(servers), err)
			}
		}()
		if i%10 == 9 {
			wg.Wait() // ten connections at a time
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	repo := inbox.NewRepo(st)
	var emails []inbox.Email
	err = testwait.Until(120*time.Second, func() error {
		emails, err = repo.Emails.All(ctx, testWS, store.Query{})
		if err != nil {
			return err
		}
		pending := 0
		for _, e := range emails {
			if e.Status == inbox.EmailPending {
				pending++
			}
		}
		if len(emails) != n || pending > 0 {
			return fmt.Errorf("%d e-mails recorded, %d pending", len(emails), pending)
		}
		return nil
	})
	if err != nil {
		for i, s := range servers {
			t.Logf("replica %d:\n%s", i, s.output)
		}
		t.Fatal(err)
	}
	runs, err := repo.AgentRuns.All(ctx, testWS, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	wruns, err := repo.WorkflowRuns.All(ctx, testWS, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n || len(wruns) != n {
		t.Errorf("%d agent runs and %d workflow runs for %d e-mails", len(runs), len(wruns), n)
	}
	perEmail := map[string]int{}
	for _, r := range runs {
		perEmail[r.EmailID]++
	}
	for _, e := range emails {
		if e.Status != inbox.EmailProcessed || perEmail[e.ID] != 1 {
			t.Errorf("e-mail %s: %s (%s), %d agent runs", e.ID, e.Status, e.StatusDetail, perEmail[e.ID])
		}
		for _, path := range stepPaths {
			if got := recv.count(path, e.ID); got != 1 {
				t.Errorf("e-mail %s: the receiver got %s %d times, want once", e.ID, path, got)
			}
		}
	}
	// Which replica worked what (River records who attempted each job).
	rows, err := st.PgxPool().Query(ctx, `SELECT attempted_by[array_length(attempted_by, 1)], count(*) FROM `+schema+`.river_job WHERE kind IN ('inbox.agent', 'inbox.workflow') GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var who string
		var count int
		if err := rows.Scan(&who, &count); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s worked %d agent and workflow jobs", who, count)
	}
}
