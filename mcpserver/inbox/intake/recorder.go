package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/groupcommit"
	"github.com/kobana/workflow/resolve/eml"
)

// StoreRecorder is the Recorder over the store: for each recipient it builds the
// e-mail record (headers, body, attachments, sender checks), screens it with
// the inbox's rules (inbox.Screen), and writes — in one transaction — the
// raw message, the e-mail record, its system event (email.received or
// email.rejected) and, for an accepted e-mail, its agent job.
type StoreRecorder struct {
	Store store.Transactor
	// Raw keeps the raw messages (mailstore.Dir or mailstore.LargeObjects).
	Raw   mailstore.Store
	Queue *queue.Queue
	// Events, when set, is called in the records' transaction with each
	// event recorded (email.received, email.rejected): the pipeline's
	// Notify, which adds the webhook deliveries of the event, so they commit
	// with it or not at all.
	Events func(ctx context.Context, tx store.Tx, workspace string, ev inbox.SystemEvent) error
	// Logger receives messages that could only be partly read (default:
	// discard).
	Logger *slog.Logger
	// DedupWindow is how long an inbox takes a message with the same
	// Message-ID (or, without one, the same bytes) for another copy of one
	// it received (default DefaultDedupWindow; negative: never).
	DedupWindow time.Duration
	// Batches bounds the transactions committing deliveries at once
	// (default 1: the embedded store has one writer; a PostgreSQL server
	// takes two or more). Deliveries arriving meanwhile commit together.
	Batches int

	// commits groups the records of deliveries arriving at the same time
	// in shared transactions (made at the first delivery).
	commitsOnce sync.Once
	commits     *groupcommit.Committer[*txCache]
}

// Reasons the intake rejects an e-mail besides the inbox's rules.
const (
	// RejectInboxPaused: the inbox is paused; its mail is recorded, not
	// processed.
	RejectInboxPaused = "inbox_paused"
	// RejectUnreadable: the message could not be read as an e-mail.
	RejectUnreadable = "message_unreadable"
	// RejectQuota: the workspace has received the e-mails its plan allows
	// this month (Limits.EmailsPerMonth).
	RejectQuota = "quota_exceeded"
)

// quotaCounter names the counter of a workspace's accepted e-mails in the
// month of t (store.Counters: atomic across replicas, and in the records'
// transaction, so an e-mail that does not commit is not counted).
func quotaCounter(t time.Time) string { return "inbox.emails." + t.UTC().Format("2006-01") }

// KindEmailIndex is the kind of the record holding an e-mail's part index
// (resolve/eml's Index, JSON), under the e-mail's id, written with the
// e-mail: the message is read once, when it arrives, and every later run
// reads only the byte ranges it sends (resolve.EMLIndexed).
const KindEmailIndex = "email_index"

// LoadIndex returns the part index stored with an e-mail; an error
// matching store.ErrNotFound when it has none (an e-mail that did not come
// through the intake, or whose message could not be indexed): then read the
// message without one (resolve.EML).
func LoadIndex(ctx context.Context, records store.Records, workspace, emailID string) (*eml.Index, error) {
	rec, err := records.GetRecord(ctx, workspace, KindEmailIndex, emailID)
	if err != nil {
		return nil, fmt.Errorf("index of e-mail %s: %w", emailID, err)
	}
	var ix eml.Index
	if err := json.Unmarshal(rec.Data, &ix); err != nil {
		return nil, fmt.Errorf("decoding the index of e-mail %s: %w", emailID, err)
	}
	return &ix, nil
}

