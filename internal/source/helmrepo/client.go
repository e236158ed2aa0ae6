package helmrepo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/registry"
	"github.com/weir-gitops/weir/internal/source/oci"
	"github.com/weir-gitops/weir/internal/version"
)

// Flux's defaults for source-controller's Helm size flags.
const (
	// DefaultMaxIndexSize is --helm-index-max-size: 50 MiB.
	DefaultMaxIndexSize int64 = 50 << 20
	// DefaultMaxChartSize is --helm-chart-max-size: 10 MiB.
	DefaultMaxChartSize int64 = 10 << 20
	// DefaultMaxChartFileSize is --helm-chart-file-max-size: 5 MiB.
	DefaultMaxChartFileSize int64 = 5 << 20
)

// ociScheme starts the URL of an OCI HelmRepository.
const ociScheme = "oci://"

// Keys of a HelmRepository's Secrets, as Flux reads them.
const (
	// UsernameKey and PasswordKey hold basic-auth credentials in
	// spec.secretRef; both or neither.
	UsernameKey = "username"
	PasswordKey = "password"
	// LegacyCertKey, LegacyKeyKey and LegacyCAKey are the TLS keys of old
	// Secrets. Flux still honours them, in spec.secretRef and in
	// spec.certSecretRef, when tls.crt, tls.key or ca.crt is absent.
	LegacyCertKey = "certFile"
	LegacyKeyKey  = "keyFile"
	LegacyCAKey   = "caFile"
)

// Limits bound what a Client reads; zero values take Flux's defaults.
type Limits struct {
	// MaxIndexSize is --helm-index-max-size.
	MaxIndexSize int64
	// MaxChartSize is --helm-chart-max-size: DownloadChart's bound when
	// its caller passes none.
	MaxChartSize int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxIndexSize <= 0 {
		l.MaxIndexSize = DefaultMaxIndexSize
	}
	if l.MaxChartSize <= 0 {
		l.MaxChartSize = DefaultMaxChartSize
	}
	return l
}

// Client reaches one HelmRepository: its index and charts over HTTP(S) for
// the default type, or the registry options for the oci type. It holds the
// credentials it was built with and never prints them.
type Client struct {
	repoURL *url.URL
	limits  Limits
	isOCI   bool

	// HTTP(S) repositories.
	http               *http.Client
	username, password string
	passCredentials    bool

	// OCI repositories.
	ociOptions oci.Options
}

// NewClient reads what reaching repo takes from its spec and the Secrets it
// names (read with reader, which should be uncached so that credentials
// stay out of the informer cache):
//
//   - spec.secretRef: username and password (basic auth for HTTP, a login
//     for OCI), or for OCI a kubernetes.io/dockerconfigjson Secret; TLS
//     keys in it (tls.crt, tls.key, ca.crt, or the legacy certFile, keyFile,
//     caFile) are used when spec.certSecretRef is unset, as Flux does.
//   - spec.certSecretRef: tls.crt and tls.key (a client certificate), ca.crt
//     (added to the system roots).
//   - spec.passCredentials, spec.timeout; for OCI spec.insecure (plain HTTP)
//     and spec.provider: a cloud provider, when spec.secretRef is unset,
//     logs in with the identity s decides (internal/auth/registry).
//
// Errors match ErrInvalidURL, ErrUnsupported or ErrAuth.
func NewClient(ctx context.Context, reader client.Reader, repo *sourcev1.HelmRepository, limits Limits, s *auth.Settings) (*Client, error) {
	u, err := parseRepositoryURL(repo)
	if err != nil {
		return nil, err
	}
	c := &Client{repoURL: u, limits: limits.withDefaults(), isOCI: repo.IsOCI(), passCredentials: repo.Spec.PassCredentials}
	creds, tlsCfg, err := readSecrets(ctx, reader, repo)
	if err != nil {
		return nil, err
	}
	if c.isOCI {
		c.ociOptions = oci.Options{TLS: tlsCfg, Insecure: repo.Spec.Insecure}
		if creds != nil {
			c.ociOptions.Keychain, err = creds.keychain(u.Host)
			if err != nil {
				return nil, errorf(ErrAuth, "failed to configure login options: %w", err)
			}
		} else if c.ociOptions.Keychain, err = providerLogin(ctx, repo, u.Host, s); err != nil {
			return nil, err
		}
		return c, nil
	}
	if creds != nil {
		c.username, c.password = creds.username, creds.password
	}
	c.http = newHTTPClient(tlsCfg, repo.GetTimeout())
	return c, nil
}

