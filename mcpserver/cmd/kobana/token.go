package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

func init() {
	register("token", "mint, list and revoke access to the MCP server: static tokens, OAuth grants, sign-in codes (token create|list|revoke|signin …)", runToken)
}

const tokenUsage = `usage: kobana token create -person ID -workspace ID -scopes read[,write] [-db PATH] [-expires DURATION] [-label TEXT]
       kobana token list [-person ID] [-workspace ID] [-all] [-json] [-db PATH]
       kobana token revoke [-db PATH] ID           (a token's tok_… or an OAuth grant's grt_… id, from list)
       kobana token revoke -person ID [-workspace ID] [-db PATH]   (every token and grant of a person)
       kobana token revoke [-db PATH] < TOKEN      (the token itself on standard input)
       kobana token signin -person ID -workspace ID [-expires DURATION] [-db PATH]

create mints a static token for a person in a workspace (the person must be
a member; its role there bounds what the token may do). The token is printed
once on standard output and stored only as a SHA-256 hash.

list shows every way in — static tokens and the OAuth grants people gave
to hosts on the sign-in page — with id, person, workspace, scopes, client,
created, last used and expiry; never a token's value.

signin prints a one-time sign-in code for the OAuth sign-in page (valid
for -expires, default 10 minutes, once): give it to the person, who enters
it when a host such as Claude.ai sends them to sign in.

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
	case "list":
		return listTokens(c, args[1:])
	case "signin":
		return signInCode(c, args[1:])
	case "-h", "-help", "--help":
		fmt.Fprint(c.Stdout, tokenUsage)
		return exitOK
	}
	fmt.Fprintf(c.Stderr, "kobana token: unknown action %q (create, list, revoke or signin)\n%s", args[0], tokenUsage)
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

// revokeToken revokes a token or grant by id (an argument), every one of
// a person's (-person), or the token read from standard input.
func revokeToken(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana token revoke", flag.ContinueOnError)
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	person := fs.String("person", "", "revoke every token and OAuth grant of this person")
	workspace := fs.String("workspace", "", "with -person: only in this workspace")
	if code, ok := c.parseFlags(fs, tokenUsage, args); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "kobana token revoke: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 1 || *person != "" && fs.NArg() > 0 || *workspace != "" && *person == "" {
		return fail("give one id, or -person ID [-workspace ID], or the token on standard input")
	}
	var tok string
	if fs.NArg() == 0 && *person == "" {
		if c.Stdin == nil {
			return fail("pass an id (see kobana token list), -person ID, or the token on standard input")
		}
		raw, err := io.ReadAll(io.LimitReader(c.Stdin, 4096))
		if tok = strings.TrimSpace(string(raw)); err != nil || tok == "" {
			return fail("pass an id (see kobana token list), -person ID, or the token on standard input")
		}
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token revoke", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()
	switch {
	case *person != "":
		n, err := st.RevokePersonAccess(ctx, *person, *workspace)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana token revoke: %v\n", err)
			return exitFailure
		}
		where := "every workspace"
		if *workspace != "" {
			where = "workspace " + *workspace
		}
		fmt.Fprintf(c.Stderr, "revoked %d tokens and OAuth grants of %s in %s\n", n, *person, where)
		return exitOK
	case fs.NArg() == 1:
		id := fs.Arg(0)
		if err := st.RevokeToken(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				fmt.Fprintf(c.Stderr, "kobana token revoke: no live token or grant %q (see kobana token list)\n", id)
			} else {
				fmt.Fprintf(c.Stderr, "kobana token revoke: %v\n", err)
			}
			return exitFailure
		}
		fmt.Fprintf(c.Stderr, "revoked %s\n", id)
		return exitOK
	}
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

// listTokens prints the access list: a table, or JSON lines with -json.
func listTokens(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana token list", flag.ContinueOnError)
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	var q store.AccessQuery
	fs.StringVar(&q.Person, "person", "", "only this person's")
	fs.StringVar(&q.Workspace, "workspace", "", "only this workspace's")
	fs.BoolVar(&q.All, "all", false, "include revoked and expired ones")
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if code, ok := c.parseFlags(fs, tokenUsage, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "kobana token list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token list", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()
	list, err := st.ListAccess(ctx, q)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana token list: %v\n", err)
		return exitFailure
	}
	when := func(t time.Time, zero string) string {
		if t.IsZero() {
			return zero
		}
		return t.UTC().Format(time.RFC3339)
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		for _, a := range list {
			enc.Encode(map[string]any{"id": a.ID, "kind": a.Kind, "person": a.Person, "person_name": a.PersonName, "workspace": a.Workspace,
				"scopes": a.Scopes, "client": a.Client, "client_name": a.ClientName, "label": a.Label, "created": when(a.Created, ""),
				"last_used": when(a.LastUsed, ""), "expires": when(a.Expires, ""), "revoked": when(a.Revoked, "")})
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tPERSON\tWORKSPACE\tSCOPES\tCLIENT / LABEL\tCREATED\tLAST USED\tEXPIRES")
	for _, a := range list {
		who := a.Label
		if a.Kind == store.OAuthGrant {
			who = a.ClientName
			if who == "" {
				who = a.Client
			}
		}
		exp := when(a.Expires, "never")
		if !a.Revoked.IsZero() {
			exp = "revoked " + when(a.Revoked, "")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Kind, a.Person, a.Workspace, strings.Join(a.Scopes, ","), oneLine(who, 40),
			when(a.Created, ""), when(a.LastUsed, "never"), exp)
	}
	tw.Flush()
	if len(list) == 0 {
		fmt.Fprintln(c.Stderr, "no tokens or OAuth grants")
	}
	return exitOK
}

// oneLine shortens s to n characters on one line (a client's name is
// chosen by whoever registered it).
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		if n < 1 {
			return ""
		}
		return string(r[:n-1]) + "…"
	}
	return s
}

// signInCode prints a one-time sign-in code for the OAuth sign-in page.
func signInCode(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana token signin", flag.ContinueOnError)
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	person := fs.String("person", "", "the person who signs in (required)")
	workspace := fs.String("workspace", "", "the workspace they sign in to (required)")
	ttl := fs.Duration("expires", 10*time.Minute, "how long the code works (once)")
	if code, ok := c.parseFlags(fs, tokenUsage, args); !ok {
		return code
	}
	if *person == "" || *workspace == "" || fs.NArg() > 0 || *ttl <= 0 || *ttl > 24*time.Hour {
		fmt.Fprintln(c.Stderr, "kobana token signin: -person and -workspace are required, -expires between 1s and 24h, and nothing else")
		return exitUsage
	}
	ctx := c.context()
	st, code := c.openStore(ctx, "kobana token signin", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()
	sc := store.NewSignInCode()
	exp := time.Now().Add(*ttl)
	if err := st.CreateSignInCode(ctx, store.SignInCode{Hash: store.HashToken(sc), Person: *person, Workspace: *workspace, Expires: exp}); err != nil {
		fmt.Fprintf(c.Stderr, "kobana token signin: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(c.Stdout, sc)
	fmt.Fprintf(c.Stderr, "sign-in code for %s in workspace %s, once, until %s\n", *person, *workspace, exp.UTC().Format(time.RFC3339))
	return exitOK
}
