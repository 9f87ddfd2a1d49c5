package confirm_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/confirm"
)

func Example() {
	secret := []byte("0123456789abcdef0123456789abcdef")
	digest, _ := confirm.Digest([]byte(`{"id": "whk_chat"}`))
	asked := confirm.Claims{Tool: "webhooks_test", ArgsDigest: digest, Person: "per_ana", Organization: "org_demo",
		Workspace: "ws_finance", Nonce: confirm.NewNonce(), Expires: time.Now().Add(5 * time.Minute).UnixMilli()}
	state, _ := confirm.Seal("key_1", secret, asked)

	// The retry carries the state back: it opens only with the key, and
	// only matches the same tool, arguments and caller.
	got, err := confirm.Open(state, secret, time.Now())
	fmt.Println(err, got.Matches(asked))
	other := asked
	other.Person = "per_bruno"
	fmt.Println(got.Matches(other))
	_, err = confirm.Open(state, []byte("another key, another server....."), time.Now())
	fmt.Println(errors.Is(err, confirm.ErrBadMAC))
	// Output:
	// <nil> true
	// false
	// true
}
