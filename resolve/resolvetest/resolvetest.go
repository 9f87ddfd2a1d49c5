// Package resolvetest provides in-memory sources for tests of code that
// resolves workflow references: attachments held in memory, and a secret
// source that fails.
package resolvetest

import (
	"bytes"
	"errors"
	"io"

	"github.com/kobana/workflow/resolve/eml"
)

// File is an attachment held in memory.
type File struct {
	Filename    string
	ContentType string
	Data        []byte
}

// Attachments is a resolve.Attachments over files in memory. Opens counts
// the streams opened, so tests can prove nothing was read.
type Attachments struct {
	Files []File
	Opens int
}

// Len implements resolve.Attachments.
func (a *Attachments) Len() int { return len(a.Files) }

// Attachment implements resolve.Attachments.
func (a *Attachments) Attachment(i int) (eml.Attachment, error) {
	if i < 0 || i >= len(a.Files) {
		return eml.Attachment{}, &eml.IndexError{Index: i, Count: len(a.Files)}
	}
	f := a.Files[i]
	return eml.Attachment{Index: i, Filename: f.Filename, ContentType: f.ContentType, Size: int64(len(f.Data))}, nil
}

// Open implements resolve.Attachments.
func (a *Attachments) Open(i int) (io.ReadCloser, error) {
	if i < 0 || i >= len(a.Files) {
		return nil, &eml.IndexError{Index: i, Count: len(a.Files)}
	}
	a.Opens++
	return io.NopCloser(bytes.NewReader(a.Files[i].Data)), nil
}

// FailingSecrets is a secret source whose every lookup fails with Err.
type FailingSecrets struct{ Err error }

// Secret implements resolve.Secrets.
func (f FailingSecrets) Secret(string) (string, bool, error) {
	if f.Err == nil {
		return "", false, errors.New("secret store unavailable")
	}
	return "", false, f.Err
}
