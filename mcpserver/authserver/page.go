package authserver

import (
	"encoding/json"
	"html/template"
	"io"
)

func jsonEncoder(w io.Writer) *json.Encoder { return json.NewEncoder(w) }

// pageTemplate is the sign-in and consent page: the project's own HTML, no
// script, no external resource (the Content-Security-Policy allows none).
var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if eq .Step "consent"}}Allow {{.Client}}?{{else if eq .Step "signin"}}Sign in to Kobana{{else}}Kobana: cannot sign in{{end}}</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 8px; padding: 2rem; box-shadow: 0 1px 3px #0002; }
h1 { font-size: 1.4rem; margin-top: 0; }
.who, .client { background: #f4f5f7; border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
.muted { color: #5b6475; font-size: .9rem; }
.error { background: #fdecec; color: #8a1c1c; border-radius: 6px; padding: .75rem 1rem; }
ul.scopes { padding-left: 1.2rem; }
.refused { color: #8a1c1c; }
input[type=text] { font: inherit; width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #aab; border-radius: 4px; }
.buttons { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: 4px; border: 1px solid #2450c6; background: #fff; color: #2450c6; cursor: pointer; }
button.primary { background: #2450c6; color: #fff; }
code { font-size: .9em; }
</style>
</head>
<body>
<main>
{{if eq .Step "error"}}
<h1>This sign-in cannot continue</h1>
<p class="error" id="error">{{.Error}}</p>
{{else}}
<div class="client">
<strong id="client-name">{{.Client}}</strong> asks to reach <strong>{{.Resource}}</strong>.
<div class="muted">Client id <code id="client-id">{{.ClientID}}</code>{{if .ClientURI}} · <span>{{.ClientURI}}</span>{{end}}</div>
<div class="muted">After you answer, you go back to <code id="redirect">{{.Redirect}}</code></div>
</div>
{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
{{if eq .Step "signin"}}
<h1>Sign in to Kobana</h1>
<p>Enter the one-time sign-in code your administrator gave you (<code>kobana token signin</code> prints one; it works once, for a few minutes).</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="kobana_csrf" value="{{.CSRF}}">
<input type="hidden" name="kobana_action" value="signin">
<label for="code">Sign-in code</label>
<input type="text" id="code" name="kobana_code" autocomplete="one-time-code" autofocus required>
<div class="buttons"><button class="primary" type="submit" id="signin">Sign in</button></div>
</form>
<p class="muted">The application will be asked for:</p>
<ul class="scopes">{{range .Scopes}}<li><strong>{{.Name}}</strong>: {{.Meaning}}</li>{{end}}</ul>
{{else}}
<h1>Allow {{.Client}}?</h1>
<div class="who" id="who">Signed in as <strong id="person">{{.Person}}</strong> &lt;{{.Email}}&gt;,
<strong id="role">{{.Role}}</strong> of workspace <strong id="workspace">{{.Workspace}}</strong> (<code>{{.WorkspaceID}}</code>, organization <code>{{.Org}}</code>).</div>
<p>{{.Client}} will be able to act as you in this workspace, within your role, to:</p>
<ul class="scopes" id="scopes">{{range .Scopes}}<li{{if not .Granted}} class="refused"{{end}} data-scope="{{.Name}}"><strong>{{.Name}}</strong>: {{.Meaning}}{{if .Why}} ({{.Why}}){{end}}</li>{{end}}</ul>
<p class="muted">You can revoke this access at any time: <code>kobana token list</code>, then <code>kobana token revoke ID</code>.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="kobana_csrf" value="{{.CSRF}}">
<div class="buttons">
<button class="primary" type="submit" name="kobana_action" value="allow" id="allow">Allow</button>
<button type="submit" name="kobana_action" value="deny" id="deny">Deny</button>
<button type="submit" name="kobana_action" value="signout" id="signout">Not you?</button>
</div>
</form>
{{end}}
{{end}}
</main>
</body>
</html>
`))
