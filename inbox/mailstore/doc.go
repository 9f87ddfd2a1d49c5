// Package mailstore keeps the raw messages (.eml) the Inbox receives, outside
// the records: durably before the sender is told 250, readable in ranges so a
// 25 MiB message is never loaded into memory, and deletable for retention.
//
// Entry points:
//
//   - Spool is the temporary file an incoming message is written into while
//     it arrives (size counted; SHA256 reads it back); it reads back as
//     an io.ReaderAt so the intake can parse it before deciding.
//   - Dir stores messages as files under a data directory (the embedded
//     default): Keep links a spool into place and syncs the file and its
//     directory together, Open returns a read-only snapshot, Delete purges.
//   - LargeObjects stores messages as PostgreSQL large objects (replicas
//     sharing one database): KeepTx writes the object and its row inside the
//     caller's transaction, so the message, the e-mail record and its first
//     job commit or vanish together. Reads are ranged (lo_get), one query per
//     range, inside a read-only REPEATABLE READ transaction that makes an open
//     message one snapshot (a purge committed meanwhile does not reach it).
//     Each open snapshot holds a pooled connection; at most half the pool is
//     held so (Open waits for a Close), so their holders can still write.
//   - Message is what Open returns, the domain's inbox.Message: io.ReaderAt
//     plus Size and Close, one consistent snapshot (a stored message is never
//     rewritten, and a purge does not reach a message already open). Dir and
//     LargeObjects are the domain's inbox.Messages (OpenMessage,
//     DeleteMessage), for the executor and the MCP product.
//
// Errors: ErrNotFound when a message is absent (never stored, or purged;
// such errors match inbox.ErrPurged too);
// ErrTooLarge when a spool passes its limit; *NameError for a workspace or id
// that cannot name a stored message. Match them with errors.Is / errors.As.
package mailstore
