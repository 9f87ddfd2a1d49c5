package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// A product with one read tool, served to a client that speaks 2026-07-28.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "example.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	st.PutOrganization(ctx, store.Organization{ID: "org", Name: "Org"})
	st.PutWorkspace(ctx, store.Workspace{ID: "ws", Organization: "org", Name: "Main"})
	st.PutPerson(ctx, store.Person{ID: "ana", Organization: "org", Name: "Ana"})
	st.SetMembership(ctx, "ws", "ana", "viewer")
	token, _ := st.CreateToken(ctx, store.NewToken{Person: "ana", Workspace: "ws", Scopes: []string{"read"}})

	type whoami struct {
		Person    string `json:"person"`
		Workspace string `json:"workspace"`
	}
	product := &mcpserver.Product{
		Name:   "hello",
		Policy: mcpserver.Policy{DeclineCode: "user_declined"},
		Tools: []mcpserver.Tool{
			mcpserver.NewTool(mcpserver.ToolSpec{Name: "whoami", Description: "Says who the token speaks for.", Access: mcpserver.Read},
				func(ctx context.Context, c *mcpserver.Caller, _ struct{}) (whoami, error) {
					return whoami{Person: c.Person, Workspace: c.Workspace}, nil
				}),
		},
	}
	srv, err := mcpserver.New(mcpserver.Options{Store: st, Products: []*mcpserver.Product{product}})
	if err != nil {
		log.Fatal(err)
	}
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, token, serverEnd); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).
		Connect(ctx, clientEnd, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: {"person":"ana","workspace":"ws"}
}
