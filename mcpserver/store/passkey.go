package store

import (
	"context"
	"encoding/json"
	"time"
)

// Passkey is a WebAuthn credential a person registered to sign in to the
// console without a code. It holds a public key, never a secret.
type Passkey struct {
	// ID is the credential's id, base64url without padding, as the
	// authenticator made it; unique across the store.
	ID     string
	Person string
	// Workspace is the one a sign-in with it opens first (the one it was
	// registered in).
	Workspace string
	// Name is what the person called it ("laptop", "phone").
	Name string
	// Credential is the relying party's record of it (public key, sign
	// counter, flags, transports), as the WebAuthn library serialises it.
	Credential json.RawMessage
	Created    time.Time
	// LastUsed is when it last signed in; zero when never.
	LastUsed time.Time
}

// Passkeys keeps people's WebAuthn credentials.
type Passkeys interface {
	// CreatePasskey stores a new passkey; ErrConflict when its id is
	// taken, ErrNotFound when its person does not exist.
	CreatePasskey(ctx context.Context, p Passkey) error
	// ListPasskeys returns a person's passkeys, oldest first.
	ListPasskeys(ctx context.Context, person string) ([]Passkey, error)
	// GetPasskey returns a passkey by id; ErrNotFound when unknown.
	GetPasskey(ctx context.Context, id string) (Passkey, error)
	// UsePasskey records a sign-in with a passkey: its credential as the
	// sign-in left it (the new sign counter) and when. ErrNotFound when
	// it was removed meanwhile.
	UsePasskey(ctx context.Context, id string, credential json.RawMessage, used time.Time) error
	// DeletePasskey removes one of a person's passkeys; ErrNotFound when
	// the person has none by that id.
	DeletePasskey(ctx context.Context, person, id string) error
}
