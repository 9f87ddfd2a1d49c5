// Package queue is the Inbox pipeline's job queue: River
// (github.com/riverqueue/river) on the same database as the store, so a
// stage's records and the job that follows them commit in one transaction.
//
// Entry points:
//
//   - OpenSQLite opens River on the embedded store's write handle (one
//     connection, as River's SQLite driver asks; store.SQLDB), OpenPostgres
//     on the PostgreSQL pool every replica shares (pg.Store.PgxPool). Both
//     run River's migrations first.
//   - The job arguments of the stages: AgentArgs (an e-mail was received or is
//     reprocessed: run its agent), WorkflowArgs (an agent run has a workflow:
//     run it), WebhookArgs (deliver one event to one webhook), RetentionArgs
//     (purge raw messages past the workspace's retention). Each names the
//     records it works on by id and declares its queue, attempts and
//     uniqueness.
//   - Queue.InsertTx enqueues inside the caller's transaction (a store.Tx,
//     or the driver's *sql.Tx / pgx.Tx); CompleteTx marks a running job completed
//     inside the worker's transaction, so its records and its completion
//     commit together.
//   - Queue.Workers is the registry the pipeline adds its workers to (with
//     river.AddWorker) before Start; Stop drains running jobs. Working says
//     whether this process works jobs (an insert-only queue has no periodic
//     jobs).
//   - Queue.RescueAbandoned makes the jobs a stopped process left running
//     available at once, for the one process working an embedded store's
//     queue at its start (replicas leave it to River's rescuer).
//
// River runs a job at least once. The stages make that effectively once:
// jobs are unique by the ids they carry (a second insert of the same stage
// for the same record is skipped), workers look for the record their job
// would write before writing it, and a worker completes its job in the
// transaction that writes its records. See docs/pipeline.md.
package queue
