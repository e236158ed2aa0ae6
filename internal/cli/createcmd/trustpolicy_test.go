package createcmd

import (
	"strings"
	"testing"
)

func TestValidateTrustPolicy(t *testing.T) {
	stmt := func(fields string) string {
		return `{"version": "1.0", "trustPolicies": [` + fields + `]}`
	}
	ok := `{"name": "a", "registryScopes": ["r/a"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"], "trustedIdentities": ["*"]}`
	for _, tc := range []struct {
		doc, err string
	}{
		{stmt(ok), ""},
		{stmt(`{"name": "s", "registryScopes": ["*"], "signatureVerification": {"level": "skip"}}`), ""},
		{stmt(ok + `,{"name": "b", "registryScopes": ["r/b"], "signatureVerification": {"level": "audit"}, "trustStores": ["signingAuthority:s", "tsa:t"], "trustedIdentities": ["x509.subject: CN=x"]}`), ""},
		{`{"version": "2.0", "trustPolicies": []}`, `trust policy document uses unsupported version "2.0"`},
		{`{"version": "1.0"}`, "trust policy document can not have zero trust policy statements"},
		{stmt(`{"registryScopes": ["r"]}`), "a trust policy statement is missing a name"},
		{stmt(ok + "," + ok), `multiple trust policy statements use the same name "a"`},
		{stmt(ok + `,{"name": "b", "registryScopes": ["r/a"], "signatureVerification": {"level": "skip"}}`), `registry scope "r/a" is present in multiple trust policy statements`},
		{stmt(`{"name": "a", "signatureVerification": {"level": "strict"}}`), `trust policy statement "a" has zero registry scopes`},
		{stmt(`{"name": "a", "registryScopes": ["*", "r"]}`), `trust policy statement "a" uses wildcard registry scope '*'`},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "lax"}}`), `invalid signature verification level "lax"`},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "skip"}, "trustStores": ["ca:s"]}`), "is set to skip signature verification but configured with trust stores"},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"]}`), "is either missing trust stores or trusted identities"},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["s"], "trustedIdentities": ["*"]}`), `has malformed trust store value "s"`},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["x:s"], "trustedIdentities": ["*"]}`), `unsupported trust store type "x"`},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"], "trustedIdentities": ["*", "x509.subject:CN=a"]}`), "uses a wildcard trusted identity '*'"},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"], "trustedIdentities": ["CN=a"]}`), `has trusted identity "CN=a" missing separator`},
		{stmt(`{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"], "trustedIdentities": ["dns:a"]}`), `uses unsupported identity type "dns"`},
		{`{`, "failed to unmarshal trust policy p.json: unexpected end of JSON input"},
	} {
		err := validateTrustPolicy([]byte(tc.doc), "p.json")
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.err)
		}
	}
}

// FuzzValidateTrustPolicy: any bytes either pass or fail with the flux
// CLI's prefixes, never panic.
func FuzzValidateTrustPolicy(f *testing.F) {
	f.Add([]byte(`{"version": "1.0", "trustPolicies": [{"name": "a", "registryScopes": ["*"], "signatureVerification": {"level": "strict"}, "trustStores": ["ca:s"], "trustedIdentities": ["x509.subject: CN=a"]}]}`))
	f.Add([]byte(`{"version": "1.0", "trustPolicies": [{"name": "a", "registryScopes": ["r"], "signatureVerification": {"level": "skip"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := validateTrustPolicy(data, "p.json")
		if err != nil && !strings.HasPrefix(err.Error(), "invalid trust policy: ") &&
			!strings.HasPrefix(err.Error(), "failed to unmarshal trust policy p.json: ") {
			t.Fatalf("unexpected error form: %v", err)
		}
	})
}
