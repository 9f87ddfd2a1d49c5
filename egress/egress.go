package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kobana/workflow/internal/sendurl"
)

// Pattern is one destination: a host, a wildcard below a domain, or any
// host, with an optional port.
type Pattern struct {
	// host is the lower-case ASCII host (for a wildcard, the domain below
	// which hosts match), without brackets or a trailing dot.
	host     string
	wildcard bool
	any      bool
	// port is "" for any port.
	port string
}

// PatternError says why a destination pattern cannot be read.
type PatternError struct {
	// Pattern is the text as given.
	Pattern string
	Msg     string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("destination %q: %s", e.Pattern, e.Msg)
}

// Parse reads a destination pattern: "host", "host:port", "*.domain",
// "*.domain:port", an IP address ("192.0.2.7", "[2001:db8::1]:8443") or
// "*" for any host.
func Parse(s string) (Pattern, error) {
	text := strings.TrimSpace(s)
	bad := func(format string, args ...any) (Pattern, error) {
		return Pattern{}, &PatternError{Pattern: s, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case text == "":
		return bad("empty: write a host name such as erp.example.com")
	case text == "*":
		return Pattern{any: true}, nil
	case strings.Contains(text, "://"):
		return bad("write the host alone (erp.example.com), not a URL: a destination covers every path and scheme of its host")
	case strings.ContainsAny(text, "/?#@ \t\r\n"):
		return bad("a destination is a host name with an optional :port; paths, queries, user names and spaces are not part of it")
	}
	p := Pattern{}
	if rest, ok := strings.CutPrefix(text, "*."); ok {
		p.wildcard = true
		text = rest
	}
	if strings.Contains(text, "*") {
		return bad(`"*" may only stand alone or start the pattern as "*.": write *.example.com for every host below example.com`)
	}
	host, port, err := splitHostPort(text)
	if err != nil {
		return bad("%s", err)
	}
	p.port = port
	if ip := net.ParseIP(host); ip != nil {
		if p.wildcard {
			return bad("an IP address has no hosts below it: drop the *.")
		}
		p.host = ip.String()
		return p, nil
	}
	h, err := normalHost(host)
	if err != nil {
		return bad("%s", err)
	}
	if p.wildcard && !strings.Contains(h, ".") {
		return bad("*.%s would cover every host below a top-level domain: name a domain such as *.example.com", h)
	}
	p.host = h
	return p, nil
}

// splitHostPort splits "host[:port]" or "[v6][:port]".
func splitHostPort(s string) (host, port string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", errors.New("an IPv6 address opened with [ is not closed with ]")
		}
		host, rest := s[1:end], s[end+1:]
		if net.ParseIP(host) == nil || !strings.Contains(host, ":") {
			return "", "", fmt.Errorf("%q in brackets is not an IPv6 address", host)
		}
		if rest == "" {
			return host, "", nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", "", errors.New("only a :port may follow the ] of an IPv6 address")
		}
		port, err := checkPort(rest[1:])
		return host, port, err
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", nil
	case 1:
		i := strings.IndexByte(s, ':')
		port, err := checkPort(s[i+1:])
		return s[:i], port, err
	}
	return "", "", errors.New("write an IPv6 address in brackets: [2001:db8::1]")
}

func checkPort(p string) (string, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "0") || strings.HasPrefix(p, "+") {
		return "", fmt.Errorf("port %q is not a port number from 1 to 65535", p)
	}
	return p, nil
}

// normalHost is a host name as requests are compared: its ASCII
// (punycode) form, in lower case, without a trailing dot.
func normalHost(h string) (string, error) {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", errors.New("no host name")
	}
	a, err := sendurl.ASCIIHost(h)
	if err != nil {
		return "", err
	}
	a = strings.ToLower(a)
	for _, label := range strings.Split(a, ".") {
		if label == "" {
			return "", fmt.Errorf("host name %q has an empty label (two dots in a row)", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("host name %q holds %q, which no host name does", h, string(c))
			}
		}
	}
	return a, nil
}

// String is the pattern in its normal form: "erp.example.com",
// "*.example.com:8443", "[2001:db8::1]", "*".
func (p Pattern) String() string {
	if p.any {
		return "*"
	}
	h := p.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if p.wildcard {
		h = "*." + h
	}
	if p.port != "" {
		h += ":" + p.port
	}
	return h
}

// Matches reports whether the pattern covers t.
func (p Pattern) Matches(t Target) bool {
	if p.any {
		return true
	}
	if p.port != "" && p.port != t.Port {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(t.Host, "."+p.host)
	}
	return t.Host == p.host
}

