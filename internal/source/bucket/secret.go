package bucket

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Keys of the Secrets a generic Bucket refers to, as Flux names them.
const (
	// SecretAccessKey and SecretSecretKey hold static S3 credentials
	// (spec.secretRef).
	SecretAccessKey = "accesskey"
	SecretSecretKey = "secretkey"
	// SecretCA, SecretTLSCert and SecretTLSKey hold a CA bundle and a
	// client certificate (spec.certSecretRef).
	SecretCA      = "ca.crt"
	SecretTLSCert = "tls.crt"
	SecretTLSKey  = "tls.key"
	// ProxyAddress, ProxyUsername and ProxyPassword describe a proxy
	// (spec.proxySecretRef).
	ProxyAddress  = "address"
	ProxyUsername = "username"
	ProxyPassword = "password"
)

// Credentials are an S3 key pair, with the session token of temporary
// (STS-issued) credentials. String never prints the secret key or token.
type Credentials struct {
	AccessKey, SecretKey string
	// SessionToken goes with keys an STS issued (X-Amz-Security-Token).
	SessionToken string
}

// String names the access key only.
func (c Credentials) String() string { return "access key " + c.AccessKey }

// GoString keeps %#v from printing the secret key.
func (c Credentials) GoString() string { return c.String() }

// CredentialsFromSecret reads spec.secretRef's data. Both keys must be
// present (Flux's check, with its message); when either value is empty the
// result is nil and requests go out anonymous, as Flux's client does.
func CredentialsFromSecret(secretName string, data map[string][]byte) (*Credentials, error) {
	access, okA := data[SecretAccessKey]
	secret, okS := data[SecretSecretKey]
	if !okA || !okS {
		return nil, fmt.Errorf("invalid '%s' secret data: required fields '%s' and '%s'", secretName, SecretAccessKey, SecretSecretKey)
	}
	if len(access) == 0 || len(secret) == 0 {
		return nil, nil
	}
	return &Credentials{AccessKey: string(access), SecretKey: string(secret)}, nil
}

// TLSFromSecret reads spec.certSecretRef's data: a PEM CA bundle (ca.crt),
// trusted in addition to the system roots, and/or a client certificate
// pair (tls.crt with tls.key). A Secret with none of them is an error, as
// in Flux.
func TLSFromSecret(data map[string][]byte) (*tls.Config, error) {
	ca, cert, key := data[SecretCA], data[SecretTLSCert], data[SecretTLSKey]
	if len(ca) == 0 && len(cert) == 0 && len(key) == 0 {
		return nil, errors.New("certificate secret does not contain any TLS configuration")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(ca) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("failed to create TLS config: '%s' holds no PEM certificate", SecretCA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case len(cert) > 0 && len(key) > 0:
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("failed to create TLS config: invalid '%s'/'%s' pair: %w", SecretTLSCert, SecretTLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case len(cert) > 0 || len(key) > 0:
		return nil, fmt.Errorf("failed to create TLS config: '%s' and '%s' must be given together", SecretTLSCert, SecretTLSKey)
	}
	return cfg, nil
}

// ProxyFromSecret reads spec.proxySecretRef's data into a proxy URL with
// the credentials, if any, as its user info. ref names the Secret in
// messages ("<namespace>/<name>").
func ProxyFromSecret(ref string, data map[string][]byte) (*url.URL, error) {
	addr, ok := data[ProxyAddress]
	if !ok {
		return nil, fmt.Errorf("invalid proxy secret '%s': key '%s' is missing", ref, ProxyAddress)
	}
	u, err := url.Parse(strings.TrimSpace(string(addr)))
	if err != nil {
		return nil, fmt.Errorf("failed to parse proxy address of secret '%s': %w", ref, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid proxy secret '%s': address must be a URL such as http://proxy:3128", ref)
	}
	user, hasUser := data[ProxyUsername]
	pass, hasPass := data[ProxyPassword]
	if hasUser || hasPass {
		u.User = url.UserPassword(string(user), string(pass))
	}
	return u, nil
}
