// Package opsdoc holds the tests that run what docs/operations.md tells an
// operator to do — its shell walk-through against a built kobana, and its
// systemd unit through systemd-analyze — so that the guide and the product
// cannot drift apart. It has no code of its own.
package opsdoc
