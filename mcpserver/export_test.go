package mcpserver

import "time"

// SetConfirmWait sets a server's ConfirmationWait: shorter for tests whose
// store ignores deadlines, longer for tests about something else than the
// store's speed.
func SetConfirmWait(s *Server, d time.Duration) { s.confirmWait = d }
