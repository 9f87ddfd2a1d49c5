package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kobana/workflow/store"
)

func init() {
	register("token", "mint or revoke an access token for the MCP server (token create|revoke …)", runToken)
}

const tokenUsage = `usage: kobana token create -person ID -workspace ID -scopes read[,write] [-db PATH] [-expires DURATION] [-label TEXT]
       kobana token revoke [-db PATH] < TOKEN      (the token on standard input, so it stays out of shell history)

Mints a token for a person in a workspace (the person must be a member; its
role there bounds what the token may do). The token is printed once on
standard output and stored only as a SHA-256 hash.

flags:
`

func runToken(c *Command, args []string) int {
	if len(args) > 0 && args[0] == "revoke" {
		return revokeToken(c, args[1:])
	}
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprint(c.Stderr, tokenUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return exitOK
		}
		return exitUsage
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() { fmt.Fprint(c.Stderr, tokenUsage); fs.PrintDefaults() }
	person := fs.String("person", "", "the person the token speaks for (required)")
	workspace := fs.String("workspace", "", "the workspace the token opens (required)")
	scopes := fs.String("scopes", "read", "read, or read,write")
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	expires := fs.Duration("expires", 0, "lifetime, e.g. 720h; 0 never expires")
	label := fs.String("label", "", "a note stored with the token")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *person == "" || *workspace == "" || fs.NArg() > 0 {
		fmt.Fprintln(c.Stderr, "kobana token create: -person and -workspace are required, and nothing else")
		return exitUsage
	}
	var sc []string
	for _, s := range strings.Split(*scopes, ",") {
		s = strings.TrimSpace(s)
		if s != "read" && s != "write" {
			fmt.Fprintf(c.Stderr, "kobana token create: unknown scope %q (use read or read,write)\n", s)
			return exitUsage
		}
		sc = append(sc, s)
	}
	if len(sc) == 1 && sc[0] == "write" {
		sc = []string{"read", "write"} // write implies read
	}
	if *expires < 0 {
		fmt.Fprintln(c.Stderr, "kobana token create: -expires must be positive")
		return exitUsage
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token create", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()
	var exp time.Time
	if *expires > 0 {
		exp = time.Now().Add(*expires)
	}
	tok, err := st.CreateToken(ctx, store.NewToken{Person: *person, Workspace: *workspace, Scopes: sc, Expires: exp, Label: *label})
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana token create: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(c.Stdout, tok)
	when := "never expires"
	if !exp.IsZero() {
		when = "expires " + exp.UTC().Format(time.RFC3339)
	}
	id := ""
	if p, err := st.Authenticate(ctx, tok); err == nil {
		id = p.TokenID + ": "
	}
	fmt.Fprintf(c.Stderr, "%stoken for %s in workspace %s, scopes %s, %s\n", id, *person, *workspace, strings.Join(sc, ","), when)
	return exitOK
}

// revokeToken revokes the token read from standard input.
func revokeToken(c *Command, args []string) int {
	fs := flag.NewFlagSet("token revoke", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() { fmt.Fprint(c.Stderr, tokenUsage); fs.PrintDefaults() }
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 || c.Stdin == nil {
		fmt.Fprintln(c.Stderr, "kobana token revoke: pass the token on standard input")
		return exitUsage
	}
	raw, err := io.ReadAll(io.LimitReader(c.Stdin, 4096))
	tok := strings.TrimSpace(string(raw))
	if err != nil || tok == "" {
		fmt.Fprintln(c.Stderr, "kobana token revoke: pass the token on standard input")
		return exitUsage
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token revoke", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()
	p, err := st.Authenticate(ctx, tok)
	if err != nil {
		fmt.Fprintln(c.Stderr, "kobana token revoke: the token is unknown, expired or already revoked")
		return exitFailure
	}
	if err := st.RevokeToken(ctx, p.TokenID); err != nil {
		fmt.Fprintf(c.Stderr, "kobana token revoke: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(c.Stderr, "revoked %s (%s in workspace %s)\n", p.TokenID, p.Person, p.Workspace)
	return exitOK
}
