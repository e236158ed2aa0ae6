package createcmd

import (
	"fmt"
	"net/url"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/install/manifests"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/source/sshkey"
)

// gitCredentials are the flags a Git secret is made of.
type gitCredentials struct {
	username, password, bearerToken string
	caFile, privateKeyFile          string
	knownHostsFile                  string
	key                             sshkey.Options
}

// gitSecret builds the Secret a GitRepository at u authenticates with: an
// SSH identity (read or generated) with known_hosts for ssh URLs; username
// and password, bearer token and CA for HTTP(S). Nothing is scanned.
func (e *env) gitSecret(name, ns string, labels map[string]string, u *url.URL, c gitCredentials) (*corev1.Secret, error) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		StringData: map[string]string{},
	}
	switch u.Scheme {
	case "ssh":
		var private, public []byte
		if c.privateKeyFile != "" {
			data, err := readFile("private-key-file", c.privateKeyFile)
			if err != nil {
				return nil, err
			}
			var signer ssh.Signer
			if c.password != "" {
				signer, err = ssh.ParsePrivateKeyWithPassphrase(data, []byte(c.password))
			} else {
				signer, err = ssh.ParsePrivateKey(data)
			}
			if err != nil {
				return nil, fmt.Errorf("--private-key-file %s: %w", c.privateKeyFile, err)
			}
			private, public = data, ssh.MarshalAuthorizedKey(signer.PublicKey())
			if c.password != "" {
				s.StringData[git.SecretPassword] = c.password
			}
		} else {
			kp, err := sshkey.Generate(c.key)
			if err != nil {
				return nil, err
			}
			private, public = kp.PrivateKeyPEM, kp.AuthorizedKey
		}
		s.StringData[git.SecretIdentity] = string(private)
		s.StringData[sshkey.PublicKeySecretKey] = string(public)
		if c.knownHostsFile != "" {
			hosts, err := readFile("known-hosts-file", c.knownHostsFile)
			if err != nil {
				return nil, err
			}
			s.StringData[git.SecretKnownHosts] = string(hosts)
		} else {
			e.p.Warningf("no --known-hosts-file given: add the host keys of %s to the secret's %s key before the source can connect",
				u.Host, git.SecretKnownHosts)
		}
	case "http", "https":
		if c.username != "" && c.password != "" {
			s.StringData[git.SecretUsername] = c.username
			s.StringData[git.SecretPassword] = c.password
			if u.Scheme == "http" {
				e.p.Warningf("insecure configuration: credentials configured for an HTTP URL")
			}
		}
		if c.bearerToken != "" {
			s.StringData[git.SecretBearerToken] = c.bearerToken
		}
		if c.caFile != "" {
			ca, err := readFile("ca-file", c.caFile)
			if err != nil {
				return nil, err
			}
			s.StringData[git.SecretCA] = string(ca)
		}
	}
	return s, nil
}

func newSecretGitCommand(e *env) *cobra.Command {
	var o gitCredentials
	var rawURL, caCrtFile string
	cmd := &cobra.Command{
		Use:   "git [name]",
		Short: "Create or update a Kubernetes secret for Git authentication",
		Long: `The create secret git command generates a Kubernetes secret with Git credentials.
For Git over SSH, an SSH key pair is generated (or read from --private-key-file) and stored in the secret,
with the host keys of --known-hosts-file. For Git over HTTP/S, the provided basic authentication credentials
or bearer authentication token are stored in the secret.`,
		Example: `  # Create a Git SSH authentication secret using an ECDSA P-521 curve public key
  weir create secret git podinfo-auth \
    --url=ssh://git@github.com/stefanprodan/podinfo \
    --ssh-key-algorithm=ecdsa \
    --ssh-ecdsa-curve=p521 \
    --known-hosts-file=./known_hosts

  # Create a secret for a Git repository using basic authentication
  weir create secret git podinfo-auth \
    --url=https://github.com/stefanprodan/podinfo \
    --username=username \
    --password=password`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if rawURL == "" {
				return fmt.Errorf("url is required")
			}
			u, err := url.Parse(rawURL)
			if err != nil {
				return fmt.Errorf("git URL parse failed: %w", err)
			}
			switch u.Scheme {
			case "ssh":
			case "http", "https":
				if (o.username == "" || o.password == "") && o.bearerToken == "" {
					return fmt.Errorf("for Git over HTTP/S the username and password, or a bearer token is required")
				}
				if o.username != "" && o.password != "" && o.bearerToken != "" {
					return fmt.Errorf("user credentials and bearer token cannot be used together")
				}
			default:
				return fmt.Errorf("git URL scheme '%s' not supported, can be: ssh, http and https", u.Scheme)
			}
			if caCrtFile != "" {
				o.caFile = caCrtFile // --ca-crt-file takes precedence over --ca-file
			}
			labels, err := e.labels()
			if err != nil {
				return err
			}
			s, err := e.gitSecret(name, e.deps.Namespace(), labels, u, o)
			if err != nil {
				return err
			}
			return e.applySecret(c, s, "git")
		},
	}
	f := cmd.Flags()
	f.StringVar(&rawURL, "url", "", "git address, e.g. ssh://git@host/org/repository")
	f.StringVarP(&o.username, "username", "u", "", "basic authentication username")
	f.StringVarP(&o.password, "password", "p", "", "basic authentication password")
	o.key = sshkey.DefaultOptions()
	o.key.BindFlags(cmd.Flags())
	f.StringVar(&o.caFile, "ca-file", "", "path to TLS CA file used for validating self-signed certificates")
	f.StringVar(&caCrtFile, "ca-crt-file", "", "path to TLS CA certificate file used for validating self-signed certificates; takes precedence over --ca-file")
	f.StringVar(&o.privateKeyFile, "private-key-file", "", "path to a passwordless private key file used for authenticating to the Git SSH server")
	f.StringVar(&o.bearerToken, "bearer-token", "", "bearer authentication token")
	f.StringVar(&o.knownHostsFile, "known-hosts-file", "", "path to a known_hosts file with the SSH server's host keys (weir never scans the host)")
	return cmd
}

