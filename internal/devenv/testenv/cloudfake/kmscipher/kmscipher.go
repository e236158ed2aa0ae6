// Package kmscipher is the cipher behind the key-service fakes
// (cloudfake/awskms, gcpkms, vaulttransit): each named key has a random
// AES-256 secret of its own, and a ciphertext is the key's name, a nonce
// and the AES-GCM sealing of the plaintext with the caller's additional
// data (AWS KMS's encryption context). What one key sealed only that key
// opens, with the same additional data, so encrypt→decrypt round-trips
// the way a real KMS does and a wrong key or context fails as it would.
package kmscipher

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sync"
)

// ErrCiphertext is a ciphertext no key of the ring opens (another key, an
// altered blob, other additional data).
var ErrCiphertext = errors.New("invalid ciphertext")

// Ring holds the keys of one fake service. The zero Ring is ready; keys
// are made on first use by name.
type Ring struct {
	mu   sync.Mutex
	keys map[string]cipher.AEAD
}

func (r *Ring) aead(name string, create bool) (cipher.AEAD, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.keys[name]; ok {
		return a, true
	}
	if !create {
		return nil, false
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic(err)
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		panic(err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	if r.keys == nil {
		r.keys = map[string]cipher.AEAD{}
	}
	r.keys[name] = a
	return a, true
}

// Seal encrypts plaintext with key name (made if new) and aad.
func (r *Ring) Seal(name string, plaintext, aad []byte) []byte {
	a, _ := r.aead(name, true)
	out := binary.BigEndian.AppendUint16(nil, uint16(len(name)))
	out = append(out, name...)
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	out = append(out, nonce...)
	return a.Seal(out, nonce, plaintext, aad)
}

// Open decrypts a Seal result, returning the key's name and the plaintext.
func (r *Ring) Open(blob, aad []byte) (string, []byte, error) {
	if len(blob) < 2 {
		return "", nil, ErrCiphertext
	}
	n := int(binary.BigEndian.Uint16(blob))
	if len(blob) < 2+n {
		return "", nil, ErrCiphertext
	}
	name := string(blob[2 : 2+n])
	a, ok := r.aead(name, false)
	if !ok || len(blob) < 2+n+a.NonceSize() {
		return name, nil, ErrCiphertext
	}
	rest := blob[2+n:]
	plain, err := a.Open(nil, rest[:a.NonceSize()], rest[a.NonceSize():], aad)
	if err != nil {
		return name, nil, ErrCiphertext
	}
	return name, plain, nil
}
