// Package examples ships weir's example fleet repository inside the weir
// binary, so that `weir dev` shows the whole flow from a release binary as
// well as from a checkout.
//
// The fleet is the directory tree next to this file: clusters/dev (what the
// flux-system Kustomization applies), infrastructure and apps. Go files,
// internal/ and charts/ (the example Helm charts, served apart) are not part
// of it. The age key that decrypts the example's Secret is embedded apart
// from the fleet, because a real fleet never holds its private key; it is a
// DEMO ONLY key, published with weir.
package examples

import (
	"embed"
	"io/fs"
)

// podinfo-token.sops.yaml is written by the generator from the plaintext it
// holds and the recipient in .sops.yaml; its output is committed.
//go:generate go run ./internal/gen

//go:embed README.md .sops.yaml clusters infrastructure apps
var fleet embed.FS

//go:embed DEMO-ONLY.agekey
var demoAgeKey []byte

//go:embed charts
var charts embed.FS

// Fleet returns the example fleet repository, rooted at its top directory.
func Fleet() fs.FS { return fleet }

// Charts returns the example Helm charts, one directory each (hello/), that
// `weir dev` packages and serves from a local chart repository. They are not
// part of the fleet repository.
func Charts() fs.FS {
	sub, err := fs.Sub(charts, "charts")
	if err != nil {
		panic(err) // the embedded directory exists by construction
	}
	return sub
}

// DemoAgeKey returns the DEMO ONLY age identity file (comments and one
// AGE-SECRET-KEY line) that decrypts the example's SOPS-encrypted Secret.
// Anyone can read it: never encrypt anything real to its recipient.
func DemoAgeKey() []byte { return append([]byte(nil), demoAgeKey...) }
