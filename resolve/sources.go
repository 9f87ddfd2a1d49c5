package resolve

import (
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve/eml"
)

// Secrets looks up workspace secrets by key. A source that can list every
// value should also implement SecretLister: a Redactor then hides from the
// records every secret of the workspace, not only those the run resolved.
type Secrets interface {
	// Secret returns the value of key and whether it exists. An error means
	// the source itself failed; the step then fails before sending.
	Secret(key string) (value string, ok bool, err error)
}

// SecretMap is a Secrets held in memory.
type SecretMap map[string]string

// Secret implements Secrets.
func (m SecretMap) Secret(key string) (string, bool, error) {
	v, ok := m[key]
	return v, ok, nil
}

// AllSecrets implements SecretLister.
func (m SecretMap) AllSecrets() map[string]string { return m }

// SecretLister is implemented by secret sources that can list every secret,
// so that redaction also covers secrets a run did not reference itself.
type SecretLister interface {
	AllSecrets() map[string]string
}

// Facts answers kobana.* references other than kobana.now, which the
// executor stamps when each step starts.
type Facts interface {
	// Fact returns the value of key (without the "kobana." prefix) and
	// whether it is defined for this run.
	Fact(key string) (value string, ok bool)
}

// FactMap is a Facts held in memory; an empty value counts as undefined.
type FactMap map[string]string

// Fact implements Facts.
func (m FactMap) Fact(key string) (string, bool) {
	v, ok := m[key]
	return v, ok && v != ""
}

// Envs are the values kobana.env may take.
var envs = []string{"development", "sandbox", "production"}

// CheckFact reports why a run may not be given the fact key (a kobana key
// without its "kobana." prefix) with value, or nil: the key must be known
// and not now (stamped when each step starts), and the value in the
// format the language fixes for it — env is development, sandbox or
// production; app_url an absolute http or https URL; inbox_email a bare
// address. The facts a person hands to kobana run, kobana plan or the
// playground are checked by it.
func CheckFact(key, value string) error {
	switch {
	case key == "now":
		return errors.New(`"now" cannot be set: kobana.now is stamped by the executor when each step starts`)
	case strings.HasPrefix(key, "kobana."):
		return fmt.Errorf("key %q: write the fact without the \"kobana.\" prefix, as %q", key, strings.TrimPrefix(key, "kobana."))
	case !lang.IsKobanaKey(key):
		var known []string
		for _, k := range lang.KobanaKeys() {
			if k != "now" {
				known = append(known, k)
			}
		}
		return fmt.Errorf("unknown fact %q; the facts are %s", key, strings.Join(known, ", "))
	case key == "env" && !slices.Contains(envs, value):
		return fmt.Errorf("fact \"env\" is %q; kobana.env is one of %s", value, strings.Join(envs, ", "))
	case key == "app_url" && !isBaseURL(value):
		return fmt.Errorf("fact \"app_url\" is %q; kobana.app_url is the platform's base URL, an absolute http or https URL such as https://app.kobana.com.br", value)
	case key == "inbox_email" && !isAddress(value):
		return fmt.Errorf("fact \"inbox_email\" is %q; kobana.inbox_email is the inbox's address, such as ap@inbox.example (no display name, no angle brackets)", value)
	}
	return nil
}

// isBaseURL reports whether s is an absolute http or https URL with a host.
func isBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == "" && u.User == nil
}

// isAddress reports whether s is a bare e-mail address (local@domain).
func isAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// Attachments is the triggering e-mail's attachments, over one snapshot of
// the e-mail held for the whole run; *eml.Message is one.
type Attachments interface {
	// Len returns how many attachments there are.
	Len() int
	// Attachment describes attachment i, or returns *eml.IndexError.
	Attachment(i int) (eml.Attachment, error)
	// Check reports whether attachment i can still be read as described,
	// cheaply; it is called right before a step that sends the attachment,
	// and an error (eml.ErrUnreadable, eml.ErrChanged) fails the step
	// before anything is sent.
	Check(i int) error
	// Open streams the decoded bytes of attachment i: exactly its Size
	// bytes. If they cannot all be read, a Read fails before the last byte
	// is returned.
	Open(i int) (io.ReadCloser, error)
}

// AttachmentsFunc opens the e-mail's attachments. The Scope calls it once
// per run and keeps what it returns for the run's life; if that is an
// io.Closer, Scope.Close closes it. Returning an error wrapping
// eml.ErrUnreadable says the e-mail can no longer be read (for example,
// purged by retention).
type AttachmentsFunc func() (Attachments, error)

// EMLFile returns an AttachmentsFunc reading the .eml file at path: the file
// is opened once, and stays open until the Scope is closed, so a run reads
// one snapshot of it.
func EMLFile(path string) AttachmentsFunc {
	return func() (Attachments, error) {
		m, err := eml.Open(path)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// EMLIndexed returns an AttachmentsFunc over a stored message read by byte
// ranges (size bytes at r: a file, a database large object read in one
// transaction) with the index computed when it arrived (eml.ReadIndex), so
// the run reads only the attachments it sends. Without an index, or with
// one that does not describe these bytes (eml.ErrBadIndex), the message's
// structure is read once instead. r stays the caller's to close.
func EMLIndexed(r io.ReaderAt, size int64, ix *eml.Index) AttachmentsFunc {
	return func() (Attachments, error) {
		if ix != nil {
			m, err := eml.NewIndexed(r, size, ix)
			if err == nil {
				return m, nil
			}
			if !errors.Is(err, eml.ErrBadIndex) {
				return nil, err
			}
		}
		m, err := eml.New(r, size)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
