package runrecord_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/kobana/workflow/runrecord"
)

// stored is the part of a stored workflow run record this package owns.
type stored struct {
	Status   runrecord.Status `json:"status"`
	Steps    []runrecord.Step `json:"steps"`
	InFlight *int             `json:"in_flight"`
}

func read(t *testing.T, name string) (stored, []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s does not read: %v", name, err)
	}
	return s, b
}

// The records the previous version wrote read into the types as they were
// written: its running record (the step in flight "sending", with only a
// method and a URL, no duration), its interrupted record (a step not run
// without a start time) and a finished one.
func TestRecordsOfThePreviousVersionRead(t *testing.T) {
	run, _ := read(t, "running-v1.json")
	if run.Status != runrecord.RunRunning || run.InFlight == nil || *run.InFlight != 1 || len(run.Steps) != 2 {
		t.Fatalf("running record: %+v", run)
	}
	if i := runrecord.InFlight(run.Steps); i != 1 || run.Steps[1].State != runrecord.Sending || run.Steps[1].Request.Method != "POST" ||
		run.Steps[1].Request.Headers != nil || run.Steps[1].ID != "" {
		t.Errorf("the step in flight (%d): %+v", i, run.Steps[1])
	}
	if s := run.Steps[0]; s.State != runrecord.Succeeded || s.Response.Status != 201 || string(s.Response.Body) != `{"data":{"id":"pay_1"}}` ||
		!s.StartedAt.Equal(time.Date(2026, 11, 30, 10, 0, 0, 125e6, time.UTC)) {
		t.Errorf("the step that ended: %+v", s)
	}
	if p := runrecord.ResumePoint(run.Steps); p != 1 {
		t.Errorf("resume point %d, want 1", p)
	}

	in, _ := read(t, "interrupted-v1.json")
	if in.Status != runrecord.RunInterrupted || in.Steps[1].State != runrecord.Unknown || in.Steps[1].Reason != runrecord.ReasonInterrupted ||
		in.Steps[2].State != runrecord.Skipped || !in.Steps[2].StartedAt.IsZero() {
		t.Errorf("interrupted record: %+v", in)
	}
	if p := runrecord.ResumePoint(in.Steps); p != 1 {
		t.Errorf("resume point %d, want 1", p)
	}
	if got := runrecord.NotSucceeded(in.Steps); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("not succeeded %v", got)
	}

	done, _ := read(t, "failed-v1.json")
	if done.Status != runrecord.RunFailed || runrecord.Outcome(done.Steps) != runrecord.RunFailed || !done.Steps[2].PartialUpload ||
		done.Steps[2].Reason != runrecord.ReasonUploadAborted || string(done.Steps[0].Response.Body) != `"supplier unknown"` {
		t.Errorf("failed record: %+v", done)
	}
	if p := runrecord.ResumePoint(done.Steps); p != 3 {
		t.Errorf("a run whose steps all ended resumes at %d, want 3 (none)", p)
	}
}

