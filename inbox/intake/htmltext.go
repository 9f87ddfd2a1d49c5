package intake

import (
	"io"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// maxText caps the text kept from an HTML body (as the domain caps a text
// body).
const maxText = 64 << 10

// htmlBody returns the text of a message's first text/html part (for
// messages without a text/plain one), "" when it has none or it cannot be
// read.
func htmlBody(r io.Reader) string {
	mr, err := mail.CreateReader(r)
	if err != nil && !(message.IsUnknownCharset(err) && mr != nil) {
		return ""
	}
	for {
		part, err := mr.NextPart()
		if err != nil && !(message.IsUnknownCharset(err) && part != nil) {
			// (a part in a charset go-message does not decode comes with
			// its bytes undecoded: decoded below)
			return ""
		}
		ih, ok := part.Header.(*mail.InlineHeader)
		if !ok {
			continue
		}
		ct, params, _ := ih.ContentType()
		if ct != "text/html" {
			continue
		}
		body := io.Reader(part.Body)
		if cs := params["charset"]; cs != "" {
			if dec, err := charset.NewReaderLabel(cs, body); err == nil {
				body = dec
			}
		}
		return htmlText(io.LimitReader(body, 4*maxText))
	}
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
