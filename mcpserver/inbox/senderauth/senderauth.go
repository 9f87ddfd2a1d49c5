package senderauth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"blitiri.com.ar/go/spf"
	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-msgauth/dmarc"
	"golang.org/x/net/publicsuffix"
)

// Outcomes of a mechanism (RFC 8601 result names).
const (
	Pass      = "pass"
	Fail      = "fail"
	SoftFail  = "softfail"
	Neutral   = "neutral"
	None      = "none"
	TempError = "temperror"
	PermError = "permerror"
)

// Resolver is the DNS the checks query. *net.Resolver satisfies it.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// NewResolver returns a resolver that sends every query to server
// ("host:port"), over UDP and TCP as the query needs.
func NewResolver(server string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		},
	}
}

// Checker checks senders. The zero value uses the system's resolver.
type Checker struct {
	// Resolver answers the DNS queries (nil: net.DefaultResolver).
	Resolver Resolver
	// LookupTimeout bounds each DNS query (default 5 s); a query that takes
	// longer is a temporary error (temperror).
	LookupTimeout time.Duration
	// CheckTimeout bounds a whole check (default 20 s): SPF's lookups,
	// every DKIM key and DMARC's record together. What is not answered by
	// then is a temperror, so a DNS server that never answers, or answers
	// each query just within LookupTimeout, cannot hold a message's reply.
	CheckTimeout time.Duration
	// MaxSignatures caps the DKIM signatures verified per message (default 5).
	MaxSignatures int
	// TrustedRelays are the networks of the gateways that hand this server
	// mail they received themselves (a Postfix in front of it). For mail
	// from them, SPF is judged for the client the relay's Received field
	// names (the first hop outside these networks), not for the relay; from
	// anyone else those fields mean nothing.
	TrustedRelays []netip.Prefix
	// TrustedAuthservIDs are the authserv-ids (RFC 8601) whose
	// Authentication-Results a trusted relay adds: for mail from a trusted
	// relay, the SPF result in such a field, added above the relay's
	// Received field, is taken instead of checking SPF again. DKIM is always
	// verified here, and DMARC evaluated here.
	TrustedAuthservIDs []string
}

// Input is one received message and how it arrived.
type Input struct {
	// RemoteIP is the address of the connecting client.
	RemoteIP net.IP
	// Helo is the name the client gave in HELO/EHLO.
	Helo string
	// MailFrom is the envelope sender (MAIL FROM), "" for a bounce.
	MailFrom string
	// Message reads the raw message from its start; it is called once per
	// pass (headers, then DKIM).
	Message func() io.Reader
}

// SPFResult is the SPF check of the envelope sender's domain.
type SPFResult struct {
	Result string `json:"result"`
	// Domain is the domain checked: the MAIL FROM domain, or the HELO name
	// for a bounce.
	Domain string `json:"domain,omitempty"`
	// Helo says Domain is the HELO name (checked for a bounce).
	Helo  bool   `json:"helo,omitempty"`
	Error string `json:"error,omitempty"`
	// By is the authserv-id of the trusted relay whose
	// Authentication-Results reported this result; "" when it was checked
	// here.
	By string `json:"by,omitempty"`
}

// Client is the SMTP client the checks judged.
type Client struct {
	// IP and Helo are the client's address and HELO name: the connecting
	// client's, or, when that is a trusted relay, those of the first client
	// outside the trusted networks its Received fields name.
	IP   net.IP `json:"ip,omitempty"`
	Helo string `json:"helo,omitempty"`
	// Relay is the trusted relay's address when the client came through
	// one.
	Relay net.IP `json:"relay,omitempty"`
}

// DKIMResult is the verification of one DKIM signature.
type DKIMResult struct {
	Result string `json:"result"`
	// Domain is the signing domain (d=).
	Domain string `json:"domain,omitempty"`
	// Selector is the key's selector (s=).
	Selector string `json:"selector,omitempty"`
	// Identifier is the signing identity (i=).
	Identifier string `json:"identifier,omitempty"`
	Error      string `json:"error,omitempty"`
}

