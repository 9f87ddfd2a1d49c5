package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/store"
)

// DefaultDedupWindow is how long an inbox remembers the messages it
// received, to take another copy for a duplicate: a week, past the five
// days a sending server retries a message whose reply it never got
// (Postfix's maximal_queue_lifetime, Sendmail's and Exim's defaults alike).
const DefaultDedupWindow = 7 * 24 * time.Hour

// KindEmailDedup is the kind of the record that claims a message for an
// inbox: its id is derived from the inbox and the message's key (its
// Message-ID, or its digest without one), so that the first copy to commit
// creates it and every later or concurrent copy finds it (store
// CreateRecord is one atomic insert, across replicas too).
const KindEmailDedup = "email_dedup"

// dedup is what identifies a message for an inbox.
type dedup struct {
	// kind is "message-id", or "sha256" for a message without one; value
	// the Message-ID or the digest of the bytes received.
	kind, value string
	// sum is the hex SHA-256 of the message's content: its parts' decoded
	// bytes (their digests in the part index) for a message with a
	// Message-ID, the bytes received for one without.
	sum string
}

// dedupKey is a message's key: its Message-ID, or the digest of the bytes
// received when it has none. index is the message's part index (JSON),
// nil for a message that could not be read (which claims nothing).
func dedupKey(e inbox.Email, index json.RawMessage, msg *mailstore.Spool) (dedup, error) {
	if index == nil {
		return dedup{}, nil
	}
	if e.MessageID != "" {
		// The digests of the parts are in the index already.
		var ix struct {
			Parts []struct {
				SHA256 string `json:"sha256"`
				Size   int64  `json:"size"`
			} `json:"parts"`
		}
		if err := json.Unmarshal(index, &ix); err != nil {
			return dedup{}, fmt.Errorf("intake: reading a part index: %w", err)
		}
		h := sha256.New()
		for _, p := range ix.Parts {
			fmt.Fprintf(h, "%d:%s\n", p.Size, p.SHA256)
		}
		return dedup{kind: "message-id", value: e.MessageID, sum: hex.EncodeToString(h.Sum(nil))}, nil
	}
	d, err := msg.SHA256()
	if err != nil {
		return dedup{}, fmt.Errorf("intake: reading the message's digest: %w", err)
	}
	sum := hex.EncodeToString(d[:])
	return dedup{kind: "sha256", value: sum, sum: sum}, nil
}

// id is the claim's record id for an inbox.
func (k dedup) id(inboxID string) string {
	h := sha256.Sum256([]byte(inboxID + "\n" + k.kind + "\n" + k.value))
	return "dup_" + hex.EncodeToString(h[:16])
}

// claim is the record of the first copy of a message an inbox received.
type claim struct {
	EmailID    string    `json:"email_id"`
	InboxID    string    `json:"inbox_id"`
	KeyKind    string    `json:"key_kind"`
	Key        string    `json:"key"`
	SHA256     string    `json:"sha256"`
	ReceivedAt time.Time `json:"received_at"`
}

// describe says how a copy matched the first one, for people.
func (k dedup) describe(first *claim) string {
	how := "the same Message-ID <" + k.value + ">"
	if k.kind == "sha256" {
		how = "the same bytes (no Message-ID)"
	} else if first.SHA256 == k.sum {
		how += " and the same content"
	} else {
		how += " (the content differs)"
	}
	return fmt.Sprintf("another copy of %s, received %s: %s", first.EmailID, first.ReceivedAt.UTC().Format(time.RFC3339), how)
}

func (r *StoreRecorder) window() time.Duration {
	if r.DedupWindow == 0 {
		return DefaultDedupWindow
	}
	return r.DedupWindow
}

func (r *StoreRecorder) readClaim(ctx context.Context, tx store.Tx, rc Recipient, k dedup) (*claim, error) {
	rec, err := tx.GetRecord(ctx, rc.Workspace, KindEmailDedup, k.id(rc.InboxID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("intake: reading the claim on a message: %w", err)
	}
	var c claim
	if err := json.Unmarshal(rec.Data, &c); err != nil {
		return nil, fmt.Errorf("intake: decoding the claim on a message: %w", err)
	}
	return &c, nil
}

// claim makes e-mail emailID the first copy of the message for the
// inbox, replacing a claim older than the window. When another copy
// claimed it first (one committing at the same time), it returns that
// copy's claim and claims nothing.
func (r *StoreRecorder) claim(ctx context.Context, tx store.Tx, rc Recipient, k dedup, emailID string, now time.Time) (*claim, error) {
	if r.window() < 0 {
		return nil, nil
	}
	data, err := json.Marshal(claim{EmailID: emailID, InboxID: rc.InboxID, KeyKind: k.kind, Key: k.value, SHA256: k.sum, ReceivedAt: now.UTC()})
	if err != nil {
		return nil, err
	}
	rec := store.Record{Workspace: rc.Workspace, Kind: KindEmailDedup, ID: k.id(rc.InboxID), Parent: rc.InboxID, Created: now, Data: data}
	for range 2 {
		err := tx.CreateRecord(ctx, rec)
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("intake: claiming a message: %w", err)
		}
		first, err := r.readClaim(ctx, tx, rc, k)
		if err != nil {
			return nil, err
		}
		if first != nil && now.Sub(first.ReceivedAt) <= r.window() {
			return first, nil
		}
		// A claim past the window: the message is new again.
		if err := tx.DeleteRecord(ctx, rc.Workspace, KindEmailDedup, rec.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("intake: replacing an old claim on a message: %w", err)
		}
	}
	return nil, fmt.Errorf("intake: claiming a message for %s: the claim kept changing", rc.InboxID)
}

// unclaim removes the claim this transaction made (the e-mail was refused
// after all): the message is not taken for received.
func (r *StoreRecorder) unclaim(ctx context.Context, tx store.Tx, rc Recipient, k dedup) error {
	if r.window() < 0 {
		return nil
	}
	if err := tx.DeleteRecord(ctx, rc.Workspace, KindEmailDedup, k.id(rc.InboxID)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("intake: removing a claim on a message: %w", err)
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
