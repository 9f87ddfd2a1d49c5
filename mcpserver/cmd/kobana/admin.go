package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

func init() {
	register("init", "set up a fresh store: the organization, its first workspace, the owner and the owner's token", initCommand)
	register("admin", "manage organizations, workspaces (plan limits, mail domain), people and roles (admin show|organization|workspace|person|member|rotate-secret-key …)", adminCommand)
}

const initUsage = `usage: kobana init -organization NAME -workspace NAME -owner NAME -email ADDRESS [-db PATH|URL] [flags]

Sets up a fresh store (an empty SQLite file, or a PostgreSQL database) for
its first use: the organization, its first workspace with its plan limits,
the owner (a person with the role owner there) and the owner's first
token, read-write. The token is printed once on standard output, and kept
only as a hash; what was created is described on standard error. Later,
kobana admin manages organizations, workspaces, people and roles, and
kobana token mints and revokes tokens.

flags:
`

const adminUsage = `usage: kobana admin show [-db PATH|URL] [-json]
       kobana admin organization create -name NAME [-id ID]
       kobana admin workspace create -organization ID -name NAME [-slug SLUG] [-id ID] [plan flags]
       kobana admin workspace set -workspace ID [-name NAME] [-mail-domain DOMAIN] [plan flags]
       kobana admin person create -organization ID -name NAME -email ADDRESS [-id ID]
       kobana admin member set -workspace ID -person ID -role owner|operator|viewer
       kobana admin member remove -workspace ID -person ID
       kobana admin rotate-secret-key      (the new key in KOBANA_NEW_SECRET_KEY)

Manages the store's organizations, workspaces (their plan: monthly e-mails,
retention days and the other limits; their own mail domain), people and
their roles, without editing the database. Each takes -db (default
kobana.db). Roles: an owner may run every tool, an operator every tool but
the administrative ones, a viewer only the read tools; removing a member
stops their tokens for the workspace. rotate-secret-key seals every
workspace secret again with the key in KOBANA_NEW_SECRET_KEY (64 hex
digits); start kobana serve with that key in KOBANA_SECRET_KEY afterwards.
`

// roles are the roles kobana admin member set accepts.
var roles = []string{"owner", "operator", "viewer"}

// limitFlags are the flags of a workspace's plan and its limits.
type limitFlags struct {
	fs                *flag.FlagSet
	plan, environment string
	limits            inbox.Limits
}

func (p *limitFlags) register(fs *flag.FlagSet) {
	p.fs = fs
	fs.StringVar(&p.plan, "plan", "custom", "the plan's name, shown to the workspace's members")
	fs.StringVar(&p.environment, "environment", "production", "kobana.env of the workspace's workflows: development, sandbox or production")
	fs.IntVar(&p.limits.EmailsPerMonth, "emails-per-month", 0, "e-mails the workspace may receive a calendar month (0: no limit; beyond, mail is refused with quota)")
	fs.IntVar(&p.limits.RetentionDays, "retention-days", 0, "days raw messages are kept before they are purged (0: kept)")
	fs.IntVar(&p.limits.Inboxes, "inboxes", 0, "inboxes the workspace may have (0: no limit)")
	fs.IntVar(&p.limits.Agents, "agents", 0, "agents the workspace may have (0: no limit)")
	fs.IntVar(&p.limits.Webhooks, "webhooks", 0, "webhooks the workspace may have (0: no limit)")
	fs.Int64Var(&p.limits.MaxAttachmentBytes, "max-attachment-bytes", 0, "largest attachment accepted, in bytes (0: no limit)")
}

// check reports a limit or environment that cannot be.
func (p *limitFlags) check() error {
	l := p.limits
	for name, v := range map[string]int64{"-emails-per-month": int64(l.EmailsPerMonth), "-retention-days": int64(l.RetentionDays),
		"-inboxes": int64(l.Inboxes), "-agents": int64(l.Agents), "-webhooks": int64(l.Webhooks), "-max-attachment-bytes": l.MaxAttachmentBytes} {
		if v < 0 {
			return fmt.Errorf("%s must be 0 or more, got %d", name, v)
		}
	}
	switch p.environment {
	case "development", "sandbox", "production":
		return nil
	}
	return fmt.Errorf("-environment must be development, sandbox or production, got %q", p.environment)
}

