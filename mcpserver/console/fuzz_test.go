package console

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzLocalNext holds that where sign-in sends the browser is always a
// path of the console on this origin: never another host, scheme or a
// protocol-relative URL, whatever the form's next field says.
func FuzzLocalNext(f *testing.F) {
	for _, s := range []string{"/console/emails?status=failed", "//evil.example/console/", "https://evil.example/console/x", "/console/../x",
		"/\\evil.example", "/console/\t/x", "javascript:alert(1)", "/console/emails#x", "", "/console/%2F%2Fevil", "/console//evil.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := localNext(next)
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(got, Prefix) || strings.HasPrefix(got, "//") || strings.Contains(got, "\\") {
			t.Fatalf("localNext(%q) = %q", next, got)
		}
	})
}

// FuzzSegments holds that linking a record's steps.N references keeps its
// text whole and links only references to steps the run has.
func FuzzSegments(f *testing.F) {
	for _, s := range []string{"uses steps.0.response.body.id and steps.7", "steps.99999999999999999999", "steps.", "", "xsteps.1steps.2"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		var b strings.Builder
		for _, seg := range segments(s, n) {
			b.WriteString(seg.Text)
			if seg.Step >= 0 && (seg.Step >= n || !strings.HasPrefix(seg.Text, "steps.")) {
				t.Fatalf("segments(%q, %d) links %q to step %d", s, n, seg.Text, seg.Step)
			}
		}
		if b.String() != s {
			t.Fatalf("segments(%q, %d) rejoin as %q", s, n, b.String())
		}
	})
}

// FuzzContentDisposition holds that a download's Content-Disposition is
// one header value that says attachment, whatever the file's name: no
// line break or control byte, a plain name that cannot end its quotes or
// start a parameter, and a filename* that decodes back to the name.
func FuzzContentDisposition(f *testing.F) {
	for _, s := range []string{"nota.pdf", "fatura\"; x=1\u202e.html", "a\r\nSet-Cookie: x=1", "çà ü.txt", "\\\"", "", "\xff\xfe.bin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := contentDisposition(name)
		plain, exact, ok := strings.Cut(strings.TrimPrefix(got, `attachment; filename="`), `"; filename*=UTF-8''`)
		if !ok || !strings.HasPrefix(got, `attachment; filename="`) || strings.ContainsAny(plain, "\";\\") {
			t.Fatalf("contentDisposition(%q) = %q", name, got)
		}
		for _, b := range []byte(got) {
			if b < 0x20 || b >= 0x7f {
				t.Fatalf("contentDisposition(%q) = %q holds byte %#x", name, got, b)
			}
		}
		if back, err := url.PathUnescape(exact); err != nil || back != name {
			t.Fatalf("contentDisposition(%q): filename* %q decodes to %q (%v)", name, exact, back, err)
		}
	})
}