// applySecret prints s with --export, or applies it and reports it as the
// flux CLI does: "► git secret 'NAME' created in 'NS' namespace".
func (e *env) applySecret(c *cobra.Command, s *corev1.Secret, what string) error {
	if e.o.export {
		return writeYAML(e.streams.Out, s)
	}
	if pub, ok := s.StringData[sshkey.PublicKeySecretKey]; ok {
		e.p.Generatef("deploy key: %s", pub)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	if _, err := apply(ctx, cl, s); err != nil {
		return err
	}
	e.p.Actionf("%s secret '%s' created in '%s' namespace", what, s.Name, s.Namespace)
	return nil
}

func newSecretOCICommand(e *env) *cobra.Command {
	var rawURL, username, password string
	cmd := &cobra.Command{
		Use:   "oci [name]",
		Short: "Create or update a Kubernetes image pull secret",
		Long:  "The create secret oci command generates a Kubernetes secret that can be used for OCIRepository authentication",
		Example: `  # Create an OCI authentication secret on disk
  weir create secret oci podinfo-auth \
    --url=ghcr.io \
    --username=username \
    --password=password \
    --export > repo-auth.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			switch {
			case rawURL == "":
				return fmt.Errorf("--url is required")
			case username == "":
				return fmt.Errorf("--username is required")
			case password == "":
				return fmt.Errorf("--password is required")
			}
			if _, err := name.ParseReference(rawURL); err != nil {
				return fmt.Errorf("error parsing url: '%w'", err)
			}
			labels, err := e.labels()
			if err != nil {
				return err
			}
			cfg, err := manifests.DockerConfigJSON(rawURL, username, password)
			if err != nil {
				return err
			}
			s := &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: e.deps.Namespace(), Labels: labels},
				Type:       corev1.SecretTypeDockerConfigJson,
				StringData: map[string]string{corev1.DockerConfigJsonKey: string(cfg)},
			}
			return e.applySecret(c, s, "oci")
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "oci repository address e.g ghcr.io/stefanprodan/charts")
	cmd.Flags().StringVarP(&username, "username", "u", "", "basic authentication username")
	cmd.Flags().StringVarP(&password, "password", "p", "", "basic authentication password")
	return cmd
}

func newSecretTLSCommand(e *env) *cobra.Command {
	var crtFile, keyFile, caFile string
	cmd := &cobra.Command{
		Use:   "tls [name]",
		Short: "Create or update a Kubernetes secret with TLS certificates",
		Long:  "The create secret tls command generates a Kubernetes secret with certificates for use with TLS.",
		Example: `  # Create a TLS secret on disk; files are expected to be PEM-encoded.
  weir create secret tls certs \
    --namespace=my-namespace \
    --tls-crt-file=./client.crt \
    --tls-key-file=./client.key \
    --ca-crt-file=./ca.crt \
    --export > certs.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			labels, err := e.labels()
			if err != nil {
				return err
			}
			s := &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: e.deps.Namespace(), Labels: labels},
				StringData: map[string]string{},
			}
			if caFile != "" {
				ca, err := readFile("ca-crt-file", caFile)
				if err != nil {
					return err
				}
				s.StringData[git.SecretCA] = string(ca)
			}
			if crtFile != "" && keyFile != "" {
				crt, err := readFile("tls-crt-file", crtFile)
				if err != nil {
					return err
				}
				key, err := readFile("tls-key-file", keyFile)
				if err != nil {
					return err
				}
				s.StringData[git.SecretTLSCert], s.StringData[git.SecretTLSKey] = string(crt), string(key)
			}
			return e.applySecret(c, s, "tls")
		},
	}
	cmd.Flags().StringVar(&crtFile, "tls-crt-file", "", "TLS authentication cert file path")
	cmd.Flags().StringVar(&keyFile, "tls-key-file", "", "TLS authentication key file path")
	cmd.Flags().StringVar(&caFile, "ca-crt-file", "", "TLS authentication CA file path")
	return cmd
}
