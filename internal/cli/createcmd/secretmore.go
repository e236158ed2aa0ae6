package createcmd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/source/git"
)

// Keys of the proxy Secret (spec.proxySecretRef of the source kinds) and
// of the Notation Secret (spec.verify.secretRef with provider notation):
// Flux's names.
const (
	proxyAddressKey = "address"
	trustPolicyKey  = "trustpolicy.json"
)

// newSecret is the Secret every create secret subcommand starts from.
func (e *env) newSecret(name string, typ corev1.SecretType, data map[string]string) (*corev1.Secret, error) {
	labels, err := e.labels()
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Type:       typ,
		StringData: data,
	}, nil
}

func newSecretGitHubAppCommand(e *env) *cobra.Command {
	var appID, owner, installationID, keyFile, baseURL string
	cmd := &cobra.Command{
		Use:   "githubapp [name]",
		Short: "Create or update a github app secret",
		Long:  "The create secret githubapp command generates a Kubernetes secret that can be used for GitRepository authentication with github app",
		Example: `  # Create a githubapp authentication secret on disk
  weir create secret githubapp podinfo-auth \
    --app-id="1" \
    --app-installation-id="2" \
    --app-private-key=./private-key-file.pem \
    --export > githubapp-auth.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			key, err := readFileAs(keyFile, "unable to read private key file")
			if err != nil {
				return err
			}
			switch {
			case appID == "":
				return fmt.Errorf("%s is required", githubapp.KeyAppID)
			case len(key) == 0:
				return fmt.Errorf("%s is required", githubapp.KeyPrivateKey)
			case (owner == "") == (installationID == ""):
				return fmt.Errorf("exactly one of %s or %s must be provided",
					githubapp.KeyInstallationOwner, githubapp.KeyInstallationID)
			}
			data := map[string]string{githubapp.KeyAppID: appID, githubapp.KeyPrivateKey: string(key)}
			if owner != "" {
				data[githubapp.KeyInstallationOwner] = owner
			} else {
				data[githubapp.KeyInstallationID] = installationID
			}
			if baseURL != "" {
				data[githubapp.KeyBaseURL] = baseURL
			}
			s, err := e.newSecret(args[0], corev1.SecretTypeOpaque, data)
			if err != nil {
				return err
			}
			return e.applySecret(c, s, "githubapp")
		},
	}
	f := cmd.Flags()
	f.StringVar(&appID, "app-id", "", "github app ID")
	f.StringVar(&owner, "app-installation-owner", "", "github app installation owner (user or organization)")
	f.StringVar(&installationID, "app-installation-id", "", "github app installation ID")
	f.StringVar(&keyFile, "app-private-key", "", "github app private key file path")
	f.StringVar(&baseURL, "app-base-url", "", "github app base URL")
	return cmd
}

// readFileAs reads path for a flag flux reports as what: "what: <error>".
func readFileAs(path, what string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

func newSecretHelmCommand(e *env) *cobra.Command {
	var username, password, crtFile, keyFile, caFile string
	cmd := &cobra.Command{
		Use:   "helm [name]",
		Short: "Create or update a Kubernetes secret for Helm repository authentication",
		Long:  "The create secret helm command generates a Kubernetes secret with basic authentication credentials.",
		Example: `  # Create a Helm authentication secret on disk
  weir create secret helm repo-auth \
    --namespace=my-namespace \
    --username=my-username \
    --password=my-password \
    --export > repo-auth.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var ca, crt, key []byte
			var err error
			if caFile != "" {
				if ca, err = readFileAs(caFile, "unable to read TLS CA file"); err != nil {
					return err
				}
			}
			if crtFile != "" {
				if crt, err = readFileAs(crtFile, "failed to read cert file"); err != nil {
					return err
				}
			}
			if keyFile != "" {
				if key, err = readFileAs(keyFile, "failed to read key file"); err != nil {
					return err
				}
			}
			s, err := helmAuthSecret(username, password, ca, crt, key)
			if err != nil {
				return err
			}
			full, err := e.newSecret(args[0], s.Type, s.StringData)
			if err != nil {
				return err
			}
			return e.applySecret(c, full, "helm")
		},
	}
	f := cmd.Flags()
	f.StringVarP(&username, "username", "u", "", "basic authentication username")
	f.StringVarP(&password, "password", "p", "", "basic authentication password")
	f.StringVar(&crtFile, "tls-crt-file", "", "TLS authentication cert file path")
	f.StringVar(&keyFile, "tls-key-file", "", "TLS authentication key file path")
	f.StringVar(&caFile, "ca-crt-file", "", "TLS authentication CA file path")
	return cmd
}

