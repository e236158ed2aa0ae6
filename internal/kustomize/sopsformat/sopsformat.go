// Package sopsformat names the formats of SOPS documents and picks one for
// a file or Secret key by its extension. The build (internal/kustomize),
// which decides what to decrypt, and the decryptor (internal/kustomize/decrypt),
// which decrypts it, share these names and this rule.
package sopsformat

import "strings"

// Formats of SOPS documents.
const (
	Binary = "binary"
	Dotenv = "dotenv"
	INI    = "ini"
	JSON   = "json"
	YAML   = "yaml"
)

// ForPath is the format of a file or Secret key by its extension, as SOPS
// and Flux decide it: .yaml and .yml YAML, .json JSON, .env dotenv, .ini
// INI, a .dockerconfigjson key JSON, anything else binary.
func ForPath(p string) string {
	switch {
	case strings.HasSuffix(p, ".dockerconfigjson"), strings.HasSuffix(p, ".json"):
		return JSON
	case strings.HasSuffix(p, ".yaml"), strings.HasSuffix(p, ".yml"):
		return YAML
	case strings.HasSuffix(p, ".env"):
		return Dotenv
	case strings.HasSuffix(p, ".ini"):
		return INI
	}
	return Binary
}