// Record implements intake.Recorder.
func (r *StoreRecorder) Record(ctx context.Context, d *Delivery) ([]Receipt, error) {
	if len(d.Recipients) == 0 {
		return nil, errors.New("intake: a delivery for no recipient")
	}
	ids := make([]string, len(d.Recipients))
	keys := make([]rawKey, len(d.Recipients))
	for i, rc := range d.Recipients {
		ids[i] = inbox.NewID("eml")
		keys[i] = rawKey{workspace: rc.Workspace, emailID: ids[i], address: rc.Address}
	}
	// The message is kept, read and indexed with the trace fields the
	// server prepends: what is stored is what the index describes. It is
	// made durable (for files: written, file and directory synced) while it
	// is read and indexed and while the records are written: the two wait on
	// different things (the disk, the processor). The transaction commits
	// only once the message is durable.
	in := &mailstore.Incoming{Trace: traceFields(d, ids[0]), Body: d.Message}
	prep := r.prepare(ctx, in, keys)
	base, index, readErr := r.read(d, in)
	key, err := dedupKey(base, index, d.Message)
	if err != nil {
		prep.undo(context.WithoutCancel(ctx), r.Logger)
		return nil, err
	}
	var receipts []Receipt
	r.commitsOnce.Do(func() { r.commits = groupcommit.New(r.Store, r.Batches, newTxCache) })
	err = r.commits.Do(ctx, groupcommit.Write[*txCache]{
		Apply: func(ctx context.Context, tx store.Tx, c *txCache) error {
			var err error
			receipts, err = r.write(ctx, tx, c, d, in, ids, base, readErr, index, key)
			return err
		},
		Ready: prep.wait,
	})
	if err != nil {
		prep.undo(context.WithoutCancel(ctx), r.Logger)
		return nil, err
	}
	return receipts, nil
}

// write records one delivery in tx: for each recipient the e-mail (accepted,
// a duplicate, or rejected with the reason), its part index, its event and,
// for an accepted one, its agent job. It may run more than once (in a
// shared transaction, then alone): it changes nothing it reads.
func (r *StoreRecorder) write(ctx context.Context, tx store.Tx, c *txCache, d *Delivery, in *mailstore.Incoming, ids []string,
	base inbox.Email, readErr error, index json.RawMessage, key dedup) ([]Receipt, error) {
	repo := c.repo
	out := make([]Receipt, 0, len(d.Recipients))
	for i, rc := range d.Recipients {
		ib, err := c.inbox(ctx, rc.Workspace, rc.InboxID)
		if err != nil {
			return nil, err
		}
		limits, err := c.limits(ctx, rc.Workspace)
		if err != nil {
			return nil, err
		}
		if len(ib.Recipients) > 0 && d.Auth.Trust() == senderauth.Unknown {
			return nil, ErrTryLater
		}
		e := base
		e.Headers = copyMap(base.Headers)
		e.ID, e.InboxID, e.ReceivedAt, e.Status = ids[i], rc.InboxID, d.ReceivedAt, inbox.EmailPending
		reason := ""
		switch {
		case readErr != nil:
			e.Reject(&inbox.Rejection{Reason: RejectUnreadable, Detail: readErr.Error()})
		case ib.Status == inbox.StatusPaused:
			e.Reject(&inbox.Rejection{Reason: RejectInboxPaused, Detail: "the inbox " + ib.ID + " is paused: its mail is recorded and not processed"})
		default:
			if rej := inbox.Screen(ib, limits, e); rej != nil {
				e.Reject(rej)
				reason = rej.Reason
				break
			}
			// The message is claimed for the inbox in this transaction: a
			// copy received before, or arriving at the same time (another
			// session, another replica), holds the claim, and this one is
			// its duplicate. A message the inbox refuses claims nothing.
			first, err := r.claim(ctx, tx, rc, key, e.ID, d.ReceivedAt)
			if err != nil {
				return nil, err
			}
			if first != nil {
				e.MarkDuplicate(first.EmailID, key.describe(first))
				break
			}
			if limits.EmailsPerMonth > 0 {
				n, err := tx.NextNumber(ctx, rc.Workspace, quotaCounter(d.ReceivedAt), 1)
				if err != nil {
					return nil, fmt.Errorf("intake: counting the workspace's e-mails: %w", err)
				}
				if n > int64(limits.EmailsPerMonth) {
					e.Reject(&inbox.Rejection{Reason: RejectQuota, Detail: fmt.Sprintf("the workspace's plan allows %d e-mails a month and %s has had them", limits.EmailsPerMonth, d.ReceivedAt.UTC().Format("January 2006"))})
					if err := r.unclaim(ctx, tx, rc, key); err != nil {
						return nil, err
					}
				}
			}
		}
		if e.Status == inbox.EmailRejected && reason == "" {
			reason, _, _ = strings.Cut(e.StatusDetail, ":")
		}
		if err := r.Raw.KeepTx(ctx, tx, in, rc.Workspace, e.ID); err != nil {
			return nil, err
		}
		if err := repo.Emails.Create(ctx, rc.Workspace, e); err != nil {
			return nil, err
		}
		if index != nil {
			if err := tx.CreateRecord(ctx, store.Record{Workspace: rc.Workspace, Kind: KindEmailIndex, ID: e.ID, Parent: e.ID,
				Created: e.ReceivedAt, Data: index}); err != nil {
				return nil, fmt.Errorf("intake: storing the index of %s: %w", e.ID, err)
			}
		}
		ev, err := emailEvent(e, d)
		if err != nil {
			return nil, err
		}
		if err := repo.Events.Create(ctx, rc.Workspace, ev); err != nil {
			return nil, err
		}
		if r.Events != nil {
			if err := r.Events(ctx, tx, rc.Workspace, ev); err != nil {
				return nil, err
			}
		}
		if e.Status == inbox.EmailPending {
			if _, err := r.Queue.InsertTx(ctx, tx, queue.AgentArgs{Workspace: rc.Workspace, EmailID: e.ID}, nil); err != nil {
				return nil, err
			}
		}
		rec := Receipt{Recipient: rc, EmailID: e.ID, DuplicateOf: e.DuplicateOf}
		if e.Status == inbox.EmailRejected {
			rec.Rejected, rec.Reason, rec.SenderRefused = true, e.StatusDetail, reason == inbox.RejectSender
		}
		out = append(out, rec)
	}
	return out, nil
}

