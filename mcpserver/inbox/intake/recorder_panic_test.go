package intake_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// panickyRaw is a raw message store whose Prepare panics while armed.
type panickyRaw struct {
	mailstore.Store
	armed atomic.Bool
}

func (p *panickyRaw) Prepare(ctx context.Context, m *mailstore.Incoming, workspace, id string) (func(context.Context) error, error) {
	if p.armed.CompareAndSwap(true, false) {
		panic("injected while storing the message")
	}
	return p.Store.Prepare(ctx, m, workspace, id)
}

// A panic while the message is stored (which runs beside the reading, in a
// goroutine of its own) defers that message with 451 4.3.0, is reported
// with its stack on the SMTP surface, and the sender's retry is stored.
func TestRecorderPanicWhileStoringDefersTheMessage(t *testing.T) {
	e := startStore(t)
	raw := &panickyRaw{Store: e.dir}
	raw.armed.Store(true)
	e.rec.Raw = raw
	var stack atomic.Value
	stop := panics.Listen(func(p *panics.Panic) {
		if p.Surface == panics.SMTP && p.Where == "storing a message" {
			stack.Store(string(p.Stack))
		}
	})
	defer stop()
	before := panics.Count(panics.SMTP)
	err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, message("inv", 100))
	var se *smtp.SMTPError
	if !errors.As(err, &se) || se.Code != 451 || se.EnhancedCode != (smtp.EnhancedCode{4, 3, 0}) {
		t.Fatalf("a panic while storing: %v, want 451 4.3.0", err)
	}
	if got := panics.Count(panics.SMTP) - before; got != 1 {
		t.Fatalf("%d panics counted on the SMTP surface, want 1", got)
	}
	if s, _ := stack.Load().(string); !strings.Contains(s, "panickyRaw") {
		t.Fatalf("the panic was reported without its stack: %q", s)
	}
	if len(e.emails()) != 0 || len(e.jobs()) != 0 {
		t.Fatalf("after the panic: %d e-mails, %d jobs; want none", len(e.emails()), len(e.jobs()))
	}
	// The retry is stored once.
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, message("inv", 100)); err != nil {
		t.Fatal(err)
	}
	if len(e.emails()) != 1 || e.files() != 1 || len(e.jobs()) != 1 {
		t.Fatalf("after the retry: %d e-mails, %d files, %d jobs", len(e.emails()), e.files(), len(e.jobs()))
	}
}
