//go:build !cgo

package guard_test

// cgoEnabled tells whether this test binary can use the C resolver.
const cgoEnabled = false
