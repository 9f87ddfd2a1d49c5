package inboxmcp

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/runrecord"
)

// The enums the schemas state are the domain's lists, so a model or an
// event added to the domain cannot be left out of the schemas.
func TestSchemaEnumsFollowTheDomain(t *testing.T) {
	t.Parallel()
	models := strings.Join(inbox.ModelIDs(), ",")
	events := strings.Join(inbox.WebhookEvents(), ",")
	for name, got := range map[string]string{
		"AgentCreateArg.Model":    mcptest.Tag[AgentCreateArg](t, "Model", "enum"),
		"AgentUpdateArg.Model":    mcptest.Tag[AgentUpdateArg](t, "Model", "enum"),
		"WebhookCreateArg.Events": mcptest.Tag[WebhookCreateArg](t, "Events", "enum"),
		"WebhookUpdateArg.Events": mcptest.Tag[WebhookUpdateArg](t, "Events", "enum"),
	} {
		want := models
		if strings.HasSuffix(name, "Events") {
			want = events
		}
		if got != want {
			t.Errorf("%s enum %q, want %q", name, got, want)
		}
	}
	statuses := map[string][]string{
		mcptest.Tag[EmailListArg](t, "Status", "enum"):       {inbox.EmailPending, inbox.EmailProcessed, inbox.EmailFailed, inbox.EmailRejected, inbox.EmailDuplicate},
		mcptest.Tag[AgentRunListArg](t, "Status", "enum"):    {inbox.RunSucceeded, inbox.RunFailed},
		mcptest.Tag[WebhookListArg](t, "Status", "enum"):     {inbox.WebhookActive, inbox.WebhookFailing, inbox.WebhookDisabled},
		mcptest.Tag[DeliveryListArg](t, "Status", "enum"):    {inbox.DeliveryPending, inbox.DeliveryDelivered, inbox.DeliveryFailed},
		mcptest.Tag[InboxUpdateArg](t, "Status", "enum"):     {inbox.StatusActive, inbox.StatusPaused},
		mcptest.Tag[WebhookUpdateArg](t, "Status", "enum"):   {inbox.WebhookActive, inbox.WebhookDisabled},
		mcptest.Tag[WorkflowRunListArg](t, "Status", "enum"): {string(runrecord.RunSucceeded), string(runrecord.RunFailed), string(runrecord.RunRunning), string(runrecord.RunInterrupted)},
	}
	for got, want := range statuses {
		if !slices.Equal(strings.Split(got, ","), want) {
			t.Errorf("status enum %q, want %v", got, want)
		}
	}
}

// Id patterns accept the ids records have and nothing around them.
func TestIDPatterns(t *testing.T) {
	t.Parallel()
	for pattern, ids := range map[string][]string{
		mcptest.Tag[InboxIDArg](t, "ID", "pattern"):        {"ibx_invoices", inbox.NewID("ibx")},
		mcptest.Tag[EmailIDArg](t, "ID", "pattern"):        {"eml_inv_00", "eml_autoreply", inbox.NewID("eml")},
		mcptest.Tag[AgentIDArg](t, "ID", "pattern"):        {"agt_invoices", inbox.NewID("agt")},
		mcptest.Tag[AgentRunIDArg](t, "ID", "pattern"):     {"arun_inv_00", inbox.NewID("arun")},
		mcptest.Tag[WorkflowRunIDArg](t, "ID", "pattern"):  {"wrun_inv_00", inbox.NewID("wrun")},
		mcptest.Tag[WebhookIDArg](t, "ID", "pattern"):      {"whk_erp", inbox.NewID("whk")},
		mcptest.Tag[EventIDArg](t, "ID", "pattern"):        {"evt_0001", inbox.NewID("evt")},
		mcptest.Tag[ReplayArg](t, "DeliveryID", "pattern"): {"dlv_erp_00", inbox.NewID("dlv")},
		mcptest.Tag[WorkspaceArg](t, "ID", "pattern"):      {"ws_finance", "ws_sandbox"},
	} {
		mcptest.WantAnchored(t, pattern, ids...)
	}
	date := regexp.MustCompile(mcptest.Tag[AgentRunListArg](t, "Since", "pattern"))
	month := regexp.MustCompile(mcptest.Tag[UsageArg](t, "Month", "pattern"))
	for s, want := range map[string]bool{"2026-11-20": true, " 2026-11-20": false, "2026-11-20 ": false, "2026-13-01": false, "2026/11/20": false, "2026-1-2": false} {
		if date.MatchString(s) != want {
			t.Errorf("date pattern on %q: %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"2026-11": true, " 2026-11": false, "2026-00": false, "2026-1": false} {
		if month.MatchString(s) != want {
			t.Errorf("month pattern on %q: %v", s, !want)
		}
	}
}

// The agent settings' schema bounds are the domain's.
func TestAgentSettingsBounds(t *testing.T) {
	t.Parallel()
	for field, want := range map[string]string{
		"TimeoutSeconds":    strconv.Itoa(int(inbox.MaxAgentTimeout / time.Second)),
		"RepairRounds":      strconv.Itoa(inbox.MaxRepairRounds),
		"FileInputMaxBytes": strconv.FormatInt(inbox.MaxFileInputMaxBytes, 10),
	} {
		f, _ := reflect.TypeFor[inbox.AgentSettings]().FieldByName(field)
		if got := f.Tag.Get("maximum"); got != want || f.Tag.Get("minimum") != "0" {
			t.Errorf("AgentSettings.%s bounds 0..%s, want 0..%s", field, got, want)
		}
	}
}
