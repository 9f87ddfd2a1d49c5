// Package txtdns is a DNS server on loopback that answers TXT queries from
// a fixed table and "no such name" for names it does not hold: the SPF and
// DMARC records of the demo's sender, and of the tests' senders.
//
// Entry point: Start.
package txtdns
