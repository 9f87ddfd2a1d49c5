package billing

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// racingStore plays another replica that claims the invoice's next NF-e
// right after this one listed the invoice's NF-e and found none live.
type racingStore struct {
	*sqlite.Store
	invoice string
	claimed bool
}

func (s *racingStore) ListPage(ctx context.Context, org, kind string, q store.Query) (store.Page, error) {
	page, err := s.Store.ListPage(ctx, org, kind, q)
	if err == nil && kind == KindNFe && q.Parent == s.invoice && !s.claimed {
		s.claimed = true
		// The other replica saw the same history, so it claims the same id.
		id := "nfe_" + strings.TrimPrefix(s.invoice, "inv_") + "_" + strconv.Itoa(len(page.Records)+1)
		err = s.Store.CreateRecord(ctx, store.Record{Workspace: org, Kind: KindNFe, ID: id, Parent: s.invoice, Status: NFePending, Data: []byte(`{}`)})
	}
	return page, err
}

// The claim, not the listing, decides: when another replica claims the
// invoice's next NF-e between this one's check and its write, this one
// refuses, writes nothing and takes no number.
func TestEmitLosesTheClaimRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sql, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "race.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sql.Close()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := SeedDemo(ctx, sql, now); err != nil {
		t.Fatal(err)
	}
	st := &racingStore{Store: sql, invoice: "inv_1011"}
	_, p, err := New(Options{Store: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	org, _ := p.organization(ctx, demo.Organization)
	before, err := sql.NextNumber(ctx, demo.Organization, "nfe_series_"+strconv.Itoa(org.NFeSeries), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &mcpserver.Caller{Principal: store.Principal{Organization: demo.Organization}}
	_, err = p.emit(ctx, c, "inv_1011")
	var te *mcpserver.ToolError
	if !errors.As(err, &te) || te.Code != "nfe_exists" || !strings.Contains(te.Message, "being issued") {
		t.Fatalf("emit = %v, want nfe_exists (being issued)", err)
	}
	recs, _ := sql.ListRecords(ctx, demo.Organization, KindNFe, store.Query{Parent: "inv_1011"})
	if len(recs) != 1 || string(recs[0].Data) != `{}` {
		t.Errorf("the loser wrote an NF-e: %+v", recs)
	}
	after, _ := sql.NextNumber(ctx, demo.Organization, "nfe_series_"+strconv.Itoa(org.NFeSeries), 0)
	if after != before+1 {
		t.Errorf("the loser took a number: %d then %d", before, after)
	}
}