// emailEvent is the system event of a recorded e-mail: email.received,
// email.duplicate or email.rejected.
func emailEvent(e inbox.Email, d *Delivery) (inbox.SystemEvent, error) {
	typ := inbox.EventEmailReceived
	payload := map[string]string{"email_id": e.ID, "inbox_id": e.InboxID, "from": e.From, "subject": e.Subject, "via": d.Envelope.Via}
	switch e.Status {
	case inbox.EmailRejected:
		typ = inbox.EventEmailRejected
		payload["reason"] = e.StatusDetail
	case inbox.EmailDuplicate:
		typ = inbox.EventEmailDuplicate
		payload["duplicate_of"], payload["reason"] = e.DuplicateOf, e.StatusDetail
	}
	return inbox.NewEvent(typ, inbox.ActorSystem, e.ID, payload, d.ReceivedAt)
}

// rawKey names one stored copy of a message: its workspace and e-mail id,
// and the address it was sent to (for errors).
type rawKey struct{ workspace, emailID, address string }

// preparation is the raw store's Prepare for every recipient of a message,
// running in the background.
type preparation struct {
	done  chan struct{}
	err   error
	undos []func(context.Context) error
	keys  []rawKey
}

// prepare starts storing the message under every key.
func (r *StoreRecorder) prepare(ctx context.Context, in *mailstore.Incoming, keys []rawKey) *preparation {
	p := &preparation{done: make(chan struct{}), keys: keys}
	go func() {
		defer close(p.done)
		// A panic while storing is this delivery's failure (451, the
		// sender retries), reported on panics.SMTP; the server goes on.
		defer panics.Recover(panics.SMTP, "storing a message", &p.err)
		for _, k := range keys {
			undo, err := r.Raw.Prepare(ctx, in, k.workspace, k.emailID)
			if err != nil {
				p.err = fmt.Errorf("intake: storing the message for %s: %w", k.address, err)
				return
			}
			p.undos = append(p.undos, undo)
		}
	}()
	return p
}

// wait returns once the message is stored under every key, or why it
// could not be.
func (p *preparation) wait() error {
	<-p.done
	return p.err
}

// undo removes what Prepare stored, once it has ended: the records that
// would have named it did not commit.
func (p *preparation) undo(ctx context.Context, logger *slog.Logger) {
	<-p.done
	for i, undo := range p.undos {
		if undo == nil {
			continue
		}
		if err := undo(ctx); err != nil && logger != nil {
			logger.Error("intake: removing a message whose records did not commit", "email", p.keys[i].emailID, "err", err)
		}
	}
}

