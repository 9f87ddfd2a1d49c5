package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
)

type idIn struct {
	ID string `json:"id"`
}

type idOut struct {
	ID string `json:"id"`
}

func tool(name string, access mcpserver.Access) mcpserver.Tool {
	return mcpserver.NewTool(mcpserver.ToolSpec{Name: name, Description: "Does " + name + ".", Access: access},
		func(ctx context.Context, c *mcpserver.Caller, in idIn) (idOut, error) { return idOut(in), nil })
}

func read(context.Context, *mcpserver.Caller, string, map[string]string) (any, error) {
	return idOut{}, nil
}

func prompt(context.Context, *mcpserver.Caller, map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{}, nil
}

// valid returns a product New accepts; each case breaks one thing.
func valid() *mcpserver.Product {
	return &mcpserver.Product{
		Name:   "shop",
		Policy: mcpserver.Policy{DeclineCode: "declined"},
		Tools:  []mcpserver.Tool{tool("orders_get", mcpserver.Read), tool("orders_list", mcpserver.Read), tool("orders_delete", mcpserver.Write)},
		Resources: []mcpserver.Resource{
			{URI: "kobana://shop/catalog", Name: "catalog", Tool: "orders_list", Read: read},
			{Template: "kobana://shop/orders/{id}", Name: "order", Tool: "orders_get", Read: read},
			{Template: "kobana://shop/orders/{id}/lines/{line}", Name: "line", Tool: "orders_get", Read: read},
		},
		Prompts: []mcpserver.Prompt{{Name: "review", Tools: []string{"orders_get"}, Arguments: []mcpserver.PromptArgument{{Name: "order_id"}}, Get: prompt}},
		Completer: &mcpserver.IDCompleter{
			Owner:     func(c *mcpserver.Caller) string { return c.Workspace },
			Templates: map[string]mcpserver.IDSource{"kobana://shop/orders/{id}": {Kind: "order", Tool: "orders_list"}},
			Prompts:   map[string]mcpserver.IDSource{"order_id": {Kind: "order", Tool: "orders_list"}},
		},
	}
}

