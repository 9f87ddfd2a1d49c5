// Package docs holds the project's documentation for users and
// contributors (the Markdown files beside this one). It has no code: its
// tests keep the documents in step with the code — every link resolves
// inside the repository, the language reference names every rule table of
// the compiler, and the architecture's layout names every package.
package docs
