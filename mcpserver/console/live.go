package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultLiveInterval is how often a live page's stream looks for changes.
const DefaultLiveInterval = 2 * time.Second

// liveLifetime ends a stream after a while; the browser's EventSource
// opens a new one (with the page's version), so a stream never outlives
// what the session allows by much.
const liveLifetime = 5 * time.Minute

// versionMarker stands in the layout for the version of the page's main
// content, filled in once the page is rendered.
const versionMarker = "@@console-version@@"

// livePages are the pages that refresh themselves: the lists. The pages
// of a run or an e-mail are live while something is under way (see
// liveData).
var livePages = map[string]bool{"emails": true, "deliveries": true, "webhooks": true, "webhook": true, "events": true}

// liveData is a page's data that says whether the page is live.
type liveData interface{ live() bool }

// isLive says whether a rendered page refreshes itself.
func isLive(page string, data any) bool {
	if l, ok := data.(liveData); ok {
		return l.live()
	}
	return livePages[page]
}

// mainOf is the content of a rendered page's main element.
func mainOf(page []byte) []byte {
	i := bytes.Index(page, []byte(`<main id="main"`))
	if i < 0 {
		return nil
	}
	j := bytes.IndexByte(page[i:], '>')
	k := bytes.LastIndex(page, []byte("</main>"))
	if j < 0 || k < i+j {
		return nil
	}
	return page[i+j+1 : k]
}

// version is the version of a page's main content: what a live page
// compares to see whether it changed.
func version(main []byte) string {
	sum := sha256.Sum256(main)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// stamp fills in the version of a rendered page.
func stamp(page []byte) []byte {
	return bytes.Replace(page, []byte(versionMarker), []byte(version(mainOf(page))), 1)
}

// capture is a ResponseWriter that keeps what a page handler answers.
type capture struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (c *capture) Header() http.Header { return c.header }
func (c *capture) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
}
func (c *capture) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	return c.body.Write(b)
}

// livePath is the console page a live stream watches: a GET page of the
// console, never the stream itself or a download.
func livePath(p string) (string, bool) {
	if p == "" || localNext(p) != p {
		return "", false
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", false
	}
	switch {
	case strings.HasPrefix(u.Path, Prefix+"live"), strings.HasPrefix(u.Path, Prefix+"static/"),
		strings.HasSuffix(u.Path, "/eml"), strings.HasSuffix(u.Path, "/html"), strings.Contains(u.Path, "/attachments/"):
		return "", false
	}
	return p, true
}

// look renders the watched page as the person's browser would get it,
// without counting as their use of the session, and returns its version;
// ok false when the page is no longer there for them (signed out, gone).
func (c *Console) look(r *http.Request, pages http.Handler, path string) (string, bool) {
	ctx := context.WithValue(r.Context(), notUseKey{}, true)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return "", false
	}
	req.RequestURI = path
	for _, ck := range r.Cookies() {
		req.AddCookie(ck)
	}
	req.Host, req.RemoteAddr = r.Host, r.RemoteAddr
	w := &capture{header: http.Header{}}
	pages.ServeHTTP(w, req)
	if w.code != http.StatusOK {
		return "", false
	}
	return version(mainOf(w.body.Bytes())), true
}

// liveStream is a page's server-sent events: "changed" when what the page
// shows changed since the version the browser has (v), so the page loads
// it again; "ended" when the page is no longer there for the person.
func (c *Console) liveStream(pages http.Handler) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		path, ok := livePath(r.URL.Query().Get("path"))
		if !ok {
			c.message(w, r, s, http.StatusBadRequest, "That is not a page of the console.")
			return
		}
		rc := http.NewResponseController(w)
		// A stream outlives the listener's write timeout.
		rc.SetWriteDeadline(time.Time{})
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "retry: 5000\n\n")
		if err := rc.Flush(); err != nil {
			c.log.ErrorContext(r.Context(), "console: live stream", "error", err)
			return
		}
		have := r.URL.Query().Get("v")
		tick := time.NewTicker(c.liveEvery)
		defer tick.Stop()
		end := time.NewTimer(liveLifetime)
		defer end.Stop()
		for {
			v, ok := c.look(r, pages, path)
			switch {
			case !ok:
				fmt.Fprint(w, "event: ended\ndata: \n\n")
				rc.Flush()
				return
			case v != have:
				fmt.Fprintf(w, "event: changed\ndata: %s\n\n", v)
				rc.Flush()
				have = v
			}
			select {
			case <-r.Context().Done():
				return
			case <-end.C:
				return
			case <-tick.C:
			}
		}
	}
}
