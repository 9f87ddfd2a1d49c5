package inbox

import (
	"fmt"
	"strings"
)

// Reasons an inbox rejects an e-mail (Rejection.Reason).
const (
	// RejectSender: the inbox names its allowed senders and the e-mail's
	// authenticated sender is not one of them, or is not authenticated.
	RejectSender = "sender_not_allowed"
	// RejectAutoReply: the inbox rejects automatic replies and this is one.
	RejectAutoReply = "auto_reply"
	// RejectSubject: the subject contains none of the inbox's subject filters.
	RejectSubject = "subject_filtered"
	// RejectAttachmentRequired: the inbox requires an attachment and there is none.
	RejectAttachmentRequired = "attachment_required"
	// RejectAttachmentTooLarge: an attachment is over the inbox's or the
	// plan's size limit.
	RejectAttachmentTooLarge = "attachment_too_large"
	// RejectAttachmentType: an attachment's media type is not among the
	// inbox's allowed types.
	RejectAttachmentType = "attachment_type_not_allowed"
)

// Rejection says why an inbox refuses an e-mail: a stable Reason (one of
// the Reject* constants) and a Detail for people that names the rule and
// the offending value.
type Rejection struct {
	Reason string
	Detail string
}

func (r *Rejection) Error() string { return r.Reason + ": " + r.Detail }

func reject(reason, format string, args ...any) *Rejection {
	return &Rejection{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Screen applies an inbox's rules to an e-mail record, in this order: the
// allowed senders (against e.Auth.AuthenticatedFrom, never the From header),
// then the filters (reject_auto_replies — the envelope's null reverse path,
// e.Auth.NullSender, then the headers AutoReply reads — and
// subject_contains), then the
// attachment rules, the plan's MaxAttachmentBytes included. It returns the
// first rule the e-mail breaks, or nil when the inbox accepts it. The
// inbox's status is not considered: what a paused inbox does with mail is
// the intake's decision.
func Screen(ib Inbox, limits Limits, e Email) *Rejection {
	sender := ""
	if e.Auth != nil {
		sender = e.Auth.AuthenticatedFrom
	}
	if !ib.AllowsSender(sender) {
		if sender == "" {
			return reject(RejectSender, "the inbox accepts only %s, and the sender could not be authenticated (DMARC did not pass for the From address %q)", strings.Join(ib.Recipients, ", "), e.From)
		}
		return reject(RejectSender, "%s is not among the inbox's allowed senders (%s)", sender, strings.Join(ib.Recipients, ", "))
	}
	if ib.Filters.RejectAutoReplies && e.Auth != nil && e.Auth.NullSender {
		return reject(RejectAutoReply, "automatic reply (sent with the null reverse path MAIL FROM:<>, as bounces and automatic responses are) and the inbox rejects automatic replies")
	}
	if r := ib.Filters.Check(e.Subject, e.Header); r != nil {
		return r
	}
	return ib.AttachmentRules.Check(e.Attachments, limits.MaxAttachmentBytes)
}

// Reject marks an e-mail rejected: status EmailRejected, and the
// rejection ("<reason>: <detail>") as its status detail.
func (e *Email) Reject(r *Rejection) {
	e.Status, e.StatusDetail = EmailRejected, r.Error()
}

// AllowsSender reports whether an inbox accepts mail from an authenticated
// sender address ("" when the sender could not be authenticated). An inbox
// without recipients accepts anyone, authenticated or not; otherwise the
// address must match one of them (MatchSender).
func (ib Inbox) AllowsSender(authenticated string) bool {
	if len(ib.Recipients) == 0 {
		return true
	}
	if authenticated == "" {
		return false
	}
	for _, r := range ib.Recipients {
		if MatchSender(r, authenticated) {
			return true
		}
	}
	return false
}

// MatchSender reports whether an address matches an allowed-sender rule:
// "ana@example.com" matches that address, "@example.com" every address at
// exactly that domain (not its subdomains). Comparison ignores case; an
// address without exactly one '@' matches nothing.
func MatchSender(rule, address string) bool {
	rule, address = strings.ToLower(strings.TrimSpace(rule)), strings.ToLower(strings.TrimSpace(address))
	local, domain, ok := strings.Cut(address, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || rule == "" {
		return false
	}
	if d, ok := strings.CutPrefix(rule, "@"); ok {
		return d == domain
	}
	return rule == address
}

// Check applies the filters to an e-mail's subject and headers (get looks a
// header up by name, ignoring case): nil when the e-mail passes.
func (f Filters) Check(subject string, get func(name string) string) *Rejection {
	if f.RejectAutoReplies {
		if why := AutoReply(get); why != "" {
			return reject(RejectAutoReply, "automatic reply (%s) and the inbox rejects automatic replies", why)
		}
	}
	if len(f.SubjectContains) > 0 {
		s := strings.ToLower(subject)
		matched := false
		for _, want := range f.SubjectContains {
			if want != "" && strings.Contains(s, strings.ToLower(want)) {
				matched = true
				break
			}
		}
		if !matched {
			return reject(RejectSubject, "the subject %q contains none of %q", subject, f.SubjectContains)
		}
	}
	return nil
}

// AutoReply tells whether a message's headers mark it as sent automatically
// and says by which header ("" when none does). get looks a header up by
// name, ignoring case. These count, following RFC 3834 and what mail
// software writes in practice:
//   - Auto-Submitted with any value but "no" (auto-replied, auto-generated,
//     auto-notified; RFC 3834 §5);
//   - Precedence bulk, junk, list or auto_reply;
//   - X-Autoreply or X-Autorespond, with any value (common responders);
//   - X-Auto-Response-Suppress naming All, OOF or AutoReply (Microsoft
//     Exchange's out-of-office replies);
//   - List-Id (sent to a mailing list: RFC 2919; RFC 3834 §2 has responders
//     ignore such mail);
//   - a From of MAILER-DAEMON or postmaster (delivery reports).
//
// A Return-Path field in the message means nothing: the sender writes it.
// Whether the message came with the null reverse path (MAIL FROM:<>) is
// the envelope's to say (SenderAuth.NullSender, which Screen reads).
func AutoReply(get func(name string) string) string {
	if v := strings.TrimSpace(get("Auto-Submitted")); v != "" {
		// The keyword is the first token, before parameters and comments.
		fields := strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == '(' || r == ' ' || r == '\t' })
		if t := strings.ToLower(strings.Join(fields[:min(1, len(fields))], "")); t != "no" {
			return "Auto-Submitted: " + t
		}
	}
	switch p := strings.ToLower(strings.TrimSpace(get("Precedence"))); p {
	case "bulk", "junk", "list", "auto_reply":
		return "Precedence: " + p
	}
	for _, h := range []string{"X-Autoreply", "X-Autorespond"} {
		if v := strings.TrimSpace(get(h)); v != "" {
			return h + ": " + v
		}
	}
	if v := get("X-Auto-Response-Suppress"); v != "" {
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			switch strings.ToLower(f) {
			case "all", "oof", "autoreply":
				return "X-Auto-Response-Suppress: " + strings.TrimSpace(v)
			}
		}
	}
	if v := strings.TrimSpace(get("List-Id")); v != "" {
		return "List-Id: " + v
	}
	from := strings.ToLower(get("From"))
	for _, daemon := range []string{"mailer-daemon@", "postmaster@"} {
		if strings.Contains(from, daemon) {
			return "From: " + strings.TrimSpace(get("From"))
		}
	}
	return ""
}

