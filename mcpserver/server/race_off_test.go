//go:build !race

package server_test

// underRace says the tests run under the race detector, several times
// slower: the long pipeline tests send fewer e-mails.
const underRace = false
