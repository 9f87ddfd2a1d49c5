package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
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
	if len(args) == 0 {
		fmt.Fprint(c.Stderr, tokenUsage)
		return exitUsage
	}
	switch args[0] {
	case "create":
		return createToken(c, args[1:])
	case "revoke":
		return revokeToken(c, args[1:])
	case "-h", "-help", "--help":
		fmt.Fprint(c.Stdout, tokenUsage)
		return exitOK
	}
	fmt.Fprintf(c.Stderr, "kobana token: unknown action %q (create or revoke)\n%s", args[0], tokenUsage)
	return exitUsage
}

// tokenFlags are the parsed flags of kobana token create.
type tokenFlags struct {
	person, workspace, db, label string
	scopes                       []string
	expires                      time.Duration
}

// parseTokenCreate parses and checks the flags of kobana token create.
func parseTokenCreate(c *Command, args []string) (f *tokenFlags, code int, ok bool) {
	f = &tokenFlags{}
	fs := flag.NewFlagSet("kobana token create", flag.ContinueOnError)
	fs.StringVar(&f.person, "person", "", "the person the token speaks for (required)")
	fs.StringVar(&f.workspace, "workspace", "", "the workspace the token opens (required)")
	scopes := fs.String("scopes", "read", "read, or read,write")
	fs.StringVar(&f.db, "db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	fs.DurationVar(&f.expires, "expires", 0, "lifetime, e.g. 720h; 0 never expires")
	fs.StringVar(&f.label, "label", "", "a note stored with the token")
	if code, ok := c.parseFlags(fs, tokenUsage, args); !ok {
		return nil, code, false
	}
	fail := func(format string, a ...any) (*tokenFlags, int, bool) {
		fmt.Fprintf(c.Stderr, "kobana token create: "+format+"\n", a...)
		return nil, exitUsage, false
	}
	if f.person == "" || f.workspace == "" || fs.NArg() > 0 {
		return fail("-person and -workspace are required, and nothing else")
	}
	for _, s := range strings.Split(*scopes, ",") {
		s = strings.TrimSpace(s)
		if s != "read" && s != "write" {
			return fail("unknown scope %q (use read or read,write)", s)
		}
		if !slices.Contains(f.scopes, s) {
			f.scopes = append(f.scopes, s)
		}
	}
	if !slices.Contains(f.scopes, "read") {
		f.scopes = append([]string{"read"}, f.scopes...) // write implies read
	}
	if f.expires < 0 {
		return fail("-expires must be positive")
	}
	return f, exitOK, true
}

// createToken mints a token and prints it once on standard output.
func createToken(c *Command, args []string) int {
	f, code, ok := parseTokenCreate(c, args)
	if !ok {
		return code
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token create", f.db)
	if st == nil {
		return code
	}
	defer st.Close()
	var exp time.Time
	if f.expires > 0 {
		exp = time.Now().Add(f.expires)
	}
	tok, err := st.CreateToken(ctx, store.NewToken{Person: f.person, Workspace: f.workspace, Scopes: f.scopes, Expires: exp, Label: f.label})
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
	fmt.Fprintf(c.Stderr, "%stoken for %s in workspace %s, scopes %s, %s\n", id, f.person, f.workspace, strings.Join(f.scopes, ","), when)
	return exitOK
}

// revokeToken revokes the token read from standard input.
func revokeToken(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana token revoke", flag.ContinueOnError)
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	if code, ok := c.parseFlags(fs, tokenUsage, args); !ok {
		return code
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
