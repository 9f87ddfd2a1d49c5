package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/resolve/eml"
)

// attachmentCSP is the policy of a downloaded attachment, should a browser
// show it anyway: nothing of it runs or loads.
const attachmentCSP = "default-src 'none'; sandbox"

// attachment serves one attachment of an e-mail the person may read
// (emails_get says so first, as for its page) as a download: always
// application/octet-stream and Content-Disposition: attachment, so a
// stranger's HTML or SVG never renders on the console's origin, with the
// file name the page shows and its exact size.
func (c *Console) attachment(w http.ResponseWriter, r *http.Request, s *session) {
	var e inbox.Email
	if err := c.call(r, s, inboxmcp.ToolEmailsGet, inboxmcp.EmailIDArg{ID: r.PathValue("id")}, &e); err != nil {
		c.fail(w, r, s, err)
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	var info *inbox.AttachmentInfo
	for i := range e.Attachments {
		if err == nil && e.Attachments[i].Index == n {
			info = &e.Attachments[i]
		}
	}
	if info == nil {
		c.message(w, r, s, http.StatusNotFound, "This e-mail has no such attachment.")
		return
	}
	if e.Purged || c.messages == nil {
		c.message(w, r, s, http.StatusGone, "This e-mail's raw message is no longer kept, and its attachments with it.")
		return
	}
	msg, err := c.messages.OpenMessage(r.Context(), s.principal.Workspace, e.ID)
	if errors.Is(err, inbox.ErrPurged) {
		c.message(w, r, s, http.StatusGone, "This e-mail's raw message is no longer kept, and its attachments with it.")
		return
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: attachment", "email", e.ID, "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The raw message cannot be read right now; try again.")
		return
	}
	defer msg.Close()
	m, err := eml.New(msg, msg.Size())
	var body io.ReadCloser
	var a eml.Attachment
	if err == nil {
		if a, err = m.Attachment(n); err == nil {
			body, err = m.Open(n)
		}
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: attachment", "email", e.ID, "index", n, "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The attachment cannot be read from the raw message.")
		return
	}
	defer body.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", contentDisposition(a.Filename))
	h.Set("Content-Security-Policy", attachmentCSP)
	h.Set("Content-Length", strconv.FormatInt(a.Size, 10))
	if _, err := io.Copy(w, body); err != nil {
		// The stream stops before its last byte: the browser sees a
		// download cut short, never a complete-looking one.
		c.log.ErrorContext(r.Context(), "console: attachment", "email", e.ID, "index", n, "error", err)
	}
}

// contentDisposition is the Content-Disposition of a download named name:
// an attachment, with a plain-ASCII filename (every other byte, and any
// quote, semicolon or backslash, as "_") for old clients and the exact name as
// filename* (RFC 6266, RFC 8187), percent-encoded.
func contentDisposition(name string) string {
	var plain, exact strings.Builder
	for _, r := range name {
		if r < 0x80 && r >= 0x20 && r != '"' && r != ';' && r != '\\' && r != 0x7f {
			plain.WriteRune(r)
		} else {
			plain.WriteByte('_')
		}
	}
	for _, b := range []byte(name) {
		if b < 0x80 && (b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || strings.IndexByte("!#$&+-.^_`|~", b) >= 0) {
			exact.WriteByte(b)
		} else {
			fmt.Fprintf(&exact, "%%%02X", b)
		}
	}
	return `attachment; filename="` + plain.String() + `"; filename*=UTF-8''` + exact.String()
}
