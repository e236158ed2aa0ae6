package oci

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Keys of the Secrets an OCIRepository refers to, as Flux reads them.
const (
	// DockerConfigJSONKey holds a kubernetes.io/dockerconfigjson Secret's
	// {"auths": {...}} document.
	DockerConfigJSONKey = ".dockerconfigjson"
	// DockerConfigKey holds a legacy kubernetes.io/dockercfg Secret's
	// registry map.
	DockerConfigKey = ".dockercfg"

	// CAKey, TLSCertKey and TLSKeyKey are spec.certSecretRef's keys.
	CAKey      = "ca.crt"
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"

	// ProxyAddressKey, ProxyUsernameKey and ProxyPasswordKey are
	// spec.proxySecretRef's keys.
	ProxyAddressKey  = "address"
	ProxyUsernameKey = "username"
	ProxyPasswordKey = "password"
)

// dockerHub is the registry name go-containerregistry gives Docker Hub.
const dockerHub = "index.docker.io"

// Keychain holds registry logins read from docker config Secrets. It is an
// authn.Keychain; its String never prints passwords or tokens.
type Keychain struct {
	creds []credential
}

// credential is one registry entry of a docker config.
type credential struct {
	host string // lower case, port included, may hold "*" labels
	path string // repository path prefix, "" for the whole registry
	glob bool
	conf authn.AuthConfig
	// order keeps the Secrets' order among equally specific entries.
	order int
}

// dockerConfigEntry is a registry entry as docker and Kubernetes write it.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// NewKeychain reads the data of docker config Secrets, in priority order:
// each must hold DockerConfigJSONKey or DockerConfigKey. Entries with the
// same specificity are tried in the order given, so spec.secretRef goes
// first and the ServiceAccount's pull secrets after it.
func NewKeychain(secrets ...map[string][]byte) (*Keychain, error) {
	k := &Keychain{}
	for i, data := range secrets {
		entries, err := dockerConfigEntries(data)
		if err != nil {
			return nil, err
		}
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			c, err := newCredential(key, entries[key])
			if err != nil {
				return nil, err
			}
			c.order = i
			k.creds = append(k.creds, c)
		}
	}
	// Most specific first: longer paths, then exact hosts before wildcards.
	slices.SortStableFunc(k.creds, func(a, b credential) int {
		if c := cmp.Compare(len(b.path), len(a.path)); c != 0 {
			return c
		}
		if a.glob != b.glob {
			if a.glob {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.order, b.order)
	})
	return k, nil
}

