// Package jsonrpc reads and writes JSON-RPC 2.0 messages framed the way the
// Language Server Protocol's base protocol frames them: a header block with
// Content-Length, a blank line, and that many bytes of JSON.
//
// Conn is the entry point: Read returns the next Message, Reply and Notify
// write one. Writes are safe from several goroutines; reads are not.
package jsonrpc
