package intake

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kobana/workflow/resolve/eml"
)

func TestHTMLText(t *testing.T) {
	in := `<html><head><title>Fatura</title><style>p{color:red}</style></head><body>
<h1>Fatura   nº 42</h1><p>Valor:&nbsp;R$&nbsp;1.250,50 &amp; juros</p><script>alert(1)</script>
<div>Vencimento<br>amanhã</div><ul><li>item 1</li><li>item 2</li></ul></body></html>`
	got := htmlText(strings.NewReader(in))
	want := "Fatura nº 42\nValor: R$ 1.250,50 & juros\nVencimento\namanhã\nitem 1\nitem 2"
	if got != want {
		t.Fatalf("htmlText =\n%q\nwant\n%q", got, want)
	}
}

func TestHTMLBodyOnlyWithoutText(t *testing.T) {
	msg := "From: a@b.test\r\nContent-Type: multipart/alternative; boundary=x\r\n\r\n--x\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>A=E7=E3o <b>pendente</b></p>\r\n--x--\r\n"
	ix, err := eml.ReadIndex(strings.NewReader(msg), int64(len(msg)))
	if err != nil {
		t.Fatal(err)
	}
	if got := htmlBody(strings.NewReader(msg), ix); got != "Ação pendente" {
		t.Fatalf("htmlBody = %q, want the decoded text", got)
	}
}

// FuzzHTMLText: any HTML (an e-mail's body is the sender's) gives text of
// bounded length, valid UTF-8 when the HTML was, without the contents of
// scripts and styles.
func FuzzHTMLText(f *testing.F) {
	f.Add("<p>a</p><script>secret()</script><style>x{}</style>b<br>c")
	f.Add("<div><p>&amp;&lt;&#x41;&nbsp;</div>")
	f.Add("<script><script>nested</script>after")
	f.Add(strings.Repeat("<p>word ", 3000))
	f.Fuzz(func(t *testing.T, in string) {
		out := htmlText(strings.NewReader(in))
		if len(out) > maxText {
			t.Fatalf("%d bytes of text, the cap is %d", len(out), maxText)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid UTF-8 in: %q", out)
		}
		marked := htmlText(strings.NewReader("<script>MARKER" + strings.ReplaceAll(in, "<", "") + "</script>x"))
		if strings.Contains(marked, "MARKER") {
			t.Fatalf("a script's text reached the output: %q", marked)
		}
	})
}
