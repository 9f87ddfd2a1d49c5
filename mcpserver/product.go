package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Product is one MCP product served by the framework.
type Product struct {
	// Name identifies the product ("inbox").
	Name      string
	Tools     []Tool
	Resources []Resource
	Prompts   []Prompt
	// Complete answers completion/complete for this product's prompts and
	// resource templates; nil means Completer's answers.
	Complete CompleteFunc
	// Completer declares where ids are suggested from: New checks that its
	// templates are this product's (with an {id}), its arguments are its
	// prompts', and its tools exist. When Complete is nil it answers
	// completions itself; a Complete of the product's own may delegate to
	// it.
	Completer *IDCompleter
	Policy    Policy
}

// Policy is a product's answer to the confirmation questions the
// specification leaves to each product.
type Policy struct {
	// DeclineCode is the error code of a declined or cancelled
	// confirmation ("user_declined" for Inbox, "USER_DECLINED" for Billing).
	DeclineCode string
	// LegacyRunsDirectly lets destructive tools run without asking when the
	// client cannot be asked (era 2025, or no elicitation-form support):
	// confirmation is then left to the client. When false such calls answer
	// confirmation_required and nothing runs.
	LegacyRunsDirectly bool
	// Where names what a call acts in, for the confirmation question:
	// "workspace <id>" when nil (Inbox); Billing, whose records belong to
	// the organization, says "organization <id>".
	Where func(c *Caller) string
}

// where is the place a confirmation question names.
func (p Policy) where(c *Caller) string {
	if p.Where != nil {
		return p.Where(c)
	}
	return "workspace " + c.Workspace
}

// ToolSpec declares a tool.
type ToolSpec struct {
	Name  string
	Title string
	// Description tells a model when to use the tool and what it returns.
	Description string
	Access      Access
	// Destructive tools delete, send something outside, rotate a secret or
	// change who may act; they are confirmed with the user.
	Destructive bool
	// Idempotent tools may be retried safely.
	Idempotent bool
	// OpenWorld tools reach systems outside the workspace.
	OpenWorld bool
}

// Tool is a declared tool with its handler. Build it with NewTool.
type Tool struct {
	ToolSpec
	inputSchema  *jsonschema.Schema
	outputSchema *jsonschema.Schema
	input        *jsonschema.Resolved
	output       *jsonschema.Resolved
	// constrainedOutput: the output schema says more than the Go type
	// guarantees, so results are checked against it.
	constrainedOutput bool
	handler           func(ctx context.Context, c *Caller, args json.RawMessage) (any, error)
	// check runs before a destructive call is confirmed (WithCheck).
	check func(ctx context.Context, c *Caller, args json.RawMessage) error
	// err is what was wrong with the declaration; New reports it.
	err error
}

// WithCheck gives a destructive tool a check that runs whenever the user
// would be asked to confirm it (and before confirmation_required is
// answered): that the records it names exist and the caller may act on
// them, that their state allows the action. Its error is the call's answer,
// as a handler's would be (a *ToolError, or one wrapping ErrNotFound), and
// nothing is asked: no one confirms a call that cannot run. Any other error
// answers confirmation_unavailable. A call carrying a valid confirmation is
// not checked again before its handler, which checks when it runs. In must
// be the tool's input type.
func WithCheck[In any](t Tool, check func(ctx context.Context, c *Caller, in In) error) Tool {
	t.check = func(ctx context.Context, c *Caller, args json.RawMessage) error {
		var v In
		if len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &v); err != nil {
				return &ToolError{Code: "invalid_arguments", Message: err.Error()}
			}
		}
		return check(ctx, c, v)
	}
	return t
}

// NewTool declares a tool whose arguments decode into In and whose
// structured result is Out; both schemas are derived from the Go types
// (`json` tags for names, `jsonschema` tags for descriptions, and the
// constraint tags listed in schema.go: enum, pattern, minLength, maxLength,
// minimum, maximum, minItems, maxItems, format). In must be a struct.
// A declaration the framework cannot serve is reported by New.
// The handler returns a *ToolError (or wraps ErrNotFound) for failures the
// model should see as a tool result.
func NewTool[In, Out any](spec ToolSpec, h func(ctx context.Context, c *Caller, in In) (Out, error)) Tool {
	t := Tool{ToolSpec: spec}
	fail := func(format string, args ...any) Tool {
		t.err = fmt.Errorf("tool %s: "+format, append([]any{spec.Name}, args...)...)
		return t
	}
	in, err := schemaFor[In]()
	if err != nil {
		return fail("input schema: %v", err)
	}
	if in.Type != "object" {
		return fail("input must be an object (a struct), not %s", in.Type+strings.Join(in.Types, "|"))
	}
	out, err := schemaFor[Out]()
	if err != nil {
		return fail("output schema: %v", err)
	}
	if out.Type != "object" {
		return fail("output must be an object (a struct or map), not %s", out.Type+strings.Join(out.Types, "|"))
	}
	if t.input, err = in.Resolve(nil); err != nil {
		return fail("input schema: %v", err)
	}
	if t.output, err = out.Resolve(nil); err != nil {
		return fail("output schema: %v", err)
	}
	if h == nil {
		return fail("no handler")
	}
	t.inputSchema, t.outputSchema = in, out
	t.constrainedOutput = constrained(out)
	t.handler = func(ctx context.Context, c *Caller, args json.RawMessage) (any, error) {
		var v In
		if len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &v); err != nil {
				return nil, &ToolError{Code: "invalid_arguments", Message: err.Error()}
			}
		}
		return h(ctx, c, v)
	}
	return t
}

// ToolError is a failure reported to the model as an isError tool result
// with a stable code, e.g. not_found, invalid_arguments, user_declined.
type ToolError struct {
	Code    string
	Message string
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Errorf builds a ToolError.
func Errorf(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrNotFound is what handlers return (or wrap) when a record does not exist
// in the caller's workspace. Tools answer not_found; resources answer the
// era's resource-not-found error.
var ErrNotFound = errors.New("not found")

// Resource declares a fixed resource (URI) or a resource template
// (Template, with {name} placeholders each matching one path segment).
type Resource struct {
	URI         string
	Template    string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Tool is the tool that reads this resource: the resource is listed and
	// read only if the caller may run it.
	Tool string
	// Read returns the resource for the matched parameters. A value of type
	// *mcp.ResourceContents is served as is, a json.RawMessage as its text;
	// anything else is encoded as JSON.
	Read func(ctx context.Context, c *Caller, uri string, params map[string]string) (any, error)
}

// PromptArgument declares one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
	// Check validates a present value; its error becomes -32602.
	Check func(string) error
}

// Prompt declares a prompt.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Tools are every tool the prompt relies on: it is listed and served
	// only if the caller may run all of them.
	Tools []string
	// Get builds the messages; arguments are already validated.
	Get func(ctx context.Context, c *Caller, args map[string]string) (*mcp.GetPromptResult, error)
}

// CompleteFunc suggests values for an argument of a prompt (ref.Type
// "ref/prompt") or a resource template ("ref/resource"). It must apply the
// caller's permissions itself (CanList helps) and return at most 100 values.
type CompleteFunc func(ctx context.Context, c *Caller, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, context map[string]string) ([]string, error)