// apply sets on w what the flags given on the command line say (all of
// them when all is true, for a new workspace).
func (p *limitFlags) apply(w *inbox.Workspace, all bool) {
	set := func(name string) bool { return all || flagSet(p.fs, name) }
	if set("plan") {
		w.Plan = p.plan
	}
	if set("environment") {
		w.Environment = p.environment
	}
	l := &w.Limits
	if set("emails-per-month") {
		l.EmailsPerMonth = p.limits.EmailsPerMonth
	}
	if set("retention-days") {
		l.RetentionDays = p.limits.RetentionDays
	}
	if set("inboxes") {
		l.Inboxes = p.limits.Inboxes
	}
	if set("agents") {
		l.Agents = p.limits.Agents
	}
	if set("webhooks") {
		l.Webhooks = p.limits.Webhooks
	}
	if set("max-attachment-bytes") {
		l.MaxAttachmentBytes = p.limits.MaxAttachmentBytes
	}
}

// adminStore is what kobana init and admin need of a store.
type adminStore interface {
	store.Store
	store.Directory
}

// openAdminStore opens -db for an admin command.
func (c *Command) openAdminStore(ctx context.Context, who, db string) (adminStore, int) {
	st, code := c.openStore(ctx, who, db)
	if st == nil {
		return nil, code
	}
	as, ok := st.(adminStore)
	if !ok {
		st.Close()
		fmt.Fprintf(c.Stderr, "%s: the store %T cannot list its organizations\n", who, st)
		return nil, exitFailure
	}
	return as, exitOK
}

var (
	slugRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	idRe   = regexp.MustCompile(`^[a-z]+_[a-z0-9_-]{1,60}$`)
	nonID  = regexp.MustCompile(`[^a-z0-9]+`)
)

// slugOf makes a DNS label of a name ("Finance BR" → "finance-br").
func slugOf(name string) string {
	s := strings.Trim(nonID.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}

// workspaceSlug is the slug a workspace gets: slug when given, else one
// made of its name; checked as the label of its inboxes' addresses.
func workspaceSlug(slug, name string) (string, error) {
	if slug == "" {
		slug = slugOf(name)
	}
	if !slugRe.MatchString(slug) {
		return "", fmt.Errorf("-slug %q: 1-63 lower-case letters, digits or hyphens, not starting or ending with a hyphen", slug)
	}
	return slug, nil
}

// newID is the id a record gets: id when given (checked), else prefix_
// and the slug of name.
func newID(prefix, id, name string) (string, error) {
	if id == "" {
		s := strings.ReplaceAll(slugOf(name), "-", "_")
		if s == "" {
			s = strings.TrimPrefix(inbox.NewID(""), "_")
		}
		id = prefix + "_" + s
	}
	if !idRe.MatchString(id) || !strings.HasPrefix(id, prefix+"_") {
		return "", fmt.Errorf("id %q: %s_ followed by lower-case letters, digits, '_' or '-'", id, prefix)
	}
	return id, nil
}

func initCommand(c *Command, args []string) int {
	fs := flag.NewFlagSet("kobana init", flag.ContinueOnError)
	db := fs.String("db", "kobana.db", "the store: a SQLite file (created if missing) or a postgres:// URL")
	orgName := fs.String("organization", "", "the organization's name (required)")
	wsName := fs.String("workspace", "", "its first workspace's name (required)")
	slug := fs.String("slug", "", "the workspace's slug, the label of its inboxes' addresses LOCAL@SLUG.MAILDOMAIN (default: from its name)")
	owner := fs.String("owner", "", "the owner's name (required)")
	email := fs.String("email", "", "the owner's e-mail address (required)")
	expires := fs.Duration("expires", 0, "the owner token's lifetime, e.g. 720h; 0 never expires")
	var plan limitFlags
	plan.register(fs)
	if code, ok := c.parseFlags(fs, initUsage, args); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "kobana init: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case *orgName == "" || *wsName == "" || *owner == "" || *email == "":
		return fail("-organization, -workspace, -owner and -email are required")
	case !strings.Contains(*email, "@"):
		return fail("-email %q is not an e-mail address", *email)
	case *expires < 0:
		return fail("-expires must be positive")
	}
	if err := plan.check(); err != nil {
		return fail("%v", err)
	}
	var err error
	if *slug, err = workspaceSlug(*slug, *wsName); err != nil {
		return fail("%v", err)
	}
	orgID, err := newID("org", "", *orgName)
	if err != nil {
		return fail("%v", err)
	}
	wsID, _ := newID("ws", "", *slug)
	personID, _ := newID("per", "", strings.Fields(*owner)[0])

	ctx := c.context()
	st, code := c.openAdminStore(ctx, "kobana init", *db)
	if st == nil {
		return code
	}
	defer st.Close()
	orgs, err := st.ListOrganizations(ctx)
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana init: %v\n", err)
		return exitFailure
	}
	if len(orgs) > 0 {
		fmt.Fprintf(c.Stderr, "kobana init: the store %s is not fresh: it has %d organization(s), %s first; manage it with kobana admin\n", *db, len(orgs), orgs[0].ID)
		return exitFailure
	}
	now := time.Now().UTC()
	w := inbox.Workspace{ID: wsID, OrganizationID: orgID, Name: *wsName, Slug: *slug, CreatedAt: now}
	plan.apply(&w, true)
	steps := []func() error{
		func() error { return st.PutOrganization(ctx, store.Organization{ID: orgID, Name: *orgName}) },
		func() error { return putWorkspace(ctx, st, w) },
		func() error {
			return st.PutPerson(ctx, store.Person{ID: personID, Organization: orgID, Name: *owner, Email: *email})
		},
		func() error { return st.SetMembership(ctx, wsID, personID, "owner") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			fmt.Fprintf(c.Stderr, "kobana init: %v\n", err)
			return exitFailure
		}
	}
	var exp time.Time
	if *expires > 0 {
		exp = now.Add(*expires)
	}
	tok, err := st.CreateToken(ctx, store.NewToken{Person: personID, Workspace: wsID, Scopes: []string{"read", "write"}, Expires: exp, Label: "kobana init"})
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana init: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(c.Stdout, tok)
	fmt.Fprintf(c.Stderr, "organization %s (%s), workspace %s (%s, slug %s, plan %s: %s), owner %s (%s <%s>); the token above is the owner's, read-write, shown once\n",
		orgID, *orgName, wsID, *wsName, *slug, w.Plan, describeLimits(w.Limits), personID, *owner, *email)
	return exitOK
}