// read reads the message once: its part index (offsets, decoded sizes,
// digests, stored with the e-mail so that runs read only the byte ranges
// they send) and, from it, the fields every recipient's e-mail record
// shares. A message that cannot be read as an e-mail still gets a record
// (rejected, with the reason), with what the sender checks found, and no
// index (runs read it whole).
func (r *StoreRecorder) read(d *Delivery, in *mailstore.Incoming) (inbox.Email, json.RawMessage, error) {
	ix, err := eml.ReadIndex(in, in.Size())
	var e inbox.Email
	if err == nil {
		e, err = inbox.ReadEmailIndexed(in, in.Size(), ix)
	}
	if err != nil {
		if r.Logger != nil {
			r.Logger.Warn("intake: a message could not be read", "err", err)
		}
		e = inbox.Email{From: d.Auth.From, Headers: map[string]string{}, Attachments: []inbox.AttachmentInfo{}, SizeBytes: int(in.Size())}
		e.Auth = senderAuth(d)
		return e, nil, err
	}
	if e.Text == "" {
		e.Text = htmlBody(in, ix)
	}
	e.Auth = senderAuth(d)
	index, err := json.Marshal(ix)
	if err != nil && r.Logger != nil {
		r.Logger.Warn("intake: a part index could not be encoded; its runs will read the message whole", "err", err)
	}
	return e, index, nil
}

// senderAuth is the e-mail record's view of the sender checks.
func senderAuth(d *Delivery) *inbox.SenderAuth {
	a := d.Auth
	out := &inbox.SenderAuth{
		EnvelopeFrom:      d.Envelope.MailFrom,
		SPF:               inbox.AuthCheck{Result: a.SPF.Result, Domain: a.SPF.Domain, Detail: a.SPF.Error},
		DKIM:              []inbox.AuthCheck{},
		DMARC:             inbox.AuthCheck{Result: a.DMARC.Result, Domain: a.DMARC.Domain, Detail: dmarcDetail(a.DMARC)},
		AuthenticatedFrom: strings.ToLower(a.Authenticated),
	}
	if c := a.Client; c.IP != nil {
		out.Client, out.Helo = c.IP.String(), c.Helo
		if c.Relay != nil {
			out.Relay = c.Relay.String()
		}
	} else if d.Envelope.RemoteIP != nil {
		out.Client = d.Envelope.RemoteIP.String()
	}
	out.NullSender = d.Envelope.Via == "smtp" && d.Envelope.MailFrom == ""
	for _, k := range a.DKIM {
		out.DKIM = append(out.DKIM, inbox.AuthCheck{Result: k.Result, Domain: k.Domain, Selector: k.Selector, Detail: k.Error})
	}
	return out
}

// dmarcDetail says what DMARC found, for people.
func dmarcDetail(r senderauth.DMARCResult) string {
	var parts []string
	if r.Policy != "" {
		parts = append(parts, "policy "+r.Policy)
	} else if r.Result != senderauth.TempError && r.Result != senderauth.PermError {
		parts = append(parts, "no DMARC record")
	}
	switch {
	case r.SPFAligned && r.DKIMAligned:
		parts = append(parts, "SPF and DKIM aligned")
	case r.SPFAligned:
		parts = append(parts, "SPF aligned")
	case r.DKIMAligned:
		parts = append(parts, "DKIM aligned")
	case r.Result != senderauth.TempError && r.Result != senderauth.PermError:
		parts = append(parts, "no aligned SPF or DKIM pass")
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	return strings.Join(parts, "; ")
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Sweep removes what a crash can leave behind in raw (mailstore.Store's
// Sweep): spools of receipts that were cut off and, with files, stored
// messages no e-mail record names. It returns how many it removed.
func Sweep(ctx context.Context, raw mailstore.Store, records store.Records, after, before time.Time) (int, error) {
	return raw.Sweep(ctx, func(ctx context.Context, workspace, id string) (bool, error) {
		_, err := records.GetRecord(ctx, workspace, inbox.KindEmail, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}, after, before)
}
