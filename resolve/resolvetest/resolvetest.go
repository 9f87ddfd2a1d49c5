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
	// Err, when set, fails the stream after FailAt bytes, the way a
	// message that goes away while it is being sent does.
	Err    error
	FailAt int64
}

// Attachments is a resolve.Attachments over files in memory. Opens counts
// the streams opened, so tests can prove nothing was read. Gone, when set,
// makes Check and Open fail with it (a purged message).
type Attachments struct {
	Files []File
	Opens int
	Gone  error
}

// Check implements resolve.Attachments.
func (a *Attachments) Check(i int) error {
	if i < 0 || i >= len(a.Files) {
		return &eml.IndexError{Index: i, Count: len(a.Files)}
	}
	return a.Gone
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
	if a.Gone != nil {
		return nil, a.Gone
	}
	a.Opens++
	f := a.Files[i]
	if f.Err != nil {
		return io.NopCloser(io.MultiReader(bytes.NewReader(f.Data[:f.FailAt]), failing{f.Err})), nil
	}
	return io.NopCloser(bytes.NewReader(f.Data)), nil
}

type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }

// FailingSecrets is a secret source whose every lookup fails with Err.
type FailingSecrets struct{ Err error }

// Secret implements resolve.Secrets.
func (f FailingSecrets) Secret(string) (string, bool, error) {
	if f.Err == nil {
		return "", false, errors.New("secret store unavailable")
	}
	return "", false, f.Err
}
