package git

import (
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/crypto/ssh"
)

// Keys of a GitRepository's spec.secretRef Secret, as Flux reads them.
const (
	SecretUsername    = "username"
	SecretPassword    = "password"
	SecretBearerToken = "bearerToken"
	SecretIdentity    = "identity"
	SecretKnownHosts  = "known_hosts"
	SecretCA          = "ca.crt"
	SecretCALegacy    = "caFile"
	SecretTLSCert     = "tls.crt"
	SecretTLSKey      = "tls.key"
)

// Keys of a spec.proxySecretRef Secret.
const (
	ProxyAddress  = "address"
	ProxyUsername = "username"
	ProxyPassword = "password"
)

// defaultSSHUser is the SSH user when the URL names none.
const defaultSSHUser = "git"

// scheme is the transport a repository URL asks for.
type scheme string

const (
	schemeHTTP  scheme = "http"
	schemeHTTPS scheme = "https"
	schemeSSH   scheme = "ssh"
)

// Auth is everything needed to talk to one repository: credentials from the
// Secret, TLS material, the SSH host keys, and an optional proxy. Build it
// with NewAuth; the zero value is not usable. Its String and GoString never
// print secret values, so it is safe in logs and %v.
type Auth struct {
	url    *url.URL // the repository URL, credentials removed
	scheme scheme

	// HTTP(S)
	username, password string
	bearerToken        string
	caBundle           []byte
	clientCert         []byte
	clientKey          []byte

	// SSH: signer from the Secret's identity, or agent (NewAgentAuth).
	sshUser    string
	signer     ssh.Signer
	agent      *sshAgent
	knownHosts *knownHosts

	// Proxy, when set, routes connections through an HTTP(S) or SOCKS5
	// proxy (SSH only through SOCKS5). Set it from NewProxy.
	Proxy *Proxy

	// HostKeyAlgorithms, when set, are the SSH host key algorithms offered
	// to the server, in order (the CLI's --ssh-hostkey-algos); otherwise
	// those of the keys known_hosts holds for the server.
	HostKeyAlgorithms []string
}

// NewAuth reads a GitRepository Secret's data for repoURL. data may be nil
// for anonymous HTTP(S); SSH always needs identity and known_hosts, so that
// the host key is always checked and no agent or user file is consulted.
// Keys that do not apply to the URL's transport (identity on an https URL,
// ca.crt on ssh) are ignored, so one Secret can serve several repositories.
func NewAuth(repoURL string, data map[string][]byte) (*Auth, error) {
	u, s, err := parseRepoURL(repoURL)
	if err != nil {
		return nil, err
	}
	a := &Auth{url: u, scheme: s}
	switch s {
	case schemeSSH:
		err = a.readSSH(data)
	default:
		err = a.readHTTP(data)
	}
	if err != nil {
		return nil, err
	}
	a.moveURLCredentials()
	return a, nil
}

// moveURLCredentials takes credentials out of the URL. go-git would use
// them, but it also prints the URL it requested in some errors and writes
// it to .git/config inside the checkout. For HTTP(S) they become the basic
// auth when the Secret has none (what go-git would have done); for SSH the
// user stays (it is the login name, not a secret) and a password is
// dropped (SSH authenticates with the identity).
func (a *Auth) moveURLCredentials() {
	if a.url.User == nil {
		return
	}
	user := a.url.User.Username()
	pass, _ := a.url.User.Password()
	if a.scheme == schemeSSH {
		a.url.User = url.User(user)
		return
	}
	if a.username == "" && a.bearerToken == "" {
		a.username, a.password = user, pass
	}
	a.url.User = nil
}

func parseRepoURL(repoURL string) (*url.URL, scheme, error) {
	u, err := url.Parse(repoURL)
	if err != nil {
		// url.Parse quotes the input, which may hold credentials.
		return nil, "", invalidf("repository URL does not parse")
	}
	s := scheme(strings.ToLower(u.Scheme))
	switch s {
	case schemeHTTP, schemeHTTPS, schemeSSH:
	default:
		return nil, "", invalidf("repository URL scheme %q is not http, https or ssh", u.Scheme)
	}
	if u.Host == "" {
		return nil, "", invalidf("repository URL %s has no host", u.Redacted())
	}
	return u, s, nil
}

