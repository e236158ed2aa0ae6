package cli_test

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestCreateSecretExportMore pins what the githubapp, helm, notation and
// proxy secret commands print with --export.
func TestCreateSecretExportMore(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"create/export-secret-githubapp.golden", []string{"secret", "githubapp", "app-auth", "--app-id=1",
			"--app-installation-id=2", "--app-private-key=testdata/create/tls.key"}},
		{"create/export-secret-githubapp-owner.golden", []string{"secret", "githubapp", "app-auth", "--app-id=1",
			"--app-installation-owner=weir-gitops", "--app-private-key=testdata/create/tls.key",
			"--app-base-url=https://127.0.0.1/api/v3", "--label=team=apps"}},
		{"create/export-secret-helm.golden", []string{"secret", "helm", "repo-auth", "-u", "bot", "-p", "s3cret",
			"--ca-crt-file=testdata/create/ca.crt"}},
		{"create/export-secret-helm-tls.golden", []string{"secret", "helm", "repo-auth", "--tls-crt-file=testdata/create/tls.crt",
			"--tls-key-file=testdata/create/tls.key", "--ca-crt-file=testdata/create/ca.crt"}},
		{"create/export-secret-helm-empty.golden", []string{"secret", "helm", "repo-auth"}},
		{"create/export-secret-proxy.golden", []string{"secret", "proxy", "my-proxy", "--address=http://127.0.0.1:3128",
			"-u", "bot", "-p", "s3cret"}},
		{"create/export-secret-notation.golden", []string{"secret", "notation", "notation-cfg",
			"--trust-policy-file=testdata/create/trustpolicy.json", "--ca-cert-file=testdata/create/ca.crt"}},
	})
}

func TestCreateSecretMoreErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"githubapp", "ab", "--app-id=1", "--app-installation-id=2"}, "✗ unable to read private key file: open : no such file or directory\n"},
		{[]string{"githubapp", "ab", "--app-installation-id=2", "--app-private-key=testdata/create/tls.key"}, "✗ githubAppID is required\n"},
		{[]string{"githubapp", "ab", "--app-id=1", "--app-private-key=testdata/create/tls.key"}, "✗ exactly one of githubAppInstallationOwner or githubAppInstallationID must be provided\n"},
		{[]string{"githubapp", "ab", "--app-id=1", "--app-installation-id=2", "--app-installation-owner=o", "--app-private-key=testdata/create/tls.key"}, "✗ exactly one of githubAppInstallationOwner or githubAppInstallationID must be provided\n"},
		{[]string{"helm", "ab", "-u", "bot"}, "✗ password is required\n"},
		{[]string{"helm", "ab", "--tls-crt-file=testdata/create/tls.crt"}, "✗ found certificate but missing private key\n"},
		{[]string{"helm", "ab", "--tls-crt-file=testdata/create/tls.crt", "--tls-key-file=testdata/create/ca.crt"}, "✗ invalid TLS certificate and key pair: tls: found a certificate rather than a key in the PEM for the private key\n"},
		{[]string{"proxy", "ab", "-u", "bot"}, "✗ address is required\n"},
		{[]string{"proxy", "ab", "--address=http://bot:s3cret@[::1"}, "✗ invalid proxy address: missing ']' in host\n"},
		{[]string{"notation", "ab", "--trust-policy-file=testdata/create/trustpolicy.json"}, "✗ --ca-cert-file is required\n"},
		{[]string{"notation", "ab", "--ca-cert-file=testdata/create/ca.crt"}, "✗ --trust-policy-file is required\n"},
		{[]string{"notation", "ab", "--ca-cert-file=testdata/create/ca.crt", "--trust-policy-file=testdata/create/ca.crt"}, "✗ failed to unmarshal trust policy testdata/create/ca.crt: invalid character '-' in numeric literal\n"},
		{[]string{"notation", "ab", "--ca-cert-file=testdata/create/ca.crt", "--trust-policy-file=testdata/create/trustpolicy-wildcard.json"}, "✗ invalid trust policy: trust policy statement \"a\" uses wildcard registry scope '*', a wildcard scope cannot be used in conjunction with other scope values\n"},
		{[]string{"notation", "ab", "--ca-cert-file=testdata/create/tls.key", "--trust-policy-file=testdata/create/trustpolicy.json"}, "✗ tls.key must end with either .crt or .pem\n"},
	} {
		res := weir(t, append(append([]string{"create", "secret"}, s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create secret %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// TestCreateSecretMoreApply applies a proxy and a notation secret and reads
// them back from the API server.
func TestCreateSecretMoreApply(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for _, s := range []struct {
		golden string
		args   []string
	}{
		{"create/secret-proxy.golden", []string{"proxy", "my-proxy", "--address=http://127.0.0.1:3128", "-u", "bot", "-p", "s3cret"}},
		{"create/secret-notation.golden", []string{"notation", "notation-cfg", "--trust-policy-file=testdata/create/trustpolicy.json",
			"--ca-cert-file=testdata/create/ca.crt"}},
		{"create/secret-githubapp.golden", []string{"githubapp", "app-auth", "--app-id=1", "--app-installation-id=2",
			"--app-private-key=testdata/create/tls.key"}},
	} {
		res := weir(t, append(append([]string{"create", "secret"}, s.args...), "-n", ns)...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "my-proxy"}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeOpaque || string(secret.Data["address"]) != "http://127.0.0.1:3128" ||
		string(secret.Data["username"]) != "bot" || string(secret.Data["password"]) != "s3cret" {
		t.Errorf("proxy secret: %s %s", secret.Type, secret.Data)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "notation-cfg"}, secret); err != nil {
		t.Fatal(err)
	}
	policy, _ := os.ReadFile("testdata/create/trustpolicy.json")
	ca, _ := os.ReadFile("testdata/create/ca.crt")
	if string(secret.Data["trustpolicy.json"]) != string(policy) || string(secret.Data["ca.crt"]) != string(ca) {
		t.Errorf("notation secret keys: %v", secret.Data)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "app-auth"}, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["githubAppID"]) != "1" || string(secret.Data["githubAppInstallationID"]) != "2" ||
		len(secret.Data["githubAppPrivateKey"]) == 0 {
		t.Errorf("githubapp secret: %v", secret.Data)
	}
}
