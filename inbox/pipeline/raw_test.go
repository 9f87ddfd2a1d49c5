package pipeline_test

import (
	"errors"
	"io"
	"testing"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/pipeline"
)

func TestRawMessagesOpenDeleteAndFallBackToBlobs(t *testing.T) {
	e := newEnv(t, agentAnswering(`{"result": {}}`), options{})
	m := e.receive(sampleEmail)
	if err := e.st.PutBlob(e.ctx, testWS, "eml_seeded", []byte("Subject: seeded\r\n\r\nhello")); err != nil {
		t.Fatal(err)
	}
	raw := pipeline.WithBlobs(pipeline.Files{Dir: e.dir}, e.st)
	for id, want := range map[string]int{m.ID: len(sampleEmail), "eml_seeded": len("Subject: seeded\r\n\r\nhello")} {
		msg, err := raw.OpenMessage(e.ctx, testWS, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		b, _ := io.ReadAll(inbox.MessageReader(msg))
		msg.Close()
		if len(b) != want {
			t.Errorf("%s: read %d bytes, want %d", id, len(b), want)
		}
	}
	for _, id := range []string{m.ID, "eml_seeded"} {
		if err := raw.DeleteMessage(e.ctx, testWS, id); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.OpenMessage(e.ctx, testWS, id); !errors.Is(err, inbox.ErrPurged) {
			t.Errorf("%s after deleting: %v, want ErrPurged", id, err)
		}
	}
	if err := raw.DeleteMessage(e.ctx, testWS, "eml_never"); err != nil {
		t.Errorf("deleting a message never stored: %v", err)
	}
}
