package queue

import "context"

// RescueOnce runs one pass of the lease rescue (PostgreSQL) as replica id.
func (q *Queue) RescueOnce(ctx context.Context, id string) {
	q.leases.id = id
	q.leases.rescue(ctx)
}