// DMARCResult is the DMARC evaluation of the From: domain.
type DMARCResult struct {
	// Result is pass (an aligned SPF or DKIM pass), fail (none aligned and
	// the domain publishes a policy), none (no policy published),
	// temperror or permerror.
	Result string `json:"result"`
	// Domain is where the policy was found (the From: domain or its
	// organizational domain).
	Domain string `json:"domain,omitempty"`
	// Policy is the published policy for the From: domain (none,
	// quarantine, reject); "" without one.
	Policy string `json:"policy,omitempty"`
	// SPFAligned and DKIMAligned report which passing mechanism is aligned
	// with the From: domain (strictly or relaxed, as the policy says; relaxed
	// without a policy).
	SPFAligned  bool   `json:"spf_aligned"`
	DKIMAligned bool   `json:"dkim_aligned"`
	Error       string `json:"error,omitempty"`
}

// Result is everything the checks found about one message.
type Result struct {
	// Client is the SMTP client judged (SPF).
	Client Client       `json:"client"`
	SPF    SPFResult    `json:"spf"`
	DKIM   []DKIMResult `json:"dkim"`
	DMARC  DMARCResult  `json:"dmarc"`
	// From is the From: address as written ("" when the header is missing,
	// unreadable or names more than one address).
	From string `json:"from,omitempty"`
	// Authenticated is the From: address when an aligned SPF or DKIM pass
	// vouches for its domain; "" otherwise. It is the identity an inbox's
	// allowed senders are matched against.
	Authenticated string `json:"authenticated,omitempty"`
}

// Trust is what a sender check means for an inbox that restricts senders.
type Trust int

const (
	// Unauthenticated: nothing vouches for the From: address.
	Unauthenticated Trust = iota
	// Authenticated: Result.Authenticated is the sender.
	Authenticated
	// Unknown: a DNS failure kept the checks from concluding; the sender
	// should retry later.
	Unknown
)

// Trust classifies the result. A DNS failure makes it Unknown only where
// the answer could have authenticated the sender: an SPF check of a domain
// aligned with the From: domain, a DKIM signature of one (a signature of
// another domain cannot make DMARC pass, whatever its key), or the DMARC
// record whose alignment mode decides an aligned pass under relaxed
// alignment. Anything else is Unauthenticated: a forger cannot make a
// message wait for DNS.
func (r Result) Trust() Trust {
	if r.Authenticated != "" {
		return Authenticated
	}
	from := ""
	if at := strings.LastIndexByte(r.From, '@'); at > 0 {
		from = strings.ToLower(strings.TrimSuffix(r.From[at+1:], "."))
	}
	if from == "" {
		return Unauthenticated
	}
	could := func(domain string) bool { return domain == "" || aligned(domain, from, dmarc.AlignmentRelaxed) }
	if r.SPF.Result == TempError && could(r.SPF.Domain) {
		return Unknown
	}
	for _, d := range r.DKIM {
		if d.Result == TempError && could(d.Domain) {
			return Unknown
		}
	}
	if r.DMARC.Result == TempError {
		if r.SPF.Result == Pass && aligned(r.SPF.Domain, from, dmarc.AlignmentRelaxed) {
			return Unknown
		}
		for _, d := range r.DKIM {
			if d.Result == Pass && aligned(d.Domain, from, dmarc.AlignmentRelaxed) {
				return Unknown
			}
		}
	}
	return Unauthenticated
}

// Check runs SPF, DKIM and DMARC on a message, within CheckTimeout. It
// fails only when the message cannot be read; DNS trouble (a timeout
// included) is reported in the results as temperror.
func (c *Checker) Check(ctx context.Context, in Input) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.checkTimeout())
	defer cancel()
	var res Result
	hdr, err := textproto.ReadHeader(bufio.NewReader(in.Message()))
	if err != nil {
		return res, fmt.Errorf("senderauth: reading the message header: %w", err)
	}
	fromDomain := ""
	res.From = fromAddress(hdr)
	if at := strings.LastIndexByte(res.From, '@'); at > 0 {
		fromDomain = strings.ToLower(strings.TrimSuffix(res.From[at+1:], "."))
	}
	res.Client = Client{IP: in.RemoteIP, Helo: in.Helo}
	var reported *SPFResult
	if c.trusted(in.RemoteIP) {
		res.Client, reported = c.throughRelay(hdr, in)
	}
	if reported != nil {
		res.SPF = *reported
	} else {
		res.SPF = c.spf(ctx, res.Client.IP, res.Client.Helo, in.MailFrom)
	}
	res.DKIM = c.dkim(ctx, in.Message())
	addSelectors(res.DKIM, hdr)
	res.DMARC = c.dmarc(ctx, fromDomain, res.SPF, res.DKIM)
	if fromDomain != "" && (res.DMARC.SPFAligned || res.DMARC.DKIMAligned) {
		res.Authenticated = res.From
	}
	// With a strict alignment mode the DMARC record could not be read under,
	// a pass of the From: domain itself is aligned all the same.
	if res.DMARC.Result == TempError && fromDomain != "" {
		if res.SPF.Result == Pass && strings.EqualFold(res.SPF.Domain, fromDomain) {
			res.Authenticated = res.From
		}
		for _, d := range res.DKIM {
			if d.Result == Pass && strings.EqualFold(d.Domain, fromDomain) {
				res.Authenticated = res.From
			}
		}
	}
	return res, nil
}