func TestNewRefusesWhatItCannotServe(t *testing.T) {
	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	records := e.st
	newWith := func(products ...*mcpserver.Product) error {
		for _, p := range products {
			if p != nil && p.Completer != nil {
				p.Completer.Records = records
			}
		}
		_, err := mcpserver.New(mcpserver.Options{Store: e.st, Products: products})
		return err
	}
	if err := newWith(valid()); err != nil {
		t.Fatalf("the valid product is refused: %v", err)
	}
	type outOfSchema struct {
		Month string `json:"month" pattern:"(["`
	}
	cases := []struct {
		name   string
		break_ func(p *mcpserver.Product)
		want   string
	}{
		{"tool name with a space", func(p *mcpserver.Product) { p.Tools[0] = tool("orders get", mcpserver.Read) }, `tool name "orders get"`},
		{"tool name too long", func(p *mcpserver.Product) { p.Tools = append(p.Tools, tool(strings.Repeat("x", 129), mcpserver.Read)) }, "1 to 128"},
		{"duplicate tool", func(p *mcpserver.Product) { p.Tools = append(p.Tools, tool("orders_get", mcpserver.Read)) }, "tool orders_get is declared twice"},
		{"tool not from NewTool", func(p *mcpserver.Product) {
			p.Tools = append(p.Tools, mcpserver.Tool{ToolSpec: mcpserver.ToolSpec{Name: "raw", Description: "x"}})
		}, `tool "raw" was not built with NewTool`},
		{"tool without description", func(p *mcpserver.Product) {
			p.Tools[2].Description = " "
		}, "tool orders_delete has no Description"},
		{"destructive read tool", func(p *mcpserver.Product) { p.Tools[0].Destructive = true }, "tool orders_get is Destructive yet its Access is Read"},
		{"bad constraint tag", func(p *mcpserver.Product) {
			p.Tools = append(p.Tools, mcpserver.NewTool(mcpserver.ToolSpec{Name: "bad", Description: "x"},
				func(context.Context, *mcpserver.Caller, outOfSchema) (idOut, error) { return idOut{}, nil }))
		}, "tool bad: input schema: field month: tag pattern"},
		{"resource read by an unknown tool", func(p *mcpserver.Product) { p.Resources[1].Tool = "orders_fetch" }, `read by tool "orders_fetch", which no product declares`},
		{"resource without a name", func(p *mcpserver.Product) { p.Resources[0].Name = "" }, "resource kobana://shop/catalog has no Name"},
		{"resource without Read", func(p *mcpserver.Product) { p.Resources[0].Read = nil }, "has no Read"},
		{"variable inside a segment", func(p *mcpserver.Product) { p.Resources[1].Template = "kobana://shop/orders/ord-{id}" }, "a variable must be a whole path segment"},
		{"operator variable", func(p *mcpserver.Product) { p.Resources[1].Template = "kobana://shop/orders/{+id}" }, "variable {+id}"},
		{"variable twice", func(p *mcpserver.Product) { p.Resources[2].Template = "kobana://shop/orders/{id}/lines/{id}" }, "variable {id} appears twice"},
		{"template without variables", func(p *mcpserver.Product) { p.Resources[1].Template = "kobana://shop/orders/all" }, "no {variable}: declare it as a URI"},
		{"braces in a URI", func(p *mcpserver.Product) { p.Resources[0].URI = "kobana://shop/{catalog}" }, "braces belong in a Template"},
		{"relative URI", func(p *mcpserver.Product) { p.Resources[0].URI = "catalog" }, "not an absolute URI"},
		{"ambiguous templates", func(p *mcpserver.Product) {
			p.Resources = append(p.Resources, mcpserver.Resource{Template: "kobana://shop/orders/{order}", Name: "o2", Tool: "orders_get", Read: read})
		}, "resources kobana://shop/orders/{id} and kobana://shop/orders/{order} match the same URIs"},
		{"prompt relying on an unknown tool", func(p *mcpserver.Product) { p.Prompts[0].Tools = []string{"orders_view"} }, `prompt review relies on tool "orders_view"`},
		{"duplicate prompt argument", func(p *mcpserver.Product) {
			p.Prompts[0].Arguments = append(p.Prompts[0].Arguments, mcpserver.PromptArgument{Name: "order_id"})
		}, "declares argument order_id twice"},
		{"completer template that is not the product's", func(p *mcpserver.Product) {
			p.Completer.Templates["kobana://shop/invoices/{id}"] = mcpserver.IDSource{Kind: "invoice", Tool: "orders_list"}
		}, "template kobana://shop/invoices/{id} is no resource template of this product"},
		{"completer template without {id}", func(p *mcpserver.Product) {
			p.Resources[1].Template = "kobana://shop/orders/{order_id}"
			p.Completer.Templates = map[string]mcpserver.IDSource{"kobana://shop/orders/{order_id}": {Kind: "order", Tool: "orders_list"}}
		}, "has no {id} variable (it has {order_id})"},
		{"completer source tool unknown", func(p *mcpserver.Product) {
			p.Completer.Prompts["order_id"] = mcpserver.IDSource{Kind: "order", Tool: "orders_index"}
		}, `IDSource tool "orders_index" is declared by no product`},
		{"completer argument of no prompt", func(p *mcpserver.Product) {
			p.Completer.Prompts["customer_id"] = mcpserver.IDSource{Kind: "customer", Tool: "orders_list"}
		}, `argument "customer_id" is an argument of none of this product's prompts`},
		{"no decline code", func(p *mcpserver.Product) { p.Policy.DeclineCode = "" }, "Policy.DeclineCode is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.break_(p)
			err := newWith(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "product shop") && !strings.Contains(err.Error(), "resources ") {
				t.Fatalf("got %v\nwant an error naming the product and containing %q", err, tc.want)
			}
		})
	}
	t.Run("a tool declared by two products", func(t *testing.T) {
		other := valid()
		other.Name = "shop2"
		other.Resources, other.Prompts, other.Completer = nil, nil, nil
		err := newWith(valid(), other)
		if err == nil || !strings.Contains(err.Error(), "product shop2: tool orders_get is also declared by product shop") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("every problem at once", func(t *testing.T) {
		p := valid()
		p.Tools[0] = tool("bad name", mcpserver.Read)
		p.Resources[0].Name = ""
		err := newWith(p)
		if err == nil || !strings.Contains(err.Error(), "bad name") || !strings.Contains(err.Error(), "has no Name") {
			t.Fatalf("got %v, want both problems", err)
		}
	})
}

// The role table is security policy: no caller can change it, before or
// after New.
func TestRoleTablesCannotBeChangedFromOutside(t *testing.T) {
	roles := mcpserver.DefaultRoles()
	roles["viewer"] = mcpserver.Admin
	roles["guest"] = mcpserver.Admin
	if got := mcpserver.DefaultRoles(); got["viewer"] != mcpserver.Read || len(got) != 3 {
		t.Fatalf("DefaultRoles changed from outside: %v", got)
	}

	e := newEnv(t, mcpserver.Policy{DeclineCode: "user_declined"})
	mine := map[store.Role]mcpserver.Access{"owner": mcpserver.Admin, "viewer": mcpserver.Read}
	srv, err := mcpserver.New(mcpserver.Options{Store: e.st, Roles: mine, Products: []*mcpserver.Product{e.toy.product(mcpserver.Policy{DeclineCode: "user_declined"})}})
	if err != nil {
		t.Fatal(err)
	}
	mine["viewer"] = mcpserver.Admin // after New: no effect
	url := serveServer(t, srv)
	cs := e.connectURL(t, url, e.tokens["viewer"])
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes_delete", Arguments: map[string]any{"id": "n1"}})
	if err != nil || !res.IsError || !strings.HasPrefix(textOf(res), "permission_denied: ") {
		t.Fatalf("a viewer ran notes_delete after the caller's map changed: %s %v", textOf(res), err)
	}

	if _, err := mcpserver.New(mcpserver.Options{Store: e.st, Roles: map[store.Role]mcpserver.Access{"owner": 7}}); err == nil || !strings.Contains(err.Error(), `role "owner" has Access 7`) {
		t.Fatalf("an unknown access level was accepted: %v", err)
	}
}

// connectURL opens a 2025-11-25 session to url with token.
func (e *env) connectURL(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, mcptest.HTTP(url, token), mcptest.Legacy, nil)
}
