// Package minipdf writes the small, valid PDF files the demo and the
// examples attach to their e-mails: a header, numbered objects, the
// cross-reference table and the trailer, byte for byte the same for the
// same objects (what a generated example file needs). Billing's documents,
// which need layout, use fpdf instead.
//
// Entry point: Write.
package minipdf
