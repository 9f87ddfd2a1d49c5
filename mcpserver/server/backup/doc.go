// Package backup copies a running embedded store for safekeeping, and
// checks a copy: the database (one consistent snapshot, store/sqlite's
// Backup), the raw messages beside it, and a manifest that names the secret
// key the copy's sealed secrets need by its fingerprint — never the key
// itself, which stays outside the backup (KOBANA_SECRET_KEY).
//
// Entry points: Backup writes a backup directory while the server runs;
// Verify checks one (the key opens its secrets, every e-mail's raw message
// is there and reads back with the size recorded); Manifest is what a
// backup says of itself (manifest.json). A PostgreSQL store is backed up
// with pg_dump, large objects included (see docs/operations.md).
package backup
