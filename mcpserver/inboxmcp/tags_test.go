package inboxmcp

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/inbox"
)

// tag returns a field's struct tag value.
func tag[T any](t *testing.T, field, key string) string {
	t.Helper()
	f, ok := reflect.TypeFor[T]().FieldByName(field)
	if !ok {
		t.Fatalf("%T has no field %s", *new(T), field)
	}
	v, ok := f.Tag.Lookup(key)
	if !ok {
		t.Fatalf("%T.%s has no %s tag", *new(T), field, key)
	}
	return v
}

// The enums the schemas state are the domain's lists, so a model or an
// event added to the domain cannot be left out of the schemas.
func TestSchemaEnumsFollowTheDomain(t *testing.T) {
	models := strings.Join(inbox.ModelIDs(), ",")
	events := strings.Join(inbox.WebhookEvents(), ",")
	for name, got := range map[string]string{
		"AgentCreateArg.Model":    tag[AgentCreateArg](t, "Model", "enum"),
		"AgentUpdateArg.Model":    tag[AgentUpdateArg](t, "Model", "enum"),
		"WebhookCreateArg.Events": tag[WebhookCreateArg](t, "Events", "enum"),
		"WebhookUpdateArg.Events": tag[WebhookUpdateArg](t, "Events", "enum"),
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
		tag[EmailListArg](t, "Status", "enum"):       {inbox.EmailPending, inbox.EmailProcessed, inbox.EmailFailed, inbox.EmailRejected},
		tag[AgentRunListArg](t, "Status", "enum"):    {inbox.RunSucceeded, inbox.RunFailed},
		tag[WebhookListArg](t, "Status", "enum"):     {inbox.WebhookActive, inbox.WebhookFailing, inbox.WebhookDisabled},
		tag[DeliveryListArg](t, "Status", "enum"):    {inbox.DeliveryPending, inbox.DeliveryDelivered, inbox.DeliveryFailed},
		tag[InboxUpdateArg](t, "Status", "enum"):     {inbox.StatusActive, inbox.StatusPaused},
		tag[WebhookUpdateArg](t, "Status", "enum"):   {inbox.WebhookActive, inbox.WebhookDisabled},
		tag[WorkflowRunListArg](t, "Status", "enum"): {inbox.RunSucceeded, inbox.RunFailed, inbox.RunRunning, inbox.RunInterrupted},
	}
	for got, want := range statuses {
		if !slices.Equal(strings.Split(got, ","), want) {
			t.Errorf("status enum %q, want %v", got, want)
		}
	}
}

// Id patterns accept the ids records have and nothing around them.
func TestIDPatterns(t *testing.T) {
	for pattern, ids := range map[string][]string{
		tag[InboxIDArg](t, "ID", "pattern"):        {"ibx_invoices", inbox.NewID("ibx")},
		tag[EmailIDArg](t, "ID", "pattern"):        {"eml_inv_00", "eml_autoreply", inbox.NewID("eml")},
		tag[AgentIDArg](t, "ID", "pattern"):        {"agt_invoices", inbox.NewID("agt")},
		tag[AgentRunIDArg](t, "ID", "pattern"):     {"arun_inv_00", inbox.NewID("arun")},
		tag[WorkflowRunIDArg](t, "ID", "pattern"):  {"wrun_inv_00", inbox.NewID("wrun")},
		tag[WebhookIDArg](t, "ID", "pattern"):      {"whk_erp", inbox.NewID("whk")},
		tag[EventIDArg](t, "ID", "pattern"):        {"evt_0001", inbox.NewID("evt")},
		tag[ReplayArg](t, "DeliveryID", "pattern"): {"dlv_erp_00", inbox.NewID("dlv")},
		tag[WorkspaceArg](t, "ID", "pattern"):      {"ws_finance", "ws_sandbox"},
	} {
		re := regexp.MustCompile(pattern)
		for _, id := range ids {
			if !re.MatchString(id) {
				t.Errorf("%s refuses %q", pattern, id)
			}
			for _, bad := range []string{" " + id, id + " ", id + "\n", id + "/x"} {
				if re.MatchString(bad) {
					t.Errorf("%s accepts %q", pattern, bad)
				}
			}
		}
	}
	date := regexp.MustCompile(tag[AgentRunListArg](t, "Since", "pattern"))
	month := regexp.MustCompile(tag[UsageArg](t, "Month", "pattern"))
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
