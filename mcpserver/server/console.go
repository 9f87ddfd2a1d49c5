package server

import (
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/console"
)

// ConsoleOptions tunes the back office served on the HTTP listener at
// /console/ (package console).
type ConsoleOptions struct {
	// Off serves no console.
	Off bool
	// IdleTimeout and Lifetime end a console session (defaults
	// console.DefaultIdleTimeout and console.DefaultLifetime).
	IdleTimeout, Lifetime time.Duration
}

// addConsole mounts the console on the HTTP listener, over the products'
// tools; it runs once the MCP server is built.
func (a *assembly) addConsole() error {
	for _, s := range a.services {
		h, ok := s.(*httpServer)
		if !ok || h.cfg.Console.Off {
			continue
		}
		opts := console.Options{Store: a.store, Tools: a.server, PublicURL: a.publicURL,
			IdleTimeout: h.cfg.Console.IdleTimeout, Lifetime: h.cfg.Console.Lifetime, Logger: a.log}
		if a.inbox != nil {
			opts.Messages = a.inbox.raw
		}
		c, err := console.New(a.ctx, opts)
		if err != nil {
			return fmt.Errorf("console: %w", err)
		}
		a.handlers[console.Prefix] = c.Handler()
		h.console = c.URL()
	}
	return nil
}
