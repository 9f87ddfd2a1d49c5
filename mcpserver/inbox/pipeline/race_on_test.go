//go:build race

package pipeline_test

// underRace says the tests run under the race detector, several times
// slower: the crash test kills the server at fewer points (every point runs
// without it).
const underRace = true