// addSelectors fills each DKIM result's selector from the signature it
// verified (go-msgauth reports the domain but not the selector; results come
// in signature order).
func addSelectors(results []DKIMResult, hdr textproto.Header) {
	sigs := hdr.Values("DKIM-Signature")
	for i := range results {
		if i >= len(sigs) {
			return
		}
		tags := map[string]string{}
		for _, kv := range strings.Split(sigs[i], ";") {
			k, v, ok := strings.Cut(kv, "=")
			if ok {
				tags[strings.TrimSpace(k)] = strings.Join(strings.Fields(v), "")
			}
		}
		if strings.EqualFold(tags["d"], results[i].Domain) {
			results[i].Selector = tags["s"]
		}
	}
}

// fromAddress is the single address of the From: header, or "". A display
// name that cannot be decoded (an unknown charset, raw 8-bit bytes) does not
// hide the address: the address is taken from the angle brackets, as mail
// readers do. Several From: fields, or several addresses, give "".
func fromAddress(hdr textproto.Header) string {
	if len(hdr.Values("From")) != 1 {
		return ""
	}
	list, err := (&mail.Header{Header: message.Header{Header: hdr}}).AddressList("From")
	if err == nil {
		if len(list) == 1 {
			return list[0].Address
		}
		return ""
	}
	raw := strings.TrimSpace(hdr.Get("From"))
	if strings.Count(raw, "@") != 1 {
		return ""
	}
	if open := strings.LastIndexByte(raw, '<'); open >= 0 && strings.HasSuffix(raw, ">") {
		raw = raw[open+1 : len(raw)-1]
	}
	if raw == "" || strings.ContainsAny(raw, " \t<>,;\"") {
		return ""
	}
	return raw
}

func (c *Checker) resolver() Resolver {
	if c.Resolver != nil {
		return c.Resolver
	}
	return net.DefaultResolver
}

func (c *Checker) checkTimeout() time.Duration {
	if c.CheckTimeout > 0 {
		return c.CheckTimeout
	}
	return 20 * time.Second
}

func (c *Checker) timeout() time.Duration {
	if c.LookupTimeout > 0 {
		return c.LookupTimeout
	}
	return 5 * time.Second
}

// lookupTXT is a TXT query bounded by the lookup timeout, in the shape
// go-msgauth asks for.
func (c *Checker) lookupTXT(ctx context.Context) func(string) ([]string, error) {
	return func(name string) ([]string, error) {
		ctx, cancel := context.WithTimeout(ctx, c.timeout())
		defer cancel()
		return c.resolver().LookupTXT(ctx, name)
	}
}

func (c *Checker) spf(ctx context.Context, ip net.IP, helo, mailFrom string) SPFResult {
	out := SPFResult{}
	domain := ""
	if at := strings.LastIndexByte(mailFrom, '@'); at >= 0 {
		domain = mailFrom[at+1:]
	} else {
		domain, out.Helo = helo, true
	}
	out.Domain = strings.ToLower(domain)
	if ip == nil || domain == "" {
		out.Result = None
		return out
	}
	sender := mailFrom
	if sender == "" {
		sender = "postmaster@" + helo
	}
	r, err := spf.CheckHostWithSender(ip, helo, sender,
		spf.WithResolver(timeoutResolver{c.resolver(), c.timeout()}), spf.WithContext(ctx))
	out.Result = string(r)
	if err != nil && r != spf.Pass && r != spf.Fail && r != spf.SoftFail && r != spf.Neutral {
		out.Error = err.Error()
	}
	return out
}