// putWorkspace writes a workspace: the identity the tokens name and the
// Inbox's record of its plan.
func putWorkspace(ctx context.Context, st store.Store, w inbox.Workspace) error {
	if err := st.PutWorkspace(ctx, store.Workspace{ID: w.ID, Organization: w.OrganizationID, Name: w.Name, Slug: w.Slug}); err != nil {
		return err
	}
	return inbox.NewRepo(st).Workspaces.Put(ctx, w.ID, w)
}

// describeLimits says a workspace's limits in words.
func describeLimits(l inbox.Limits) string {
	n := func(v int64, unit string) string {
		if v == 0 {
			return "no limit of " + unit
		}
		return fmt.Sprintf("%d %s", v, unit)
	}
	retention := "raw messages kept"
	if l.RetentionDays > 0 {
		retention = fmt.Sprintf("raw messages kept %d days", l.RetentionDays)
	}
	return strings.Join([]string{n(int64(l.EmailsPerMonth), "e-mails a month"), retention, n(int64(l.Inboxes), "inboxes"),
		n(int64(l.Agents), "agents"), n(int64(l.Webhooks), "webhooks"), n(l.MaxAttachmentBytes, "attachment bytes")}, ", ")
}

func adminCommand(c *Command, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.Stderr, adminUsage)
		return exitUsage
	}
	verb := args[0]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		verb += " " + args[1]
		args = args[1:]
	}
	run, ok := map[string]func(*Command, []string) int{
		"show":                adminShow,
		"organization create": adminOrganizationCreate,
		"workspace create":    adminWorkspaceCreate,
		"workspace set":       adminWorkspaceSet,
		"person create":       adminPersonCreate,
		"member set":          adminMemberSet,
		"member remove":       adminMemberRemove,
		"rotate-secret-key":   adminRotateSecretKey,
	}[verb]
	switch {
	case ok:
		return run(c, args[1:])
	case verb == "-h" || verb == "-help" || verb == "--help":
		fmt.Fprint(c.Stdout, adminUsage)
		return exitOK
	}
	fmt.Fprintf(c.Stderr, "kobana admin: unknown action %q\n%s", verb, adminUsage)
	return exitUsage
}

// adminAction is the parsing, store and failure handling every admin
// action shares: its flags are registered on fs by the caller.
type adminAction struct {
	c    *Command
	fs   *flag.FlagSet
	db   *string
	name string
}

func newAdminAction(c *Command, name string) *adminAction {
	a := &adminAction{c: c, name: "kobana admin " + name, fs: flag.NewFlagSet("kobana admin "+name, flag.ContinueOnError)}
	a.db = a.fs.String("db", "kobana.db", "the store: a SQLite file or a postgres:// URL")
	return a
}

