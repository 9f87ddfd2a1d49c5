package senderauth

import (
	"strings"
)

// AuthenticationResults is the Authentication-Results header field (RFC
// 8601) that records these results, for authservID (the receiving server's
// name), folded one method a line with eol ("\r\n" or "\n", as the message
// it heads) and ending with it: SPF for the client judged (omitted when
// there was no SMTP client to check), each DKIM signature, and DMARC for
// the From: domain. Values the sender chose are quoted or replaced so that
// the field is one well-formed field whatever they hold.
func (r Result) AuthenticationResults(authservID, eol string) string {
	var methods []string
	if r.Client.IP != nil || r.SPF.By != "" {
		m := "spf=" + token(r.SPF.Result)
		if r.SPF.By != "" {
			m += " (reported by " + comment(r.SPF.By) + ")"
		}
		switch {
		case r.SPF.Domain != "" && r.SPF.Helo:
			m += " smtp.helo=" + pvalue(r.SPF.Domain)
		case r.SPF.Domain != "":
			m += " smtp.mailfrom=" + pvalue(r.SPF.Domain)
		}
		methods = append(methods, m)
	}
	if len(r.DKIM) == 0 {
		methods = append(methods, "dkim=none")
	}
	for _, d := range r.DKIM {
		m := "dkim=" + token(d.Result)
		if d.Domain != "" {
			m += " header.d=" + pvalue(d.Domain)
		}
		if d.Selector != "" {
			m += " header.s=" + pvalue(d.Selector)
		}
		methods = append(methods, m)
	}
	m := "dmarc=" + token(r.DMARC.Result)
	if r.DMARC.Policy != "" {
		m += " (p=" + comment(r.DMARC.Policy) + ")"
	}
	if r.DMARC.Domain != "" && r.DMARC.Result != PermError {
		m += " header.from=" + pvalue(r.DMARC.Domain)
	}
	methods = append(methods, m)
	return "Authentication-Results: " + pvalue(authservID) + ";" + eol + "\t" + strings.Join(methods, ";"+eol+"\t") + eol
}

// token is a result name as RFC 8601 writes it (a keyword; anything else
// is permerror).
func token(s string) string {
	switch s {
	case Pass, Fail, SoftFail, Neutral, None, TempError, PermError:
		return s
	}
	return PermError
}

// pvalue writes a property value: as is when it is a plain domain,
// selector or address, otherwise as a quoted string, with anything that
// is not printable ASCII replaced.
func pvalue(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-_@+", c) >= 0
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// comment is text for inside a comment: printable ASCII without
// parentheses or backslashes.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '(' || r == ')' || r == '\\' {
			return '?'
		}
		return r
	}, s)
}