func (a *Auth) readHTTP(data map[string][]byte) error {
	a.username = string(data[SecretUsername])
	a.password = string(data[SecretPassword])
	a.bearerToken = string(data[SecretBearerToken])
	switch {
	case a.password != "" && a.username == "":
		return invalidf("secret key %q requires %q", SecretPassword, SecretUsername)
	case a.bearerToken != "" && a.username != "":
		return invalidf("secret keys %q and %q are mutually exclusive", SecretBearerToken, SecretUsername)
	}

	a.caBundle = data[SecretCA]
	if len(a.caBundle) == 0 {
		a.caBundle = data[SecretCALegacy]
	}
	a.clientCert, a.clientKey = data[SecretTLSCert], data[SecretTLSKey]
	switch {
	case len(a.clientCert) > 0 && len(a.clientKey) == 0:
		return invalidf("secret key %q requires %q", SecretTLSCert, SecretTLSKey)
	case len(a.clientKey) > 0 && len(a.clientCert) == 0:
		return invalidf("secret key %q requires %q", SecretTLSKey, SecretTLSCert)
	}
	if a.scheme == schemeHTTP {
		// TLS material cannot apply to plain HTTP; keep none so that it is
		// never mistaken for protection.
		a.caBundle, a.clientCert, a.clientKey = nil, nil, nil
		return nil
	}
	if len(a.caBundle) > 0 && !hasCertificate(a.caBundle) {
		return invalidf("secret key %q holds no PEM certificate", caKey(data))
	}
	if len(a.clientCert) > 0 {
		if _, err := tls.X509KeyPair(a.clientCert, a.clientKey); err != nil {
			// The tls error names neither key material nor file content.
			return invalidf("secret keys %q and %q are not a matching PEM certificate and key: %v", SecretTLSCert, SecretTLSKey, err)
		}
	}
	return nil
}

func caKey(data map[string][]byte) string {
	if len(data[SecretCA]) > 0 {
		return SecretCA
	}
	return SecretCALegacy
}

func (a *Auth) readSSH(data map[string][]byte) error {
	a.sshUser = a.url.User.Username()
	if a.sshUser == "" {
		a.sshUser = defaultSSHUser
	}
	identity := data[SecretIdentity]
	if len(identity) == 0 {
		return invalidf("ssh URLs need secret key %q (a private key)", SecretIdentity)
	}
	if len(data[SecretKnownHosts]) == 0 {
		return invalidf("ssh URLs need secret key %q: the server's host key is always verified", SecretKnownHosts)
	}
	signer, err := parseIdentity(identity, data[SecretPassword])
	if err != nil {
		return err
	}
	kh, err := parseKnownHosts(data[SecretKnownHosts])
	if err != nil {
		return err
	}
	a.signer, a.knownHosts = signer, kh
	return nil
}

// parseIdentity reads an SSH private key, decrypting it with password when
// the key is encrypted. A password next to an unencrypted key is ignored:
// the same Secret may carry an HTTPS password.
func parseIdentity(identity, password []byte) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(identity)
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return signer, nil
	case errors.As(err, &missing) && len(password) == 0:
		return nil, invalidf("secret key %q is encrypted and %q is empty", SecretIdentity, SecretPassword)
	case errors.As(err, &missing):
		signer, err = ssh.ParsePrivateKeyWithPassphrase(identity, password)
		if err != nil {
			// x/crypto's messages name the failure, not the key or password.
			return nil, invalidf("decrypt secret key %q with %q: %v", SecretIdentity, SecretPassword, err)
		}
		return signer, nil
	default:
		return nil, invalidf("secret key %q is not an SSH private key: %v", SecretIdentity, err)
	}
}

func hasCertificate(pemData []byte) bool {
	return strings.Contains(string(pemData), "-----BEGIN CERTIFICATE-----")
}

// String describes a without secret values.
func (a *Auth) String() string {
	if a == nil {
		return "git.Auth(nil)"
	}
	var parts []string
	switch {
	case a.scheme == schemeSSH && a.agent != nil:
		parts = append(parts, "ssh user "+a.sshUser, "ssh agent")
	case a.scheme == schemeSSH:
		parts = append(parts, "ssh user "+a.sshUser, "identity "+ssh.FingerprintSHA256(a.signer.PublicKey()))
	case a.bearerToken != "":
		parts = append(parts, "bearer token")
	case a.username != "":
		parts = append(parts, "basic auth user "+a.username)
	default:
		parts = append(parts, "anonymous")
	}
	if len(a.caBundle) > 0 {
		parts = append(parts, "custom CA")
	}
	if len(a.clientCert) > 0 {
		parts = append(parts, "client certificate")
	}
	if a.Proxy != nil {
		parts = append(parts, "proxy "+a.Proxy.String())
	}
	return "git.Auth{" + strings.Join(parts, ", ") + "}"
}

// GoString keeps %#v from printing the fields.
func (a *Auth) GoString() string { return a.String() }

