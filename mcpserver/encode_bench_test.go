package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

type benchEmail struct {
	ID          string    `json:"id"`
	InboxID     string    `json:"inbox_id"`
	From        string    `json:"from"`
	Subject     string    `json:"subject"`
	Attachments int       `json:"attachments"`
	Status      string    `json:"status"`
	Labels      []string  `json:"labels"`
	ReceivedAt  time.Time `json:"received_at"`
	AgentRunID  string    `json:"agent_run_id,omitempty"`
}

type benchList struct {
	Emails     []benchEmail `json:"emails"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// benchConstrained is benchList whose status is an enum: results are then
// checked against the schema.
type benchConstrained struct {
	Emails []struct {
		benchEmail
		Status string `json:"status" enum:"pending,processed,failed,rejected"`
	} `json:"emails"`
}

// BenchmarkToolResult measures what the framework adds to a tool result of
// 100 records (a full page of a list tool). "marshal" is the encoding any
// result needs (the baseline); "encode" is the framework's: "no-nils" when
// every slice is set (the encoding is sent as is), "nils" when half the
// records hold a nil slice (decoded, [] put in, encoded again),
// "constrained" when the schema carries an enum (checked against it too).
func BenchmarkToolResult(b *testing.B) {
	page := func(nils bool) benchList {
		out := benchList{NextCursor: "c_1"}
		for i := range 100 {
			e := benchEmail{ID: fmt.Sprintf("eml_%04d", i), InboxID: "ibx_invoices", From: "faturamento@acme.example",
				Subject: "NF-e 004100 — ACME Industrial", Attachments: 2, Status: "processed", ReceivedAt: time.Unix(1790000000+int64(i), 0).UTC()}
			if !nils || i%2 == 0 {
				e.Labels = []string{"finance", "nfe"}
			}
			out.Emails = append(out.Emails, e)
		}
		return out
	}
	plain := NewTool(ToolSpec{Name: "emails_list", Description: "Lists."}, func(context.Context, *Caller, struct{}) (benchList, error) { return benchList{}, nil })
	if plain.err != nil || plain.constrainedOutput {
		b.Fatal(plain.err, plain.constrainedOutput)
	}
	enum := NewTool(ToolSpec{Name: "emails_list", Description: "Lists."}, func(context.Context, *Caller, struct{}) (benchConstrained, error) {
		return benchConstrained{}, nil
	})
	if enum.err != nil || !enum.constrainedOutput {
		b.Fatal(enum.err, enum.constrainedOutput)
	}
	var constrainedPage benchConstrained
	for _, e := range page(false).Emails {
		constrainedPage.Emails = append(constrainedPage.Emails, struct {
			benchEmail
			Status string `json:"status" enum:"pending,processed,failed,rejected"`
		}{e, e.Status})
	}
	for _, c := range []struct {
		name string
		tool *Tool
		out  any
	}{{"no-nils", &plain, page(false)}, {"nils", &plain, page(true)}, {"constrained", &enum, constrainedPage}} {
		b.Run("marshal/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(c.out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.tool.encode(c.out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