// Header returns a kept header of the e-mail by name, ignoring case ("" when
// the record does not keep it or the message lacks it).
func (e Email) Header(name string) string {
	if v, ok := e.Headers[name]; ok {
		return v
	}
	for k, v := range e.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Check applies the attachment rules to an e-mail's attachments; planMax is
// the plan's per-attachment limit (0: none), enforced with the inbox's own
// MaxBytes, whichever is smaller. nil when the attachments pass.
func (r AttachmentRules) Check(atts []AttachmentInfo, planMax int64) *Rejection {
	if r.Required && len(atts) == 0 {
		return reject(RejectAttachmentRequired, "the inbox requires an attachment and the e-mail has none")
	}
	limit, whose := r.MaxBytes, "the inbox's"
	if planMax > 0 && (limit <= 0 || planMax < limit) {
		limit, whose = planMax, "the plan's"
	}
	for _, a := range atts {
		if limit > 0 && a.Size > limit {
			return reject(RejectAttachmentTooLarge, "attachment %d (%s) is %d bytes, over %s limit of %d bytes", a.Index, a.Filename, a.Size, whose, limit)
		}
		if len(r.AllowedTypes) > 0 && !TypeAllowed(r.AllowedTypes, a.ContentType) {
			return reject(RejectAttachmentType, "attachment %d (%s) is %s, not one of the inbox's allowed types (%s)", a.Index, a.Filename, a.ContentType, strings.Join(r.AllowedTypes, ", "))
		}
	}
	return nil
}

// TypeAllowed reports whether a media type matches one of the allowed
// ones: "application/pdf" exactly, "image/*" any image type. Case and
// parameters (";charset=…") are ignored.
func TypeAllowed(allowed []string, mediaType string) bool {
	mt := bareType(mediaType)
	for _, a := range allowed {
		a = bareType(a)
		if a == mt {
			return true
		}
		if major, ok := strings.CutSuffix(a, "/*"); ok && strings.HasPrefix(mt, major+"/") {
			return true
		}
	}
	return false
}

func bareType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
