// Package groupcommit commits the writes of callers that arrive at the same
// time in shared transactions (group commit): one commit — one sync of the
// database's log, one round of its locks — then serves many writers, as a
// busy server makes them, while a writer alone commits alone, at once. Each
// write still commits whole or not at all, a caller returns only once its
// write is durable, and one write's failure is never another's.
//
// The intake commits the records of concurrent SMTP deliveries with it, the
// pipeline its stages' writes.
//
// Entry point: Committer.Do.
package groupcommit
