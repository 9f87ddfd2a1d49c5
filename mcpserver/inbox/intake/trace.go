package intake

import (
	"bytes"
	"strings"
	"time"
)

// traceFields are the header fields the intake prepends to a message it
// keeps, as a final delivery agent and a receiving server do, so that
// whoever downloads the .eml sees what this server saw (the message below
// them stays byte for byte as received; DKIM does not sign these fields):
//
//	Return-Path: <MAIL FROM>                     (SMTP: the envelope sender)
//	Received: from HELO ([IP]) by HOST (kobana) with ESMTPS id EMAIL-ID
//	        for <INBOX>; DATE                    (RFC 5321 §4.4)
//	Authentication-Results: HOST; spf=… dkim=… dmarc=…   (RFC 8601)
//
// id is the first e-mail's id; lines end as the message's own do.
func traceFields(d *Delivery, id string) []byte {
	eol := lineEnding(d.Message)
	env := d.Envelope
	var b bytes.Buffer
	if env.Via == "smtp" {
		b.WriteString("Return-Path: <" + safeText(env.MailFrom) + ">" + eol)
	}
	b.WriteString("Received: ")
	switch {
	case env.RemoteIP != nil && env.Via == "smtp":
		b.WriteString("from " + safeHelo(env.Helo) + " ([" + env.RemoteIP.String() + "])" + eol + "\t")
	case env.RemoteIP != nil:
		b.WriteString("from [" + env.RemoteIP.String() + "]" + eol + "\t")
	}
	protocol := env.Protocol
	if protocol == "" {
		protocol = strings.ToUpper(env.Via)
	}
	b.WriteString("by " + safeHelo(d.Host) + " (kobana) with " + protocol + " id " + id)
	if len(d.Recipients) == 1 {
		b.WriteString(eol + "\tfor <" + safeText(d.Recipients[0].Address) + ">")
	}
	b.WriteString("; " + d.ReceivedAt.UTC().Format(time.RFC1123Z) + eol)
	b.WriteString(d.Auth.AuthenticationResults(safeHelo(d.Host), eol))
	return b.Bytes()
}

// lineEnding is how the message's header lines end: "\r\n" as SMTP sends
// them, or "\n" for a message posted with bare line feeds.
func lineEnding(r interface {
	ReadAt([]byte, int64) (int, error)
}) string {
	var head [4096]byte
	n, _ := r.ReadAt(head[:], 0)
	if i := bytes.IndexByte(head[:n], '\n'); i >= 0 && (i == 0 || head[i-1] != '\r') {
		return "\n"
	}
	return "\r\n"
}

// safeHelo is a HELO name (or host name) as a Received field can carry
// it: characters of domain names and address literals, anything else
// replaced; "unknown" when there is none.
func safeHelo(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(".-_:[]", r):
			return r
		}
		return '_'
	}, s)
}

// safeText is an address as a header field can carry it: no control
// characters (the SMTP session refuses addresses with them; this holds
// whatever the caller gives).
func safeText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
