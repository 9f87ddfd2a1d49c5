package inboxmcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// DownloadTTL is how long a signed .eml link stays valid.
const DownloadTTL = 5 * time.Minute

// downloadPurpose is the signing-key family of download links.
const downloadPurpose = "download"

// DownloadPath is where DownloadHandler is mounted.
const DownloadPath = "/eml/"

func downloadMAC(secret []byte, ws, id string, exp int64) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "eml\n%s\n%s\n%d", ws, id, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signedEMLURL returns a link to download an e-mail's .eml until expiry.
func (p *Product) signedEMLURL(ctx context.Context, ws, id string) (string, time.Time, error) {
	if p.opts.PublicURL == "" {
		return "", time.Time{}, mcpserver.Errorf("download_unavailable",
			"this server has no HTTP endpoint to download from; run kobana serve with -http (or -public-url)")
	}
	k, err := p.opts.Store.SigningKey(ctx, downloadPurpose)
	if err != nil {
		return "", time.Time{}, err
	}
	exp := p.now().Add(DownloadTTL).Truncate(time.Second)
	q := url.Values{}
	q.Set("exp", strconv.FormatInt(exp.Unix(), 10))
	q.Set("kid", k.ID)
	q.Set("sig", downloadMAC(k.Secret, ws, id, exp.Unix()))
	base := strings.TrimRight(p.opts.PublicURL, "/")
	return base + DownloadPath + url.PathEscape(ws) + "/" + url.PathEscape(id) + "?" + q.Encode(), exp.UTC(), nil
}

// DownloadHandler serves signed .eml links (GET or HEAD
// /eml/{workspace}/{email}, byte ranges allowed), streaming the message.
// The link is the credential: it names one e-mail, expires after
// DownloadTTL and is verified against the store's download keys.
func (p *Product) DownloadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rest := strings.TrimPrefix(r.URL.Path, DownloadPath)
		ws, id, ok := strings.Cut(rest, "/")
		q := r.URL.Query()
		exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
		if !ok || ws == "" || id == "" || strings.Contains(id, "/") || err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if p.now().Unix() >= exp {
			http.Error(w, "this download link has expired; ask for a new one with emails_eml", http.StatusGone)
			return
		}
		k, err := p.opts.Store.VerifyingKey(r.Context(), downloadPurpose, q.Get("kid"))
		if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(downloadMAC(k.Secret, ws, id, exp))) {
			http.Error(w, "invalid download link", http.StatusForbidden)
			return
		}
		m, err := p.opts.Messages.OpenMessage(r.Context(), ws, id)
		if errors.Is(err, inbox.ErrPurged) {
			http.Error(w, "this e-mail is no longer available", http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, "cannot read the e-mail now; try again later", http.StatusInternalServerError)
			return
		}
		defer m.Close()
		w.Header().Set("Content-Type", "message/rfc822")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", id+".eml"))
		w.Header().Set("Cache-Control", "private, no-store")
		// ServeContent streams the snapshot, answers HEAD and byte ranges.
		http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(m, 0, m.Size()))
	})
}
