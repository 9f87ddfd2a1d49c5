package mcpserver

import (
	"context"
	"strings"
	"testing"
)

// FuzzResourceMatch checks the URI router: a match always binds every
// placeholder to one non-empty, path-free, id-shaped segment, and putting
// the bound values back into the template gives the URI again.
func FuzzResourceMatch(f *testing.F) {
	read := func(context.Context, *Caller, string, map[string]string) (any, error) { return nil, nil }
	s := &Server{}
	for _, r := range []*Resource{
		{URI: "kobana://x/models", Read: read},
		{Template: "kobana://x/emails/{id}", Read: read},
		{Template: "kobana://x/emails/{id}/eml", Read: read},
		{Template: "kobana://x/a/{one}/b/{two}", Read: read},
	} {
		seg := r.URI
		if seg == "" {
			seg = r.Template
		}
		s.resources = append(s.resources, &resourceEntry{res: r, segments: uriSegments(seg)})
	}
	for _, u := range []string{"kobana://x/models", "kobana://x/emails/e1", "kobana://x/emails/e1/eml", "kobana://x/emails/../x",
		"kobana://x/emails/", "kobana://x/a/1/b/2", "kobana://x/emails/e%2F1", "kobana://x/emails/e1?x=1", "kobana://x/emails//eml", "kobana://x/emails/..", "kobana://x/emails/./eml"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		e, params := s.match(uri)
		if e == nil {
			return
		}
		out := e.res.URI
		if out == "" {
			out = e.res.Template
			for k, v := range params {
				if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/?#%") || !validID(v) {
					t.Fatalf("%q bound %s=%q", uri, k, v)
				}
				out = strings.Replace(out, "{"+k+"}", v, 1)
			}
		}
		if out != uri {
			t.Fatalf("%q matched %q, which renders %q", uri, e.res.URI+e.res.Template, out)
		}
	})
}
