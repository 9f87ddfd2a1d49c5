package emit_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/resolve"
)

// TestLinterWarnsExactlyAboutWhatIsEncoded: for every printable ASCII
// character and some non-ASCII ones in a literal url, the linter warns
// (url-unencoded) exactly when the URL sent differs from the text written.
func TestLinterWarnsExactlyAboutWhatIsEncoded(t *testing.T) {
	t.Parallel()
	var chars []string
	for c := 0x20; c < 0x7f; c++ {
		if c != '"' && c != '\\' {
			chars = append(chars, string(rune(c)))
		}
	}
	chars = append(chars, `\"`, `\\`, "é", "€", "𝄞", "%4", "%zz", "%41")
	for _, ch := range chars {
		doc := `{"result":1,"workflow":[{"type":"request","url":"https://a.example/p` + ch + `q"}]}`
		p, ds := compile.Compile([]byte(doc), compile.Options{})
		if p == nil {
			if ch != "#" && ch != "?" {
				t.Errorf("%q: does not compile: %v", ch, ds)
			}
			continue
		}
		warned := len(ds) == 1 && ds[0].Code == compile.CodeURLUnencoded
		if len(ds) > 0 && !warned {
			t.Errorf("%q: %v", ch, ds)
		}
		s := &resolve.Scope{}
		s.Begin(0, time.Unix(0, 0))
		r, err := emit.Render(p.Steps[0], s)
		if err != nil {
			t.Errorf("%q: %v", ch, err)
			continue
		}
		written := strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace("https://a.example/p" + ch + "q")
		changed := r.URL.String() != written && !strings.Contains(written, "#")
		if changed != warned {
			t.Errorf("%q: sent as %q, written %q, linter warned: %v", ch, r.URL, written, warned)
		}
		if !utf8.ValidString(r.Record.URL) {
			t.Errorf("%q: record %q", ch, r.Record.URL)
		}
	}
}

// TestLinterNamesTheHostSent: for a non-ASCII host in a url with
// placeholders, the linter's warning names the host emit sends, in its
// punycode form, never a percent-encoding of it.
func TestLinterNamesTheHostSent(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"https://bücher.example/${{kobana.inbox_id}}",
		"https://fatura.açaí.example:8443/v1/${{kobana.inbox_id}}?q=ç",
		"https://${{kobana.inbox_id}}.bücher.example/x",
	} {
		doc := `{"result":1,"workflow":[{"type":"request","url":"` + url + `"}]}`
		p, ds := compile.Compile([]byte(doc), compile.Options{})
		if p == nil || len(ds) != 1 || ds[0].Code != compile.CodeURLUnencoded {
			t.Fatalf("%s: %v", url, ds)
		}
		s := &resolve.Scope{Facts: resolve.FactMap{"inbox_id": "ibx1"}}
		s.Begin(0, time.Unix(0, 0))
		r, err := emit.Render(p.Steps[0], s)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		msg := ds[0].Message
		if strings.Contains(msg, "percent-encoded") || !strings.Contains(msg, "punycode") {
			t.Errorf("%s: sent to host %s, the linter says %q", url, r.URL.Host, msg)
		}
		if !strings.Contains(url, "${{kobana.inbox_id}}.") && !strings.Contains(msg, "sent as "+r.URL.Host) {
			t.Errorf("%s: sent to host %s, the linter says %q", url, r.URL.Host, msg)
		}
	}
}

// TestHeaderInjectionIsTyped: a header value that would inject headers
// fails with an *Error wrapping ErrHeaderValue, which callers branch on
// (the dry run names the reason header-injection).
func TestHeaderInjectionIsTyped(t *testing.T) {
	t.Parallel()
	p, ds := compile.Compile([]byte(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","headers":{"X-Note":"${{kobana.email_message_id}}"}}]}`), compile.Options{})
	if p == nil {
		t.Fatal(ds)
	}
	s := &resolve.Scope{Facts: resolve.FactMap{"email_message_id": "hi\r\nX-Evil: 1"}}
	s.Begin(0, time.Unix(0, 0))
	_, err := emit.Render(p.Steps[0], s)
	var ee *emit.Error
	if !errors.Is(err, emit.ErrHeaderValue) || !errors.As(err, &ee) || ee.Field != "header X-Note" {
		t.Errorf("err = %v", err)
	}
}