// parseRepositoryURL checks spec.url against spec.type the way Flux does.
func parseRepositoryURL(repo *sourcev1.HelmRepository) (*url.URL, error) {
	raw := repo.Spec.URL
	isOCIURL := strings.HasPrefix(raw, ociScheme)
	if repo.IsOCI() != isOCIURL {
		if isOCIURL {
			return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: 'oci' URL scheme cannot be used with 'default' HelmRepository type")
		}
		return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: '%s' is not an oci:// URL, as the 'oci' HelmRepository type requires", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: %w", err)
	}
	switch {
	case u.Host == "":
		return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: '%s' has no host", raw)
	case u.User != nil:
		return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: credentials belong in spec.secretRef, not in the URL")
	case !isOCIURL && u.Scheme != "http" && u.Scheme != "https":
		return nil, errorf(ErrInvalidURL, "invalid Helm repository URL: scheme %q not supported", u.Scheme)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// URL is the repository URL without a trailing slash, as the index and
// relative chart URLs are resolved against it.
func (c *Client) URL() string { return c.repoURL.String() }

// IsOCI reports whether the repository is an OCI registry.
func (c *Client) IsOCI() bool { return c.isOCI }

// OCIOptions is how a HelmChart reaches an OCI HelmRepository's registry
// through internal/source/oci: the login, TLS material and spec.insecure. The
// chart named name is at OCIChartURL(name).
func (c *Client) OCIOptions() oci.Options { return c.ociOptions }

// OCIChartURL is the oci:// repository of the chart called name: the
// HelmRepository URL with the chart name appended, as Helm and Flux form it.
func (c *Client) OCIChartURL(name string) string {
	return c.URL() + "/" + strings.TrimPrefix(name, "/")
}

// String names the repository and whether credentials are set, never their
// values.
func (c *Client) String() string {
	creds := "anonymous"
	if c.username != "" || c.ociOptions.Keychain != nil {
		creds = "with credentials"
	}
	return fmt.Sprintf("Helm repository %s (%s)", c.URL(), creds)
}

// GoString keeps %#v from printing the credentials.
func (c *Client) GoString() string { return c.String() }

// newHTTPClient follows Helm's HTTP getter: the proxy from the environment,
// no transparent decompression (a .tgz served with Content-Encoding: gzip
// must stay a .tgz), and spec.timeout for each request.
func newHTTPClient(tlsCfg *tls.Config, timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg
	}
	return &http.Client{Transport: t, Timeout: timeout}
}

// userAgent goes on every request, so a repository's logs tell weir apart.
var userAgent = "weir/" + version.Version

// basicAuth is a username and password from spec.secretRef, or a docker
// config for OCI.
type basicAuth struct {
	username, password string
	dockerConfig       map[string][]byte
}

// providerLogin is the cloud login of an OCI repository without
// spec.secretRef: spec.provider's registry, as the lockdown default
// ServiceAccount or the controller (the kind names no ServiceAccount);
// nil for provider generic.
func providerLogin(ctx context.Context, repo *sourcev1.HelmRepository, host string, s *auth.Settings) (authn.Keychain, error) {
	p := repo.Spec.Provider
	if p == "" || p == sourcev1.GenericOCIProvider || repo.Spec.SecretRef != nil {
		return nil, nil
	}
	id, err := s.IdentityFor(repo.Namespace, "")
	if err == nil {
		var login authn.Authenticator
		if login, err = registry.Login(ctx, p, repo.Spec.URL, id, s); err == nil {
			return registry.Keychain(host, login), nil
		}
	}
	kind := ErrAuth
	if errors.Is(err, registry.ErrUnsupportedProvider) {
		kind = ErrUnsupported
	}
	return nil, errorf(kind, "failed to get credential from '%s': %w", p, err)
}

// keychain is the OCI login: the docker config's entries, or the username
// and password for the repository's registry host.
func (a *basicAuth) keychain(host string) (authn.Keychain, error) {
	if a.dockerConfig != nil {
		return oci.NewKeychain(a.dockerConfig)
	}
	return registry.Keychain(host, authn.FromConfig(authn.AuthConfig{Username: a.username, Password: a.password})), nil
}

// readSecrets reads spec.certSecretRef and spec.secretRef.
func readSecrets(ctx context.Context, reader client.Reader, repo *sourcev1.HelmRepository) (*basicAuth, *tls.Config, error) {
	var tlsCfg *tls.Config
	if ref := repo.Spec.CertSecretRef; ref != nil {
		s, err := getSecret(ctx, reader, repo.Namespace, ref.Name)
		if err != nil {
			return nil, nil, errorf(ErrAuth, "failed to get TLS authentication secret '%s/%s': %w", repo.Namespace, ref.Name, err)
		}
		if tlsCfg, err = tlsConfig(s.Data); err != nil {
			return nil, nil, errorf(ErrAuth, "failed to construct Helm client's TLS config: %w", err)
		}
	}
	ref := repo.Spec.SecretRef
	if ref == nil {
		return nil, tlsCfg, nil
	}
	s, err := getSecret(ctx, reader, repo.Namespace, ref.Name)
	if err != nil {
		return nil, nil, errorf(ErrAuth, "failed to get authentication secret '%s/%s': %w", repo.Namespace, ref.Name, err)
	}
	auth, err := authFromSecret(s, repo.IsOCI())
	if err != nil {
		return nil, nil, errorf(ErrAuth, "failed to configure Helm client with secret '%s/%s': %w", repo.Namespace, ref.Name, err)
	}
	if tlsCfg == nil {
		// Deprecated in Flux, still honoured: TLS keys in spec.secretRef.
		if tlsCfg, err = tlsConfig(s.Data); err != nil {
			return nil, nil, errorf(ErrAuth, "failed to construct Helm client's TLS config: %w", err)
		}
	}
	return auth, tlsCfg, nil
}

func getSecret(ctx context.Context, reader client.Reader, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// authFromSecret reads username and password (both or neither) or, for OCI,
// a docker config. It returns nil when the Secret holds no credentials
// (one holding only TLS keys, say).
func authFromSecret(s *corev1.Secret, isOCI bool) (*basicAuth, error) {
	if isOCI && (len(s.Data[oci.DockerConfigJSONKey]) > 0 || len(s.Data[oci.DockerConfigKey]) > 0) {
		return &basicAuth{dockerConfig: s.Data}, nil
	}
	user, pass := string(s.Data[UsernameKey]), string(s.Data[PasswordKey])
	switch {
	case user == "" && pass == "":
		return nil, nil
	case user == "":
		return nil, fmt.Errorf("key '%s' is set but '%s' is missing", PasswordKey, UsernameKey)
	case pass == "":
		return nil, fmt.Errorf("key '%s' is set but '%s' is missing", UsernameKey, PasswordKey)
	}
	return &basicAuth{username: user, password: pass}, nil
}

// tlsConfig reads tls.crt, tls.key and ca.crt, falling back to the legacy
// certFile, keyFile and caFile; nil when the Secret holds none.
func tlsConfig(data map[string][]byte) (*tls.Config, error) {
	d := map[string][]byte{
		oci.TLSCertKey: firstSet(data, oci.TLSCertKey, LegacyCertKey),
		oci.TLSKeyKey:  firstSet(data, oci.TLSKeyKey, LegacyKeyKey),
		oci.CAKey:      firstSet(data, oci.CAKey, LegacyCAKey),
	}
	return oci.NewTLSConfig(d)
}

func firstSet(data map[string][]byte, keys ...string) []byte {
	for _, k := range keys {
		if v := data[k]; len(v) > 0 {
			return v
		}
	}
	return nil
}
