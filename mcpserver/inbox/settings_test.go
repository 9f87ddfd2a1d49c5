package inbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAgentSettings(t *testing.T) {
	var zero AgentSettings
	if zero.Timeout() != DefaultAgentTimeout || zero.Repairs() != DefaultRepairRounds || zero.FileBytes() != DefaultFileInputMaxBytes || zero.Check() != nil {
		t.Errorf("zero settings: %v %d %d %v", zero.Timeout(), zero.Repairs(), zero.FileBytes(), zero.Check())
	}
	none := 0
	s := AgentSettings{TimeoutSeconds: 30, RepairRounds: &none, FileInputMaxBytes: 1 << 20}
	if s.Timeout() != 30*time.Second || s.Repairs() != 0 || s.FileBytes() != 1<<20 || s.Check() != nil {
		t.Errorf("settings %+v: %v %d %d %v", s, s.Timeout(), s.Repairs(), s.FileBytes(), s.Check())
	}
	six, neg := 6, -1
	for _, c := range []struct {
		s    AgentSettings
		says string
	}{
		{AgentSettings{TimeoutSeconds: -1}, "settings.timeout_seconds is -1"},
		{AgentSettings{TimeoutSeconds: 901}, "from 1 to 900"},
		{AgentSettings{RepairRounds: &six}, "settings.repair_rounds is 6; it must be from 0 to 5"},
		{AgentSettings{RepairRounds: &neg}, "settings.repair_rounds is -1"},
		{AgentSettings{FileInputMaxBytes: MaxFileInputMaxBytes + 1}, "settings.file_input_max_bytes"},
	} {
		if err := c.s.Check(); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want …%s…", c.s, err, c.says)
		}
	}
	// An agent without settings is stored without them; zero repair rounds
	// survive a round trip (they are not the default).
	b, _ := json.Marshal(Agent{ID: "agt_1"})
	if strings.Contains(string(b), "settings") {
		t.Errorf("an agent without settings encodes them: %s", b)
	}
	b, _ = json.Marshal(Agent{ID: "agt_1", Settings: AgentSettings{RepairRounds: &none}})
	var back Agent
	if err := json.Unmarshal(b, &back); err != nil || back.Settings.Repairs() != 0 {
		t.Errorf("%s decodes to %d repair rounds (%v)", b, back.Settings.Repairs(), err)
	}
}
