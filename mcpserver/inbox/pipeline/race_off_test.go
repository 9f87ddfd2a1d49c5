//go:build !race

package pipeline_test

// underRace says the tests run under the race detector.
const underRace = false