// A step record written with this version reads back the same, and its
// JSON has the previous version's fields with the same names: a reader of
// the previous shape reads it (the identity is an addition).
func TestAStepRecordRoundTrips(t *testing.T) {
	s := runrecord.Step{Index: 2, Label: "notify", State: runrecord.Failed, Error: "connection refused", Reason: runrecord.ReasonTransport,
		StartedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), DurationMS: 7, ID: "wrun_1/2",
		Request:  &runrecord.Request{Method: "POST", URL: "https://x.example/", Headers: map[string]string{}, Body: json.RawMessage(`{"a":1}`)},
		Response: &runrecord.Response{Status: 500, Headers: map[string]string{"Content-Type": "text/plain"}, Body: json.RawMessage(`"oops"`), Size: 4}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"index":2,"label":"notify","state":"failed","error":"connection refused","reason":"transport","started_at":"2026-12-01T09:00:00Z","duration_ms":7,"id":"wrun_1/2",` +
		`"request":{"method":"POST","url":"https://x.example/","headers":{},"body":{"a":1}},"response":{"status":500,"headers":{"Content-Type":"text/plain"},"body":"oops","size":4}}`
	if string(b) != want {
		t.Errorf("encoded\n%s\nwant\n%s", b, want)
	}
	var back runrecord.Step
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, s) {
		t.Errorf("read back %+v (%v)", back, err)
	}
}

// A state or status no version has written is an error, not a silent new
// word.
func TestUnknownWordsAreRefused(t *testing.T) {
	var s runrecord.Step
	if err := json.Unmarshal([]byte(`{"index":0,"state":"exploded"}`), &s); err == nil {
		t.Error("an unknown state was read")
	}
	var r runrecord.Run
	if err := json.Unmarshal([]byte(`{"status":"paused","steps":[]}`), &r); err == nil {
		t.Error("an unknown status was read")
	}
	for _, st := range []string{"succeeded", "failed", "skipped", "sending", "unknown"} {
		if err := json.Unmarshal([]byte(`{"index":0,"state":"`+st+`"}`), &s); err != nil || string(s.State) != st {
			t.Errorf("state %s: %v", st, err)
		}
	}
}

// A Document that did not validate says so; one that ran does not.
func TestDocumentValid(t *testing.T) {
	d := runrecord.Document{Error: runrecord.NotValidError}
	if d.Valid() || !(&runrecord.Document{}).Valid() {
		t.Error("Valid")
	}
	b, _ := json.Marshal(&runrecord.Document{Run: runrecord.Run{Status: runrecord.RunSucceeded, Steps: []runrecord.Step{}}})
	if !bytes.HasPrefix(b, []byte(`{"status":"succeeded","started_at":`)) || !bytes.Contains(b, []byte(`"steps":[]`)) {
		t.Errorf("document %s", b)
	}
}

// The resume point is the first step whose outcome is not known or that
// was not run; the steps before it are kept.
func TestResumePoint(t *testing.T) {
	st := func(s runrecord.State, r runrecord.Reason) runrecord.Step { return runrecord.Step{State: s, Reason: r} }
	for _, c := range []struct {
		steps []runrecord.Step
		want  int
	}{
		{nil, 0},
		{[]runrecord.Step{st(runrecord.Succeeded, ""), st(runrecord.Failed, runrecord.ReasonStatus), st(runrecord.Skipped, runrecord.ReasonSkipped)}, 3},
		{[]runrecord.Step{st(runrecord.Succeeded, ""), st(runrecord.Unknown, runrecord.ReasonInterrupted), st(runrecord.Skipped, runrecord.ReasonCancelled)}, 1},
		{[]runrecord.Step{st(runrecord.Succeeded, ""), st(runrecord.Skipped, runrecord.ReasonCancelled)}, 1},
		{[]runrecord.Step{st(runrecord.Succeeded, ""), st(runrecord.Failed, runrecord.ReasonNotRecorded)}, 1},
		{[]runrecord.Step{st(runrecord.Unknown, runrecord.ReasonOutcomeNotRecorded)}, 0},
	} {
		if got := runrecord.ResumePoint(c.steps); got != c.want {
			t.Errorf("%+v: %d, want %d", c.steps, got, c.want)
		}
	}
}

// An identity becomes an Idempotency-Key as a structured-field string:
// quoted, a quote or backslash escaped, nothing outside printable ASCII.
func TestIdempotencyKey(t *testing.T) {
	for id, want := range map[string]string{
		"wrun_1/0":   `"wrun_1/0"`,
		`a"b\c`:      `"a\"b\\c"`,
		"a\r\nb\x00": `"ab"`,
		"":           `""`,
	} {
		if got := runrecord.IdempotencyKey(id); got != want {
			t.Errorf("%q: %s, want %s", id, got, want)
		}
	}
	if runrecord.StepID("wrun_x", 3) != "wrun_x/3" || !runrecord.NeedsIdempotencyKey("post") || !runrecord.NeedsIdempotencyKey("PATCH") ||
		runrecord.NeedsIdempotencyKey("PUT") || runrecord.NeedsIdempotencyKey("GET") || runrecord.NeedsIdempotencyKey("DELETE") {
		t.Error("identity helpers")
	}
}

// A run can be taken up again when it was interrupted, or when it ended
// with a step whose answer never came (Unknown); not one that is still
// running or whose steps all have an outcome.
func TestResumable(t *testing.T) {
	st := func(s runrecord.State) runrecord.Step { return runrecord.Step{State: s} }
	for _, c := range []struct {
		status runrecord.Status
		steps  []runrecord.Step
		want   bool
	}{
		{runrecord.RunInterrupted, []runrecord.Step{st(runrecord.Succeeded)}, true},
		{runrecord.RunFailed, []runrecord.Step{st(runrecord.Succeeded), st(runrecord.Unknown), st(runrecord.Skipped)}, true},
		{runrecord.RunFailed, []runrecord.Step{st(runrecord.Succeeded), st(runrecord.Failed)}, false},
		{runrecord.RunSucceeded, []runrecord.Step{st(runrecord.Succeeded)}, false},
		{runrecord.RunRunning, []runrecord.Step{st(runrecord.Unknown)}, false},
	} {
		if got := runrecord.Resumable(c.status, c.steps); got != c.want {
			t.Errorf("%s %+v: %v, want %v", c.status, c.steps, got, c.want)
		}
	}
}
