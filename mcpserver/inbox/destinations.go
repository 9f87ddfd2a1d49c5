package inbox

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kobana/workflow/egress"
)

// destinationsPrefix starts the name of the platform secret that holds a
// user secret's destinations, kept beside its sealed value.
const destinationsPrefix = "kobana:destinations:"

// DestinationsSecretName is the name of the record, kept as a platform
// secret beside the secret name, that holds its destinations. It is not a
// user secret (IsUserSecret), so no workflow can reference it.
func DestinationsSecretName(name string) string { return destinationsPrefix + name }

// EncodeDestinations is the stored form of a secret's destinations.
func EncodeDestinations(d egress.Destinations) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// SecretsPolicy splits a workspace's secrets, as the store reveals them,
// into the user secrets a workflow may reference and the policy of where
// they may go: each secret's destinations as secrets_set recorded them,
// and a secret without destinations whose value is an http or https URL
// bound to that URL's host (egress.BindURL). A secret without either is
// unbound. Destinations of a secret that no longer exists are ignored; an
// unreadable record binds its secret to no host at all, failing closed.
func SecretsPolicy(all map[string]string) (user map[string]string, p *egress.Policy) {
	user = make(map[string]string, len(all))
	p = &egress.Policy{}
	for name, v := range all {
		if IsUserSecret(name) {
			user[name] = v
		}
	}
	for name, v := range all {
		secret, ok := strings.CutPrefix(name, destinationsPrefix)
		if !ok {
			continue
		}
		if _, exists := user[secret]; !exists {
			continue
		}
		var d egress.Destinations
		if err := json.Unmarshal([]byte(v), &d); err != nil {
			d = egress.Destinations{}
		}
		if p.Secrets == nil {
			p.Secrets = map[string]egress.Destinations{}
		}
		p.Secrets[secret] = d
	}
	p.BindURLs(user)
	return user, p
}

// RunPolicy is the policy of one agent's workflows: the workspace's
// secret destinations and the agent's egress list.
func RunPolicy(secrets *egress.Policy, ag Agent) *egress.Policy {
	p := &egress.Policy{}
	if secrets != nil {
		p.Secrets = secrets.Secrets
	}
	p.Egress = ag.Settings.EgressList()
	if p.Egress != nil {
		p.EgressOf = fmt.Sprintf("agent %s (%s)", ag.Name, ag.ID)
	}
	return p
}
