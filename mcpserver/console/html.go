package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/resolve/eml"
)

// MaxHTMLBody caps the bytes of an e-mail's HTML body the frame serves;
// the rest is cut.
const MaxHTMLBody = 2 << 20

// frameCSP is the policy of the frame that shows an e-mail's HTML body:
// nothing is fetched (remote images only when the person asks), no script
// runs, no form is sent, and only the console may frame it. Inline styles
// stay: an e-mail's layout is made of them, and they reach nothing.
func frameCSP(remoteImages bool) string {
	img := "data:"
	if remoteImages {
		img = "data: https: http:"
	}
	return "default-src 'none'; style-src 'unsafe-inline'; img-src " + img + "; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox"
}

// htmlPart reads the message of an e-mail the person may read and finds
// its first inline text/html part; ok false when it has none or its raw
// message is gone.
func (c *Console) htmlPart(ctx context.Context, workspace, id string) (msg inbox.Message, part eml.Part, ok bool, err error) {
	if c.messages == nil {
		return nil, eml.Part{}, false, nil
	}
	msg, err = c.messages.OpenMessage(ctx, workspace, id)
	if errors.Is(err, inbox.ErrPurged) {
		return nil, eml.Part{}, false, nil
	}
	if err != nil {
		return nil, eml.Part{}, false, fmt.Errorf("console: the raw message of %s: %w", id, err)
	}
	m, err := eml.New(msg, msg.Size())
	if err != nil {
		msg.Close()
		return nil, eml.Part{}, false, nil // unreadable as MIME: the text body is what can be shown
	}
	part, ok = inbox.FirstPart(m.Index(), "text/html")
	if !ok {
		msg.Close()
		return nil, eml.Part{}, false, nil
	}
	return msg, part, true, nil
}

// hasHTML says whether an e-mail has an HTML body to frame.
func (c *Console) hasHTML(ctx context.Context, workspace, id string) (bool, error) {
	msg, _, ok, err := c.htmlPart(ctx, workspace, id)
	if ok {
		msg.Close()
	}
	return ok, err
}

// emailHTML serves an e-mail's HTML body, decoded to UTF-8, for the
// sandboxed frame of its page, under frameCSP. emails_get decides first
// whether the person may read the e-mail, as for its page.
func (c *Console) emailHTML(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	var e inbox.Email
	if err := c.call(r, s, inboxmcp.ToolEmailsGet, inboxmcp.EmailIDArg{ID: id}, &e); err != nil {
		c.fail(w, r, s, err)
		return
	}
	msg, part, ok, err := c.htmlPart(r.Context(), s.principal.Workspace, e.ID)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: html body", "email", e.ID, "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The raw message cannot be read right now; try again.")
		return
	}
	if !ok {
		c.message(w, r, s, http.StatusNotFound, "This e-mail has no HTML body.")
		return
	}
	defer msg.Close()
	body, err := io.ReadAll(io.LimitReader(inbox.PartText(msg, part), MaxHTMLBody))
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: html body", "email", e.ID, "error", err)
		c.message(w, r, s, http.StatusServiceUnavailable, "The raw message cannot be read right now; try again.")
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", frameCSP(r.URL.Query().Get("images") == "remote"))
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.Write(body)
}