// Target is the host and port a request goes to.
type Target struct {
	// Host is the host in lower-case ASCII (an IPv6 address without
	// brackets), without a trailing dot.
	Host string
	// Port is the port dialled: the URL's, or its scheme's default.
	Port string
	// DefaultPort says Port was not written in the URL.
	DefaultPort bool
}

// String is the target as people read it: "evil.example",
// "evil.example:8443", "[2001:db8::1]".
func (t Target) String() string {
	h := t.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if !t.DefaultPort && t.Port != "" {
		h += ":" + t.Port
	}
	return h
}

// TargetOf is the target of a URL about to be sent (or written literally):
// its host, and its port or the scheme's default. ok is false for a URL
// without a host or an http(s) scheme.
func TargetOf(u *url.URL) (Target, bool) {
	if u == nil {
		return Target{}, false
	}
	var def string
	switch strings.ToLower(u.Scheme) {
	case "https":
		def = "443"
	case "http":
		def = "80"
	default:
		return Target{}, false
	}
	host := u.Hostname()
	if host == "" {
		return Target{}, false
	}
	t := Target{Port: u.Port()}
	if t.Port == "" {
		t.Port, t.DefaultPort = def, true
	}
	if ip := net.ParseIP(host); ip != nil {
		t.Host = ip.String()
		return t, true
	}
	h, err := normalHost(host)
	if err != nil {
		// Not a name a request can reach; compare it as written, so it
		// matches no pattern but "*".
		h = strings.ToLower(host)
	}
	t.Host = h
	return t, true
}

// ParseTarget is TargetOf for a URL written as text.
func ParseTarget(rawURL string) (Target, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Target{}, false
	}
	return TargetOf(u)
}

// Destinations is a list of patterns; a host is allowed when any pattern
// matches it.
type Destinations []Pattern

