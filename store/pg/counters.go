package pg

import (
	"context"
	"fmt"
)

// NextNumber implements store.Counters: the next number of a workspace's
// counter is start the first time (or whenever start is above the last
// number handed out), one more than the last number otherwise. It is one
// statement, so numbers are
// unique across every replica sharing the database, with no lock held by
// the caller (a product's in-process mutex does not span replicas). A
// statement that may have reached the server is not sent again, since a
// lost answer would skip a number.
func (s *Store) NextNumber(ctx context.Context, workspace, name string, start int64) (int64, error) {
	var n int64
	err := retry(ctx, false, func() error {
		return s.pool.QueryRow(ctx, `INSERT INTO counters (workspace_id, name, value) VALUES ($1, $2, $3)
			ON CONFLICT (workspace_id, name) DO UPDATE SET value = GREATEST(counters.value + 1, excluded.value)
			RETURNING value`, workspace, name, start).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("pg: counter %s: %w", name, err)
	}
	return n, nil
}
