package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// SecretKeySize is the length in bytes of Options.SecretKey (AES-256).
const SecretKeySize = 32

// ErrUnsealable reports a sealed secret that the store's key cannot open: it
// was sealed under another key, for another workspace or name, or altered.
var ErrUnsealable = errors.New("sealed secret cannot be opened (wrong secret key, or altered)")

// Sealer encrypts secret values at rest with AES-256-GCM. A sealed value is
// nonce ‖ ciphertext ‖ tag, with "workspace\x00name" as additional data, so
// that a value moved to another workspace or name does not open. Every
// implementation of Secrets seals with it, so a value sealed by one store
// opens in any other given the same key.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer for a SecretKeySize-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != SecretKeySize {
		return nil, fmt.Errorf("secret key must be %d bytes, got %d", SecretKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Sealer{aead: g}, nil
}

func additionalData(workspace, name string) []byte {
	return []byte(workspace + "\x00" + name)
}

// Seal encrypts the value of the secret name of a workspace under a fresh
// random nonce.
func (s *Sealer) Seal(workspace, name, value string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(value)+s.aead.Overhead())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(value), additionalData(workspace, name))
}

// Open decrypts what Seal returned for the same workspace and name. Its
// error wraps ErrUnsealable and never contains the value.
func (s *Sealer) Open(workspace, name string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return "", fmt.Errorf("secret %s: sealed value too short: %w", name, ErrUnsealable)
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], additionalData(workspace, name))
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", name, ErrUnsealable)
	}
	return string(plain), nil
}