// httpAuth is the go-git auth method for the Secret's HTTP credentials (or
// those moved out of the URL), nil for anonymous access. Callers only use
// it for the repository's own host.
func (a *Auth) httpAuth() transport.AuthMethod {
	switch {
	case a.bearerToken != "":
		return &githttp.TokenAuth{Token: a.bearerToken}
	case a.username != "":
		return &githttp.BasicAuth{Username: a.username, Password: a.password}
	}
	return nil
}

// sshAuthMethod is the go-git auth method for the Secret's SSH identity
// (or the agent of NewAgentAuth). It is always set for SSH, so go-git never
// falls back to an agent or to files under ~/.ssh on its own.
func (a *Auth) sshAuthMethod() *sshAuth {
	return &sshAuth{user: a.sshUser, signer: a.signer, agent: a.agent, knownHosts: a.knownHosts, addr: sshAddr(a.url),
		hostKeyAlgos: a.HostKeyAlgorithms}
}

// sshAddr is the host:port go-git dials for an ssh URL.
func sshAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "22"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// sshAuth is a go-git ssh.AuthMethod whose client configuration is fully
// ours: one key (or the keys of an explicitly named agent), host keys from
// the Secret only.
type sshAuth struct {
	user       string
	signer     ssh.Signer
	agent      *sshAgent // when set, signer is nil
	knownHosts *knownHosts
	addr       string
	// hostKeyAlgos override the algorithms known_hosts suggests.
	hostKeyAlgos []string
}

func (a *sshAuth) Name() string   { return "ssh-public-keys" }
func (a *sshAuth) String() string { return "user: " + a.user + ", name: " + a.Name() }

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	method := ssh.PublicKeys(a.signer)
	if a.agent != nil {
		method = ssh.PublicKeysCallback(a.agent.signers)
	}
	algos := a.hostKeyAlgos
	if len(algos) == 0 {
		algos = a.knownHosts.algorithms(a.addr)
	}
	return &ssh.ClientConfig{
		User:              a.user,
		Auth:              []ssh.AuthMethod{method},
		HostKeyCallback:   a.knownHosts.callback,
		HostKeyAlgorithms: algos,
	}, nil
}

// Proxy is an HTTP(S) or SOCKS5 proxy from a proxySecretRef Secret. Its
// String never prints the password.
type Proxy struct {
	url *url.URL // with user info
}

// NewProxy reads a proxy Secret: address (required; http, https, socks5
// or socks5h URL), username and password (optional, basic auth).
func NewProxy(data map[string][]byte) (*Proxy, error) {
	addr := strings.TrimSpace(string(data[ProxyAddress]))
	if addr == "" {
		return nil, invalidf("proxy secret needs key %q", ProxyAddress)
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return nil, invalidf("proxy secret key %q is not a URL such as http://proxy:3128", ProxyAddress)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, invalidf("proxy scheme %q is not http, https, socks5 or socks5h", u.Scheme)
	}
	if u.User != nil {
		return nil, invalidf("proxy secret key %q must not carry credentials; use %q and %q", ProxyAddress, ProxyUsername, ProxyPassword)
	}
	user, pass := string(data[ProxyUsername]), string(data[ProxyPassword])
	switch {
	case pass != "" && user == "":
		return nil, invalidf("proxy secret key %q requires %q", ProxyPassword, ProxyUsername)
	case user != "":
		u.User = url.UserPassword(user, pass)
	}
	return &Proxy{url: u}, nil
}

// String is the proxy URL with the password redacted.
func (p *Proxy) String() string {
	if p == nil {
		return "<none>"
	}
	return p.url.Redacted()
}

// GoString keeps %#v from printing the password.
func (p *Proxy) GoString() string { return p.String() }

func (p *Proxy) isSOCKS() bool {
	s := strings.ToLower(p.url.Scheme)
	return s == "socks5" || s == "socks5h"
}

// options returns go-git's proxy settings for an HTTP(S) remote.
func (p *Proxy) options() transport.ProxyOptions {
	if p == nil {
		return transport.ProxyOptions{}
	}
	u := *p.url
	u.User = nil
	o := transport.ProxyOptions{URL: u.String()}
	if p.url.User != nil {
		o.Username = p.url.User.Username()
		o.Password, _ = p.url.User.Password()
	}
	return o
}

// sameRepo reports whether a repository URL is the one a was built for,
// ignoring case in the scheme and host.
func (a *Auth) sameRepo(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, string(a.scheme)) && strings.EqualFold(u.Host, a.url.Host) &&
		strings.TrimSuffix(u.Path, "/") == strings.TrimSuffix(a.url.Path, "/")
}

// endpoint is the URL go-git is given, without credentials.
func (a *Auth) endpoint() string { return a.url.String() }

// describe is the URL as errors show it: password redacted.
func (a *Auth) describe() string { return a.url.Redacted() }