// parse parses args; required names the flags that must be given.
func (a *adminAction) parse(args []string, required ...string) (int, bool) {
	if code, ok := a.c.parseFlags(a.fs, adminUsage+"\nflags:\n", args); !ok {
		return code, false
	}
	if a.fs.NArg() > 0 {
		return a.usage("unexpected argument %q", a.fs.Arg(0)), false
	}
	for _, r := range required {
		if f := a.fs.Lookup(r); f == nil || f.Value.String() == "" {
			return a.usage("-%s is required", r), false
		}
	}
	return exitOK, true
}

func (a *adminAction) usage(format string, args ...any) int {
	fmt.Fprintf(a.c.Stderr, a.name+": "+format+"\n", args...)
	return exitUsage
}

func (a *adminAction) failed(err error) int {
	fmt.Fprintf(a.c.Stderr, "%s: %v\n", a.name, err)
	return exitFailure
}

// store opens -db; the caller closes it.
func (a *adminAction) store() (adminStore, int) {
	return a.c.openAdminStore(a.c.context(), a.name, *a.db)
}

// free answers, and returns false for, an id a lookup found (its error
// nil: the id is taken) or could not look up; it returns true when the id
// is free (store.ErrNotFound).
func (a *adminAction) free(what, id string, lookup error) (int, bool) {
	switch {
	case lookup == nil:
		return a.failed(fmt.Errorf("%s %s exists; pass another -id", what, id)), false
	case !errors.Is(lookup, store.ErrNotFound):
		return a.failed(lookup), false
	}
	return exitOK, true
}

