package inbox_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"golang.org/x/net/html/charset"

	"github.com/kobana/workflow/mcpserver/inbox"
)

// goMessageText is the text body as go-message's mail reader finds it: the
// first inline text/plain part, charset decoded, as ReadEmail read it before
// it read the part index instead of parsing the message again.
func goMessageText(raw []byte) (string, bool) {
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) {
		return "", false
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return "", true
		}
		if err != nil && !(message.IsUnknownCharset(err) && part != nil) {
			return "", false
		}
		ih, ok := part.Header.(*mail.InlineHeader)
		if !ok {
			continue
		}
		ct, params, _ := ih.ContentType()
		if ct != "" && ct != "text/plain" {
			continue
		}
		body := io.Reader(part.Body)
		if label := params["charset"]; label != "" {
			if _, name := charset.Lookup(label); name != "" && name != "utf-8" {
				if dec, err := charset.NewReaderLabel(label, body); err == nil {
					body = dec
				}
			}
		}
		b, err := io.ReadAll(io.LimitReader(body, 64<<10))
		if err != nil {
			return "", false
		}
		return strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n")), true
	}
}

// Where the part index reads a message as RFC 2045/2046 say and go-message
// does not.
var betterThanGoMessage = map[string]string{
	// "Content-Type: text" has no subtype: not a media type, so the default
	// text/plain applies (go-message finds no text).
	"corpus/cpython/msg_14.txt": "Hi,\n\nI'm sorry",
	// The parts of a multipart/digest are messages by default (RFC 2046
	// 5.1.5): attached messages, not text (go-message reads the first one's
	// header as text).
	"corpus/cpython/msg_30.txt": "",
}

// ReadEmail finds the text body from the part index, as go-message's mail
// reader finds it, on every message of the attachment reader's corpus
// (Python's, enmime's, flanker's and this repository's own).
func TestReadEmailTextAgreesWithGoMessage(t *testing.T) {
	var files []string
	filepath.WalkDir("../../resolve/eml/testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".eml") || strings.HasSuffix(p, ".txt") && strings.Contains(p, "corpus")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 50 {
		t.Fatalf("found %d messages in the corpus", len(files))
	}
	compared := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := goMessageText(raw)
		if !ok {
			continue // go-message refuses it; ReadEmail may read it anyway
		}
		e, err := inbox.ParseEmail(raw)
		if err != nil {
			continue
		}
		compared++
		for name, text := range betterThanGoMessage {
			if strings.HasSuffix(filepath.ToSlash(f), name) {
				if !strings.HasPrefix(e.Text, text) || (text == "" && e.Text != "") {
					t.Errorf("%s: text %.80q, want it to start with %q", f, e.Text, text)
				}
				want = e.Text
			}
		}
		if e.Text != want {
			t.Errorf("%s: text %.80q, go-message reads %.80q", f, e.Text, want)
		}
	}
	if compared < 40 {
		t.Fatalf("compared %d messages, want the corpus", compared)
	}
}
