// Package runrecord is the one owner of a workflow run's record: the typed
// record of a run and of each of its steps, the words they are told in
// (step states, run statuses, the reasons a step did not succeed) and the
// Journal a run is told to as it goes.
//
// A Document is what running an agent's document leaves: its Run (status,
// times, Steps) with the compiler's diagnostics and, when the document did
// not validate, the error that says nothing was sent. A Step says what was
// sent (Request, with its identity headers), what came back (Response),
// and how it ended (State, Reason, Error). None of them ever holds a
// secret's value or an attachment's byte: the executor and package emit
// redact every field before a record exists.
//
// Journal is the seam between the executor, which sends, and whoever keeps
// the record: the executor calls Journal.Sending before a step's first
// byte leaves (an error refuses the request, so nothing is sent that the
// record would not show) and Journal.Done when the step has its outcome,
// and asks Journal.Identity for the step's identity, which goes out in
// HeaderStepID and, for a POST or PATCH the agent gave none, in
// HeaderIdempotencyKey. The Inbox's pipeline implements it on its store;
// DoneFunc adapts a function (kobana run prints each step with one).
//
// The record is versioned by what it reads rather than by a number in it:
// each change to its shape is an addition an older reader ignores, and the
// types read every shape written so far — the records of earlier versions
// included: their running records (the step in flight in state "sending",
// with only its method and URL), their interrupted records (steps not run
// with no start time) and their records without step identities. The
// package's tests read each of them as it was written.
//
// The package sits between compile (whose diagnostics a Document carries)
// and resolve, emit, executor, plan and inbox, which all speak its words.
package runrecord
