package intake

import (
	"io"
	"strings"

	"golang.org/x/net/html"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve/eml"
)

// maxText caps the text kept from an HTML body (as the domain caps a text
// body).
const maxText = 64 << 10

// htmlBody returns the text of a message's first inline text/html part (for
// messages without a text/plain one), "" when it has none.
func htmlBody(r io.ReaderAt, ix *eml.Index) string {
	p, ok := inbox.FirstPart(ix, "text/html")
	if !ok {
		return ""
	}
	return htmlText(io.LimitReader(inbox.PartText(r, p), 4*maxText))
}

// blockTags end a line of text.
var blockTags = map[string]bool{
	"p": true, "div": true, "br": true, "tr": true, "li": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "table": true, "ul": true, "ol": true, "blockquote": true,
	"pre": true, "hr": true, "section": true, "article": true, "header": true, "footer": true,
}

// htmlText turns HTML into plain text: the text nodes, entities decoded,
// whitespace collapsed, a line break at each block element, nothing of
// scripts, styles or the head.
func htmlText(r io.Reader) string {
	z := html.NewTokenizer(r)
	var b strings.Builder
	skip := 0
	pendingSpace := false
	newline := func() {
		s := b.String()
		if s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
		pendingSpace = false
	}
	for b.Len() < maxText {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch t := string(name); {
			case t == "script" || t == "style" || t == "head" || t == "title":
				skip++
			case blockTags[t]:
				newline()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch t := string(name); {
			case t == "script" || t == "style" || t == "head" || t == "title":
				if skip > 0 {
					skip--
				}
			case blockTags[t]:
				newline()
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for _, w := range strings.Fields(string(z.Text())) {
				s := b.String()
				if pendingSpace || (s != "" && !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, " ")) {
					if s != "" && !strings.HasSuffix(s, "\n") {
						b.WriteByte(' ')
					}
				}
				b.WriteString(w)
				pendingSpace = false
			}
		}
	}
	s := b.String()
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "")
	}
	return strings.TrimSpace(s)
}