func adminOrganizationCreate(c *Command, args []string) int {
	a := newAdminAction(c, "organization create")
	name := a.fs.String("name", "", "the organization's name (required)")
	id := a.fs.String("id", "", "its id (default org_ and the name's slug)")
	if code, ok := a.parse(args, "name"); !ok {
		return code
	}
	orgID, err := newID("org", *id, *name)
	if err != nil {
		return a.usage("%v", err)
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	ctx := c.context()
	orgs, err := st.ListOrganizations(ctx)
	if err != nil {
		return a.failed(err)
	}
	for _, o := range orgs {
		if o.ID == orgID {
			return a.failed(fmt.Errorf("organization %s exists (%s); pass another -id", orgID, o.Name))
		}
	}
	if err := st.PutOrganization(ctx, store.Organization{ID: orgID, Name: *name}); err != nil {
		return a.failed(err)
	}
	fmt.Fprintln(c.Stdout, orgID)
	return exitOK
}

func adminWorkspaceCreate(c *Command, args []string) int {
	a := newAdminAction(c, "workspace create")
	org := a.fs.String("organization", "", "the organization it belongs to (required)")
	name := a.fs.String("name", "", "the workspace's name (required)")
	slug := a.fs.String("slug", "", "its slug, the label of its inboxes' addresses LOCAL@SLUG.MAILDOMAIN (default: from its name)")
	id := a.fs.String("id", "", "its id (default ws_ and the slug)")
	var plan limitFlags
	plan.register(a.fs)
	if code, ok := a.parse(args, "organization", "name"); !ok {
		return code
	}
	if err := plan.check(); err != nil {
		return a.usage("%v", err)
	}
	var err error
	if *slug, err = workspaceSlug(*slug, *name); err != nil {
		return a.usage("%v", err)
	}
	wsID, err := newID("ws", *id, *slug)
	if err != nil {
		return a.usage("%v", err)
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	ctx := c.context()
	if code, ok := a.free("workspace", wsID, getErr(st.GetWorkspace(ctx, wsID))); !ok {
		return code
	}
	all, err := st.ListWorkspaces(ctx, "")
	if err != nil {
		return a.failed(err)
	}
	for _, w := range all {
		if w.Slug == *slug {
			return a.failed(fmt.Errorf("workspace %s has the slug %s already: mail could reach neither; pass another -slug", w.ID, *slug))
		}
	}
	w := inbox.Workspace{ID: wsID, OrganizationID: *org, Name: *name, Slug: *slug, CreatedAt: time.Now().UTC()}
	plan.apply(&w, true)
	if err := putWorkspace(ctx, st, w); err != nil {
		return a.failed(err)
	}
	fmt.Fprintln(c.Stdout, wsID)
	fmt.Fprintf(c.Stderr, "workspace %s (%s, slug %s) in %s, plan %s: %s\n", wsID, *name, *slug, *org, w.Plan, describeLimits(w.Limits))
	return exitOK
}

// getErr keeps the error of a lookup.
func getErr[T any](_ T, err error) error { return err }

func adminWorkspaceSet(c *Command, args []string) int {
	a := newAdminAction(c, "workspace set")
	wsID := a.fs.String("workspace", "", "the workspace (required)")
	name := a.fs.String("name", "", "a new name")
	domain := a.fs.String("mail-domain", "", "a mail domain of the workspace's own: its new inboxes receive at LOCAL@DOMAIN (point the domain's MX record at the server)")
	var plan limitFlags
	plan.register(a.fs)
	if code, ok := a.parse(args, "workspace"); !ok {
		return code
	}
	if err := plan.check(); err != nil {
		return a.usage("%v", err)
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	ctx := c.context()
	idw, err := st.GetWorkspace(ctx, *wsID)
	if err != nil {
		return a.failed(fmt.Errorf("workspace %s: %w", *wsID, err))
	}
	repo := inbox.NewRepo(st)
	w, err := repo.Workspaces.Get(ctx, *wsID, *wsID)
	if errors.Is(err, store.ErrNotFound) {
		w = inbox.Workspace{ID: idw.ID, OrganizationID: idw.Organization, Name: idw.Name, Slug: idw.Slug, CreatedAt: time.Now().UTC()}
	} else if err != nil {
		return a.failed(err)
	}
	plan.apply(&w, false)
	if *name != "" {
		w.Name = *name
	}
	if err := putWorkspace(ctx, st, w); err != nil {
		return a.failed(err)
	}
	if *domain != "" {
		if err := inbox.ClaimMailDomain(ctx, st, w.ID, *domain, time.Now()); err != nil {
			return a.failed(err)
		}
		if w, err = repo.Workspaces.Get(ctx, *wsID, *wsID); err != nil {
			return a.failed(err)
		}
	}
	own := ""
	if w.MailDomain != "" {
		own = ", its own mail domain " + w.MailDomain
	}
	fmt.Fprintf(c.Stderr, "workspace %s (%s), plan %s: %s%s\n", w.ID, w.Name, w.Plan, describeLimits(w.Limits), own)
	return exitOK
}

func adminPersonCreate(c *Command, args []string) int {
	a := newAdminAction(c, "person create")
	org := a.fs.String("organization", "", "the organization the person belongs to (required)")
	name := a.fs.String("name", "", "the person's name (required)")
	email := a.fs.String("email", "", "their e-mail address (required)")
	id := a.fs.String("id", "", "their id (default per_ and their first name)")
	if code, ok := a.parse(args, "organization", "name", "email"); !ok {
		return code
	}
	if !strings.Contains(*email, "@") {
		return a.usage("-email %q is not an e-mail address", *email)
	}
	personID, err := newID("per", *id, strings.Fields(*name)[0])
	if err != nil {
		return a.usage("%v", err)
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	ctx := c.context()
	if code, ok := a.free("person", personID, getErr(st.GetPerson(ctx, personID))); !ok {
		return code
	}
	if err := st.PutPerson(ctx, store.Person{ID: personID, Organization: *org, Name: *name, Email: *email}); err != nil {
		return a.failed(err)
	}
	fmt.Fprintln(c.Stdout, personID)
	return exitOK
}

func adminMemberSet(c *Command, args []string) int {
	a := newAdminAction(c, "member set")
	ws := a.fs.String("workspace", "", "the workspace (required)")
	person := a.fs.String("person", "", "the person (required)")
	role := a.fs.String("role", "", "owner, operator or viewer (required)")
	if code, ok := a.parse(args, "workspace", "person", "role"); !ok {
		return code
	}
	if !slices.Contains(roles, *role) {
		return a.usage("-role %q: one of %s", *role, strings.Join(roles, ", "))
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	if err := st.SetMembership(c.context(), *ws, *person, store.Role(*role)); err != nil {
		return a.failed(err)
	}
	fmt.Fprintf(c.Stderr, "%s is %s of workspace %s\n", *person, *role, *ws)
	return exitOK
}

func adminMemberRemove(c *Command, args []string) int {
	a := newAdminAction(c, "member remove")
	ws := a.fs.String("workspace", "", "the workspace (required)")
	person := a.fs.String("person", "", "the person (required)")
	if code, ok := a.parse(args, "workspace", "person"); !ok {
		return code
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	if err := st.RemoveMembership(c.context(), *ws, *person); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return a.failed(fmt.Errorf("%s is not a member of workspace %s", *person, *ws))
		}
		return a.failed(err)
	}
	fmt.Fprintf(c.Stderr, "%s is no longer a member of workspace %s; their tokens for it no longer authenticate\n", *person, *ws)
	return exitOK
}

// adminView is what kobana admin show prints.
type adminView struct {
	Organizations []store.Organization `json:"organizations"`
	Workspaces    []inbox.Workspace    `json:"workspaces"`
	People        []store.Person       `json:"people"`
	Memberships   []store.Member       `json:"memberships"`
}

func adminShow(c *Command, args []string) int {
	a := newAdminAction(c, "show")
	asJSON := a.fs.Bool("json", false, "print it as JSON")
	if code, ok := a.parse(args); !ok {
		return code
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	ctx := c.context()
	var v adminView
	var err error
	if v.Organizations, err = st.ListOrganizations(ctx); err != nil {
		return a.failed(err)
	}
	ids, err := st.ListWorkspaces(ctx, "")
	if err != nil {
		return a.failed(err)
	}
	repo := inbox.NewRepo(st)
	for _, iw := range ids {
		w, err := repo.Workspaces.Get(ctx, iw.ID, iw.ID)
		if errors.Is(err, store.ErrNotFound) {
			w = inbox.Workspace{ID: iw.ID, OrganizationID: iw.Organization, Name: iw.Name, Slug: iw.Slug}
		} else if err != nil {
			return a.failed(err)
		}
		v.Workspaces = append(v.Workspaces, w)
	}
	if v.People, err = st.ListPeople(ctx, ""); err != nil {
		return a.failed(err)
	}
	if v.Memberships, err = st.ListMemberships(ctx, ""); err != nil {
		return a.failed(err)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(c.Stdout, string(b))
		return exitOK
	}
	tw := tabwriter.NewWriter(c.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORGANIZATION\tNAME")
	for _, o := range v.Organizations {
		fmt.Fprintf(tw, "%s\t%s\n", o.ID, o.Name)
	}
	fmt.Fprintln(tw, "\nWORKSPACE\tORGANIZATION\tNAME\tSLUG\tMAIL DOMAIN\tPLAN\tE-MAILS/MONTH\tRETENTION DAYS")
	for _, w := range v.Workspaces {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", w.ID, w.OrganizationID, w.Name, w.Slug, orDash(w.MailDomain), orDash(w.Plan), limit(w.Limits.EmailsPerMonth), limit(w.Limits.RetentionDays))
	}
	fmt.Fprintln(tw, "\nPERSON\tORGANIZATION\tNAME\tE-MAIL")
	for _, p := range v.People {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ID, p.Organization, p.Name, p.Email)
	}
	fmt.Fprintln(tw, "\nWORKSPACE\tPERSON\tROLE")
	for _, m := range v.Memberships {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Workspace, m.Person, m.Role)
	}
	tw.Flush()
	return exitOK
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func limit(n int) string {
	if n == 0 {
		return "no limit"
	}
	return fmt.Sprint(n)
}

func adminRotateSecretKey(c *Command, args []string) int {
	a := newAdminAction(c, "rotate-secret-key")
	if code, ok := a.parse(args); !ok {
		return code
	}
	raw := c.getenv("KOBANA_NEW_SECRET_KEY")
	key, err := hex.DecodeString(raw)
	if raw == "" || err != nil || len(key) != store.SecretKeySize {
		return a.usage("KOBANA_NEW_SECRET_KEY must hold the new key, 64 hex digits (e.g. openssl rand -hex 32)")
	}
	st, code := a.store()
	if st == nil {
		return code
	}
	defer st.Close()
	keys, ok := st.(store.SecretKeys)
	if !ok {
		return a.failed(fmt.Errorf("the store %T cannot seal its secrets again", st))
	}
	ctx := c.context()
	if err := keys.CheckSecretKey(ctx); err != nil {
		return a.failed(fmt.Errorf("%v\n%s", err, secretKeyHelp(c)))
	}
	n, err := keys.ResealSecrets(ctx, key)
	if err != nil {
		return a.failed(err)
	}
	fmt.Fprintf(c.Stderr, "sealed %d secret(s) again with the new key (fingerprint %s): start every kobana on this store with it in KOBANA_SECRET_KEY; the old key opens them no more\n", n, store.KeyFingerprint(key))
	return exitOK
}
