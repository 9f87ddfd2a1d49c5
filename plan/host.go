package plan

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/lang"
)

// checkHost judges the URL's host as the executor's guard would, without
// connecting: an address (in any spelling the guard reads) and a localhost
// name are judged here; another name only when Inputs.Lookup resolves it;
// a host built from a value known only at run time when the request is
// sent.
func (pl *planner) checkHost(cs *compile.Step, req *emit.Request) Host {
	if from := hostRefs(cs.URL); len(from) > 0 {
		static := true
		for _, r := range from {
			if !pl.knownBeforeRun(cs, r) {
				static = false
			}
		}
		if !static {
			h := Host{Check: HostAtSend}
			for _, r := range from {
				h.From = append(h.From, r.String())
			}
			h.Message = fmt.Sprintf("the host comes from %s, known only when the step runs: the guard checks the address when the request is sent", strings.Join(h.From, " and "))
			return h
		}
	}
	g := pl.in.Guard
	name := req.URL.Hostname()
	h := Host{Name: name}
	err := g.CheckURL(req.URL)
	var denied *guard.DeniedError
	switch {
	case errors.As(err, &denied):
		h.Check = HostDenied
		h.Addresses = []Address{{Addr: denied.Addr.String(), Denied: denied.Class}}
		h.Message = fmt.Sprintf("host %s: %v", name, err)
		return h
	case err != nil:
		h.Check = HostDenied
		h.Message = fmt.Sprintf("host %s: %v", name, err)
		return h
	}
	if a, ok := literalAddr(name); ok {
		h.Check = HostAllowed
		h.Addresses = []Address{{Addr: a.String()}}
		return h
	}
	if isLocalhost(name) {
		// RFC 6761: localhost names are the loopback address, whatever a
		// resolver is asked.
		for _, a := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()} {
			h.Addresses = append(h.Addresses, judge(g, a))
		}
		return verdict(h, name)
	}
	if pl.in.Lookup == nil {
		h.Check = HostAtSend
		h.Message = fmt.Sprintf("host %s is a name: the guard checks the address it resolves to when the request is sent", name)
		return h
	}
	addrs, err := pl.in.Lookup(pl.ctx, name)
	if err != nil {
		h.Check = HostAtSend
		h.Message = fmt.Sprintf("host %s could not be looked up (%v): the guard checks the address when the request is sent", name, err)
		return h
	}
	for _, a := range addrs {
		h.Addresses = append(h.Addresses, judge(g, a))
	}
	return verdict(h, name)
}

// knownBeforeRun reports whether the plan renders r with its real value:
// a fact given, an example response, an attachment's metadata — not a
// stand-in.
func (pl *planner) knownBeforeRun(cs *compile.Step, r *lang.Ref) bool {
	switch r.Namespace {
	case lang.Kobana:
		_, given := pl.in.Facts[r.Key]
		return r.Key == "now" || given || pl.in.Facts != nil && !slices.Contains(pl.in.PendingFacts, r.Key)
	case lang.Steps:
		return r.Index < cs.Index && pl.examples[r.Index] != nil
	case lang.Email:
		return pl.in.Email != nil
	}
	return false
}

func judge(g *guard.Guard, a netip.Addr) Address {
	out := Address{Addr: a.String()}
	var denied *guard.DeniedError
	if err := g.CheckAddr(a); errors.As(err, &denied) {
		out.Denied = denied.Class
	}
	return out
}

// verdict: a host is denied when the guard refuses every address it has
// (the dialer tries them all, and each attempt is refused).
func verdict(h Host, name string) Host {
	if len(h.Addresses) == 0 {
		h.Check = HostAtSend
		h.Message = fmt.Sprintf("host %s has no address", name)
		return h
	}
	var refused []string
	for _, a := range h.Addresses {
		if a.Denied != "" {
			refused = append(refused, fmt.Sprintf("address %s is denied: %s", a.Addr, a.Denied))
		}
	}
	switch {
	case len(refused) == len(h.Addresses):
		h.Check = HostDenied
		h.Message = fmt.Sprintf("host %s: %s", name, strings.Join(refused, "; "))
	case len(refused) > 0:
		h.Check = HostAllowed
		h.Message = fmt.Sprintf("host %s: %s; the others are allowed", name, strings.Join(refused, "; "))
	default:
		h.Check = HostAllowed
	}
	return h
}

// literalAddr parses a host that is an IP address.
func literalAddr(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return a, err == nil
}

func isLocalhost(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// hostRefs returns the references the URL's scheme or host is built from:
// those that stand before the end of its authority.
func hostRefs(t lang.Template) []*lang.Ref {
	if t.IsLiteral() {
		return nil
	}
	// The text with each reference as one NUL, to find where the
	// authority ends.
	var b strings.Builder
	var refs []*lang.Ref
	for _, seg := range t.Segments {
		if seg.Ref != nil {
			b.WriteByte(0)
			refs = append(refs, seg.Ref)
			continue
		}
		b.WriteString(seg.Literal)
	}
	text := b.String()
	end := len(text)
	if i := strings.Index(text, "://"); i >= 0 {
		if j := strings.IndexAny(text[i+3:], "/?#"); j >= 0 {
			end = i + 3 + j
		}
	} else if j := strings.IndexAny(text, "/?#"); j >= 0 {
		end = j // the scheme and host come from a reference before here
	}
	var out []*lang.Ref
	n := 0
	for i := 0; i < end; i++ {
		if text[i] == 0 {
			out = append(out, refs[n])
			n++
		}
	}
	return out
}
