// Package mailstore keeps the raw messages (.eml) the Inbox receives, outside
// the records: durably before the sender is told 250, readable in ranges so a
// 25 MiB message is never loaded into memory, and deletable for retention.
//
// Entry points:
//
//   - Store is the one interface everything that handles raw messages uses:
//     the intake (NewSpool, Prepare before the records' transaction, KeepTx
//     inside it, Sweep at start), the pipeline and the MCP product
//     (OpenMessage, DeleteMessage: the domain's inbox.Messages), retention
//     (Stored, PurgeTx). Dir and LargeObjects are its two implementations;
//     WithBlobs adds the messages a store keeps as blobs (the demo's).
//   - Spool is an incoming message while it arrives: held in memory while
//     small (SpoolMemoryBytes each, SpoolsMemoryBytes for the process), in a
//     temporary file beyond; it reads back as an io.ReaderAt so the intake
//     can check and parse it before deciding. A spool is never durable.
//   - Incoming is a message as it is kept: the trace fields the server
//     prepends (Return-Path, Received, Authentication-Results), then the
//     message byte for byte as received.
//   - Dir stores messages as files under a data directory (the embedded
//     default): Keep writes the file under its final name and syncs it and
//     its directory together (more names for the same message are links),
//     Open returns a read-only snapshot, Delete purges.
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
//     rewritten, and a purge does not reach a message already open).
//
// Errors: ErrNotFound when a message is absent (never stored, or purged;
// such errors match inbox.ErrPurged too);
// ErrTooLarge when a spool passes its limit; *NameError for a workspace or id
// that cannot name a stored message. Match them with errors.Is / errors.As.
package mailstore
