package createcmd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// trustPolicy is a Notation trust policy document (version 1.0): what
// source-controller's notation verifier reads from the Secret's
// trustpolicy.json.
type trustPolicy struct {
	Version       string                 `json:"version"`
	TrustPolicies []trustPolicyStatement `json:"trustPolicies"`
}

type trustPolicyStatement struct {
	Name                  string   `json:"name"`
	RegistryScopes        []string `json:"registryScopes"`
	SignatureVerification struct {
		Level string `json:"level"`
	} `json:"signatureVerification"`
	TrustStores       []string `json:"trustStores"`
	TrustedIdentities []string `json:"trustedIdentities"`
}

// validateTrustPolicy parses data as flux does before writing the Secret
// and applies the checks of Notation's own validation: the version, named
// and unique statements, registry scopes used once each with '*' alone,
// a known verification level, trust stores and identities present unless
// the level is skip, trust stores typed ca, signingAuthority or tsa, and
// identities '*' alone or x509.subject values.
func validateTrustPolicy(data []byte, file string) error {
	var doc trustPolicy
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("failed to unmarshal trust policy %s: %w", file, err)
	}
	if err := doc.validate(); err != nil {
		return fmt.Errorf("invalid trust policy: %w", err)
	}
	return nil
}

func (d *trustPolicy) validate() error {
	if d.Version != "1.0" {
		return fmt.Errorf("trust policy document uses unsupported version %q", d.Version)
	}
	if len(d.TrustPolicies) == 0 {
		return fmt.Errorf("trust policy document can not have zero trust policy statements")
	}
	names := map[string]bool{}
	scopes := map[string]bool{}
	for _, s := range d.TrustPolicies {
		if s.Name == "" {
			return fmt.Errorf("a trust policy statement is missing a name, every statement requires a name")
		}
		if names[s.Name] {
			return fmt.Errorf("multiple trust policy statements use the same name %q, statement names must be unique", s.Name)
		}
		names[s.Name] = true
		if err := s.validate(); err != nil {
			return err
		}
		for _, scope := range s.RegistryScopes {
			if scopes[scope] {
				return fmt.Errorf("registry scope %q is present in multiple trust policy statements, one registry scope value can only be associated with one statement", scope)
			}
			scopes[scope] = true
		}
	}
	return nil
}

func (s *trustPolicyStatement) validate() error {
	switch {
	case len(s.RegistryScopes) == 0:
		return fmt.Errorf("trust policy statement %q has zero registry scopes, it must specify registry scopes with at least one value", s.Name)
	case len(s.RegistryScopes) > 1 && slices.Contains(s.RegistryScopes, "*"):
		return fmt.Errorf("trust policy statement %q uses wildcard registry scope '*', a wildcard scope cannot be used in conjunction with other scope values", s.Name)
	}
	switch s.SignatureVerification.Level {
	case "strict", "permissive", "audit":
	case "skip":
		if len(s.TrustStores) > 0 || len(s.TrustedIdentities) > 0 {
			return fmt.Errorf("trust policy statement %q is set to skip signature verification but configured with trust stores and/or trusted identities, remove them if signature verification needs to be skipped", s.Name)
		}
		return nil
	default:
		return fmt.Errorf("trust policy statement %q has invalid signatureVerification: invalid signature verification level %q", s.Name, s.SignatureVerification.Level)
	}
	if len(s.TrustStores) == 0 || len(s.TrustedIdentities) == 0 {
		return fmt.Errorf("trust policy statement %q is either missing trust stores or trusted identities, both must be specified", s.Name)
	}
	if err := s.validateStores(); err != nil {
		return err
	}
	return s.validateIdentities()
}

func (s *trustPolicyStatement) validateStores() error {
	for _, store := range s.TrustStores {
		typ, name, ok := strings.Cut(store, ":")
		if !ok || name == "" {
			return fmt.Errorf("trust policy statement %q has malformed trust store value %q. The required format is <TrustStoreType>:<TrustStoreName>", s.Name, store)
		}
		if typ != "ca" && typ != "signingAuthority" && typ != "tsa" {
			return fmt.Errorf("trust policy statement %q uses an unsupported trust store type %q in trust store value %q", s.Name, typ, store)
		}
	}
	return nil
}

func (s *trustPolicyStatement) validateIdentities() error {
	for _, id := range s.TrustedIdentities {
		if id == "*" {
			if len(s.TrustedIdentities) > 1 {
				return fmt.Errorf("trust policy statement %q uses a wildcard trusted identity '*', a wildcard identity cannot be used in conjunction with other values", s.Name)
			}
			continue
		}
		typ, value, ok := strings.Cut(id, ":")
		if !ok || strings.TrimSpace(value) == "" {
			return fmt.Errorf("trust policy statement %q has trusted identity %q missing separator", s.Name, id)
		}
		if typ != "x509.subject" {
			return fmt.Errorf("trust policy statement %q uses unsupported identity type %q", s.Name, typ)
		}
	}
	return nil
}