func (c *Checker) dkim(ctx context.Context, msg io.Reader) []DKIMResult {
	max := c.MaxSignatures
	if max <= 0 {
		max = 5
	}
	verifs, err := dkim.VerifyWithOptions(msg, &dkim.VerifyOptions{LookupTXT: c.lookupTXT(ctx), MaxVerifications: max})
	out := []DKIMResult{}
	if err != nil && !errors.Is(err, dkim.ErrTooManySignatures) {
		return append(out, DKIMResult{Result: PermError, Error: err.Error()})
	}
	for _, v := range verifs {
		r := DKIMResult{Result: Pass, Domain: strings.ToLower(v.Domain), Identifier: v.Identifier}
		switch {
		case v.Err == nil:
		case dkim.IsTempFail(v.Err):
			r.Result, r.Error = TempError, v.Err.Error()
		case dkim.IsPermFail(v.Err):
			r.Result, r.Error = PermError, v.Err.Error()
		default:
			r.Result, r.Error = Fail, v.Err.Error()
		}
		out = append(out, r)
	}
	return out
}

func (c *Checker) dmarc(ctx context.Context, fromDomain string, s SPFResult, dk []DKIMResult) DMARCResult {
	if fromDomain == "" {
		return DMARCResult{Result: PermError, Error: "the message has no single readable From: address"}
	}
	org := orgDomain(fromDomain)
	out := DMARCResult{Domain: fromDomain}
	opts := &dmarc.LookupOptions{LookupTXT: c.lookupTXT(ctx)}
	rec, err := dmarc.LookupWithOptions(fromDomain, opts)
	subdomain := false
	if errors.Is(err, dmarc.ErrNoPolicy) && org != fromDomain {
		out.Domain, subdomain = org, true
		rec, err = dmarc.LookupWithOptions(org, opts)
	}
	var spfMode, dkimMode dmarc.AlignmentMode = dmarc.AlignmentRelaxed, dmarc.AlignmentRelaxed
	switch {
	case errors.Is(err, dmarc.ErrNoPolicy):
		out.Domain = fromDomain
	case err != nil && dmarc.IsTempFail(err):
		out.Result, out.Error = TempError, err.Error()
	case err != nil:
		// A lookup that failed outright (SERVFAIL) is temporary by nature
		// of DNS; a record that does not parse is permanent.
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) || strings.Contains(err.Error(), "failed to lookup") {
			out.Result, out.Error = TempError, err.Error()
		} else {
			out.Result, out.Error = PermError, err.Error()
		}
	default:
		out.Policy = string(rec.Policy)
		if subdomain && rec.SubdomainPolicy != "" {
			out.Policy = string(rec.SubdomainPolicy)
		}
		if rec.SPFAlignment != "" {
			spfMode = rec.SPFAlignment
		}
		if rec.DKIMAlignment != "" {
			dkimMode = rec.DKIMAlignment
		}
	}
	if out.Result == TempError || out.Result == PermError {
		return out
	}
	out.SPFAligned = s.Result == Pass && aligned(s.Domain, fromDomain, spfMode)
	for _, d := range dk {
		if d.Result == Pass && aligned(d.Domain, fromDomain, dkimMode) {
			out.DKIMAligned = true
		}
	}
	switch {
	case out.SPFAligned || out.DKIMAligned:
		out.Result = Pass
	case out.Policy == "":
		out.Result = None
	default:
		out.Result = Fail
	}
	return out
}

// aligned reports whether an authenticated domain is aligned with the From:
// domain: the same name (strict), or the same organizational domain
// (relaxed).
func aligned(authDomain, fromDomain string, mode dmarc.AlignmentMode) bool {
	authDomain = strings.ToLower(strings.TrimSuffix(authDomain, "."))
	if authDomain == "" {
		return false
	}
	if mode == dmarc.AlignmentStrict {
		return authDomain == fromDomain
	}
	return orgDomain(authDomain) == orgDomain(fromDomain)
}

// orgDomain is a domain's organizational domain (one label below its public
// suffix), or the domain itself when it has none.
func orgDomain(d string) string {
	if org, err := publicsuffix.EffectiveTLDPlusOne(d); err == nil {
		return org
	}
	return d
}

// timeoutResolver bounds every query of a resolver, returning its errors
// unwrapped (the SPF library recognises *net.DNSError).
type timeoutResolver struct {
	r Resolver
	d time.Duration
}

func (t timeoutResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.r.LookupTXT(ctx, name)
}

func (t timeoutResolver) LookupMX(ctx context.Context, name string) ([]*net.MX, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.r.LookupMX(ctx, name)
}

func (t timeoutResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.r.LookupIPAddr(ctx, host)
}

func (t timeoutResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.r.LookupAddr(ctx, addr)
}