// ParseList reads a list of patterns (see Parse), reporting the first
// that cannot be read with its position; duplicates are kept once.
func ParseList(list []string) (Destinations, error) {
	out := make(Destinations, 0, len(list))
	for i, s := range list {
		p, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// MustParseList is ParseList for patterns written in a program; it panics
// on a pattern that cannot be read.
func MustParseList(list ...string) Destinations {
	d, err := ParseList(list)
	if err != nil {
		panic("egress: " + err.Error())
	}
	return d
}

// Allows reports whether a pattern of d matches t.
func (d Destinations) Allows(t Target) bool {
	for _, p := range d {
		if p.Matches(t) {
			return true
		}
	}
	return false
}

// Strings are the patterns in their normal form.
func (d Destinations) Strings() []string {
	out := make([]string, len(d))
	for i, p := range d {
		out[i] = p.String()
	}
	return out
}

// String lists the patterns, comma-separated; "no host" when empty.
func (d Destinations) String() string {
	if len(d) == 0 {
		return "no host"
	}
	return strings.Join(d.Strings(), ", ")
}

// MarshalJSON encodes the patterns as a list of strings.
func (d Destinations) MarshalJSON() ([]byte, error) { return json.Marshal(d.Strings()) }

// UnmarshalJSON reads a list of pattern strings.
func (d *Destinations) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("destinations are a list of host names such as [\"erp.example.com\"]")
	}
	v, err := ParseList(list)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// BindURL is the default destination of a secret whose value is an http
// or https URL with a host: that host (with its port when the URL writes
// one). ok is false for any other value.
func BindURL(value string) (Destinations, bool) {
	v := strings.TrimSpace(value)
	if !strings.HasPrefix(strings.ToLower(v), "http://") && !strings.HasPrefix(strings.ToLower(v), "https://") {
		return nil, false
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, false
	}
	t, ok := TargetOf(u)
	if !ok {
		return nil, false
	}
	p := Pattern{host: t.Host}
	if !t.DefaultPort {
		p.port = t.Port
	}
	return Destinations{p}, true
}

// Policy says where a workflow's requests may go. The zero Policy (and a
// nil *Policy) allows every host and binds no secret.
type Policy struct {
	// Secrets are the destinations of each bound secret, by name. A secret
	// not listed is unbound: it may go wherever Egress allows.
	Secrets map[string]Destinations `json:"secrets,omitempty"`
	// Egress, when not nil, is every host a request may reach; an empty
	// list allows none. nil allows every host (the SSRF guard still
	// applies).
	Egress *Destinations `json:"egress,omitempty"`
	// EgressOf names whose egress list it is, for messages ("agent
	// Invoices (agt_1)"); empty says "the egress list".
	EgressOf string `json:"-"`
}

// BindURLs binds each unbound secret of values whose value is a URL to
// its own host (BindURL).
func (p *Policy) BindURLs(values map[string]string) {
	for name, v := range values {
		if _, bound := p.Secrets[name]; bound {
			continue
		}
		if d, ok := BindURL(v); ok {
			if p.Secrets == nil {
				p.Secrets = map[string]Destinations{}
			}
			p.Secrets[name] = d
		}
	}
}

// Restricts reports whether the policy can refuse anything.
func (p *Policy) Restricts() bool { return p != nil && (p.Egress != nil || len(p.Secrets) > 0) }

// Destinations returns the destinations of a secret, and whether it is
// bound.
func (p *Policy) Destinations(secret string) (Destinations, bool) {
	if p == nil {
		return nil, false
	}
	d, ok := p.Secrets[secret]
	return d, ok
}

// Violation is a request the policy refuses.
type Violation struct {
	// Secret names the secret whose destinations leave the target out;
	// empty when the target is outside the egress list.
	Secret string
	// Target is where the request would go.
	Target Target
	// Allowed are the destinations the target is not among.
	Allowed Destinations
	// EgressOf is Policy.EgressOf, for an egress violation.
	EgressOf string
}

func (v Violation) Error() string {
	if v.Secret != "" {
		return fmt.Sprintf("secret %s may be sent only to %s; %s is not one of its destinations", v.Secret, v.Allowed, v.Target)
	}
	whose := "the egress list"
	if v.EgressOf != "" {
		whose = "the egress list of " + v.EgressOf
	}
	if len(v.Allowed) == 0 {
		return fmt.Sprintf("%s allows no destination, so no request may go to %s", whose, v.Target)
	}
	return fmt.Sprintf("%s is outside %s, which allows %s", v.Target, whose, v.Allowed)
}

// Check is the policy's one decision: may a request to t that carries the
// values of the named secrets be sent? It returns every reason it may
// not — the egress list first, then each bound secret whose destinations
// leave t out, in name order — and nil when it may. A nil Policy allows
// everything.
func (p *Policy) Check(t Target, secrets []string) []Violation {
	if p == nil {
		return nil
	}
	var out []Violation
	if p.Egress != nil && !p.Egress.Allows(t) {
		out = append(out, Violation{Target: t, Allowed: *p.Egress, EgressOf: p.EgressOf})
	}
	names := slices.Clone(secrets)
	sort.Strings(names)
	for i, name := range names {
		if i > 0 && names[i-1] == name {
			continue
		}
		if d, bound := p.Secrets[name]; bound && !d.Allows(t) {
			out = append(out, Violation{Secret: name, Target: t, Allowed: d})
		}
	}
	return out
}

// Error joins violations into one error for a step that is not sent; nil
// for none.
func Error(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	return &RefusedError{Violations: vs}
}

// RefusedError is a request the policy refused before anything was sent.
type RefusedError struct {
	Violations []Violation
}

func (e *RefusedError) Error() string {
	var b bytes.Buffer
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(v.Error())
	}
	return b.String()
}

// ParsePolicy reads a policy written as JSON, as the authoring tools take
// it (validate-workflow -policy, kobana plan -policy, the language
// server's initialization options):
//
//	{"secrets": {"FINANCE_TOKEN": ["erp.example.com"]}, "egress": ["erp.example.com", "hooks.slack.com"]}
//
// Unknown keys and unreadable patterns are errors that say where.
func ParsePolicy(data []byte) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw struct {
		Secrets map[string]json.RawMessage `json:"secrets"`
		Egress  json.RawMessage            `json:"egress"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`a policy is {"secrets": {"NAME": ["host", …]}, "egress": ["host", …]}: %v`, err)
	}
	p := &Policy{}
	names := make([]string, 0, len(raw.Secrets))
	for n := range raw.Secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var d Destinations
		if err := json.Unmarshal(raw.Secrets[n], &d); err != nil {
			return nil, fmt.Errorf("secrets.%s: %v", n, err)
		}
		if p.Secrets == nil {
			p.Secrets = map[string]Destinations{}
		}
		p.Secrets[n] = d
	}
	if len(raw.Egress) > 0 && string(raw.Egress) != "null" {
		var d Destinations
		if err := json.Unmarshal(raw.Egress, &d); err != nil {
			return nil, fmt.Errorf("egress: %v", err)
		}
		p.Egress = &d
	}
	return p, nil
}
