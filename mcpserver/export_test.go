package mcpserver

import "time"

// SetConfirmWait shortens a server's ConfirmationWait for tests whose store
// ignores deadlines.
func SetConfirmWait(s *Server, d time.Duration) { s.confirmWait = d }