func dockerConfigEntries(data map[string][]byte) (map[string]dockerConfigEntry, error) {
	if raw, ok := data[DockerConfigJSONKey]; ok {
		var doc struct {
			Auths map[string]dockerConfigEntry `json:"auths"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			// json errors quote no input beyond a character.
			return nil, invalidf("secret key %q is not a docker config JSON document: %v", DockerConfigJSONKey, err)
		}
		return doc.Auths, nil
	}
	if raw, ok := data[DockerConfigKey]; ok {
		var entries map[string]dockerConfigEntry
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, invalidf("secret key %q is not a docker config document: %v", DockerConfigKey, err)
		}
		return entries, nil
	}
	return nil, invalidf("secret has neither %q nor %q", DockerConfigJSONKey, DockerConfigKey)
}

func newCredential(key string, e dockerConfigEntry) (credential, error) {
	host, p := splitRegistryKey(key)
	if host == "" {
		return credential{}, invalidf("docker config has an entry with no registry host")
	}
	conf := authn.AuthConfig{
		Username: e.Username, Password: e.Password,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken,
	}
	if e.Auth != "" && conf.Username == "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return credential{}, invalidf("docker config entry for %s: field \"auth\" is not base64", host)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return credential{}, invalidf("docker config entry for %s: field \"auth\" is not <user>:<password>", host)
		}
		conf.Username, conf.Password = user, pass
	}
	return credential{host: host, path: p, glob: strings.Contains(host, "*"), conf: conf}, nil
}

// splitRegistryKey reads a docker config key: [scheme://]host[:port][/path].
// Docker Hub's legacy keys name the whole of Docker Hub.
func splitRegistryKey(key string) (host, p string) {
	key = strings.TrimSpace(key)
	if i := strings.Index(key, "://"); i >= 0 {
		key = key[i+3:]
	}
	host, p, _ = strings.Cut(key, "/")
	host = strings.ToLower(host)
	p = strings.Trim(p, "/")
	switch host {
	case "docker.io", "registry-1.docker.io", dockerHub:
		host = dockerHub
		if p == "v1" || p == "v2" {
			p = ""
		}
	}
	return host, p
}

// Resolve returns the credentials for target, anonymous when none match.
func (k *Keychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if k == nil {
		return authn.Anonymous, nil
	}
	host := strings.ToLower(target.RegistryStr())
	repoPath := strings.TrimPrefix(target.String(), target.RegistryStr())
	repoPath = strings.Trim(repoPath, "/")
	for _, c := range k.creds {
		if !hostMatches(c.host, host) {
			continue
		}
		if c.path != "" && repoPath != c.path && !strings.HasPrefix(repoPath, c.path+"/") {
			continue
		}
		return authn.FromConfig(c.conf), nil
	}
	return authn.Anonymous, nil
}

// hostMatches compares a docker config host with a registry host, label by
// label, "*" matching one label, as the kubelet does. Ports must be equal.
func hostMatches(pattern, host string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == host
	}
	pHost, pPort := splitPort(pattern)
	hHost, hPort := splitPort(host)
	if pPort != hPort {
		return false
	}
	pl, hl := strings.Split(pHost, "."), strings.Split(hHost, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if ok, err := path.Match(pl[i], hl[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitPort(hostport string) (string, string) {
	if i := strings.LastIndex(hostport, ":"); i >= 0 && !strings.Contains(hostport[i:], "]") {
		return hostport[:i], hostport[i+1:]
	}
	return hostport, ""
}

// String names the registries and users the keychain holds, never their
// secrets.
func (k *Keychain) String() string {
	if k == nil || len(k.creds) == 0 {
		return "oci.Keychain{anonymous}"
	}
	parts := make([]string, 0, len(k.creds))
	for _, c := range k.creds {
		who := "token"
		if c.conf.Username != "" {
			who = "user " + c.conf.Username
		}
		where := c.host
		if c.path != "" {
			where += "/" + c.path
		}
		parts = append(parts, where+" ("+who+")")
	}
	return "oci.Keychain{" + strings.Join(parts, ", ") + "}"
}

// GoString keeps %#v from printing the credentials.
func (k *Keychain) GoString() string { return k.String() }

// NewTLSConfig reads a certSecretRef Secret: ca.crt extends the system
// roots; tls.crt and tls.key, which go together, are the client
// certificate. It returns nil when the Secret holds none of them.
func NewTLSConfig(data map[string][]byte) (*tls.Config, error) {
	ca, cert, key := data[CAKey], data[TLSCertKey], data[TLSKeyKey]
	switch {
	case len(cert) > 0 && len(key) == 0:
		return nil, invalidf("secret key %q requires %q", TLSCertKey, TLSKeyKey)
	case len(key) > 0 && len(cert) == 0:
		return nil, invalidf("secret key %q requires %q", TLSKeyKey, TLSCertKey)
	case len(ca) == 0 && len(cert) == 0:
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(ca) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(ca) {
			return nil, invalidf("secret key %q holds no PEM certificate", CAKey)
		}
		cfg.RootCAs = pool
	}
	if len(cert) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			// The tls error names neither key material nor file content.
			return nil, invalidf("secret keys %q and %q are not a matching PEM certificate and key: %v", TLSCertKey, TLSKeyKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// NewProxyURL reads a proxySecretRef Secret: address (required; an http,
// https, socks5 or socks5h URL), username and password (optional).
func NewProxyURL(data map[string][]byte) (*url.URL, error) {
	addr := strings.TrimSpace(string(data[ProxyAddressKey]))
	if addr == "" {
		return nil, invalidf("proxy secret needs key %q", ProxyAddressKey)
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return nil, invalidf("proxy secret key %q is not a URL such as http://proxy:3128", ProxyAddressKey)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, invalidf("proxy scheme %q is not http, https, socks5 or socks5h", u.Scheme)
	}
	if u.User != nil {
		return nil, invalidf("proxy secret key %q must not carry credentials; use %q and %q", ProxyAddressKey, ProxyUsernameKey, ProxyPasswordKey)
	}
	user, pass := string(data[ProxyUsernameKey]), string(data[ProxyPasswordKey])
	switch {
	case pass != "" && user == "":
		return nil, invalidf("proxy secret key %q requires %q", ProxyPasswordKey, ProxyUsernameKey)
	case user != "":
		u.User = url.UserPassword(user, pass)
	}
	return u, nil
}