// helmAuthSecret is the type and data of a HelmRepository's secretRef, in
// Flux's order of precedence: a client certificate pair makes a
// kubernetes.io/tls Secret (with the CA, without the basic auth, as flux
// writes it), else basic auth a kubernetes.io/basic-auth one (with the CA),
// else a CA alone an Opaque one; nothing given, an empty Secret.
func helmAuthSecret(username, password string, ca, crt, key []byte) (*corev1.Secret, error) {
	data := map[string]string{}
	s := &corev1.Secret{StringData: data}
	switch {
	case len(crt) > 0 || len(key) > 0:
		if len(key) == 0 {
			return nil, errors.New("found certificate but missing private key")
		}
		if len(crt) == 0 {
			return nil, errors.New("found private key but missing certificate")
		}
		if _, err := tls.X509KeyPair(crt, key); err != nil {
			return nil, fmt.Errorf("invalid TLS certificate and key pair: %w", err)
		}
		s.Type = corev1.SecretTypeTLS
		data[git.SecretTLSCert], data[git.SecretTLSKey] = string(crt), string(key)
	case username != "" || password != "":
		if username == "" {
			return nil, errors.New("username is required")
		}
		if password == "" {
			return nil, errors.New("password is required")
		}
		s.Type = corev1.SecretTypeBasicAuth
		data[git.SecretUsername], data[git.SecretPassword] = username, password
	case len(ca) > 0:
		s.Type = corev1.SecretTypeOpaque
	}
	if len(ca) > 0 {
		data[git.SecretCA] = string(ca)
	}
	return s, nil
}

func newSecretProxyCommand(e *env) *cobra.Command {
	var address, username, password string
	cmd := &cobra.Command{
		Use:   "proxy [name]",
		Short: "Create or update a Kubernetes secret for proxy authentication",
		Long: `The create secret proxy command generates a Kubernetes secret with the
proxy address and the basic authentication credentials.`,
		Example: `  # Create a proxy secret on disk
  weir create secret proxy my-proxy \
    --namespace=my-namespace \
    --address=https://my-proxy.com \
    --username=my-username \
    --password=my-password \
    --export > proxy.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if address == "" {
				return errors.New("address is required")
			}
			if _, err := url.Parse(address); err != nil {
				// Not the URL itself: it may carry a password.
				var uerr *url.Error
				if errors.As(err, &uerr) {
					err = uerr.Err
				}
				return fmt.Errorf("invalid proxy address: %w", err)
			}
			data := map[string]string{proxyAddressKey: address}
			if username != "" {
				data[git.SecretUsername] = username
			}
			if password != "" {
				data[git.SecretPassword] = password
			}
			s, err := e.newSecret(args[0], corev1.SecretTypeOpaque, data)
			if err != nil {
				return err
			}
			return e.applySecret(c, s, "proxy")
		},
	}
	f := cmd.Flags()
	f.StringVar(&address, "address", "", "proxy address")
	f.StringVarP(&username, "username", "u", "", "basic authentication username")
	f.StringVarP(&password, "password", "p", "", "basic authentication password")
	return cmd
}

func newSecretNotationCommand(e *env) *cobra.Command {
	var policyFile string
	var caFiles []string
	cmd := &cobra.Command{
		Use:   "notation [name]",
		Short: "Create or update a Kubernetes secret for verifications of artifacts signed by Notation",
		Long:  "The create secret notation command generates a Kubernetes secret with root ca certificates and trust policy.",
		Example: `  # Create a Notation configuration secret on disk
  weir create secret notation my-notation-cert \
    --namespace=my-namespace \
    --trust-policy-file=./my-trust-policy.json \
    --ca-cert-file=./my-cert.crt \
    --export > my-notation-cert.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(caFiles) == 0 {
				return errors.New("--ca-cert-file is required")
			}
			if policyFile == "" {
				return errors.New("--trust-policy-file is required")
			}
			if _, err := e.labels(); err != nil {
				return err
			}
			policy, err := readFileAs(policyFile, "unable to read trust policy file")
			if err != nil {
				return err
			}
			if err := validateTrustPolicy(policy, policyFile); err != nil {
				return err
			}
			data := map[string]string{}
			var fileErr error
			for _, f := range caFiles {
				base := filepath.Base(f)
				if !strings.HasSuffix(base, ".crt") && !strings.HasSuffix(base, ".pem") {
					fileErr = errors.Join(fileErr, fmt.Errorf("%s must end with either .crt or .pem", base))
					continue
				}
				ca, err := readFileAs(f, "unable to read TLS CA file")
				if err != nil {
					fileErr = errors.Join(fileErr, err)
					continue
				}
				data[base] = string(ca)
			}
			if fileErr != nil {
				return fileErr
			}
			data[trustPolicyKey] = string(policy)
			s, err := e.newSecret(args[0], "", data)
			if err != nil {
				return err
			}
			return e.applySecret(c, s, "notation configuration")
		},
	}
	f := cmd.Flags()
	f.StringVar(&policyFile, "trust-policy-file", "", "notation trust policy file path")
	f.StringSliceVar(&caFiles, "ca-cert-file", nil, "root ca cert file path")
	return cmd
}
