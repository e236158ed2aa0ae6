package gitprovider

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Address is where a host's API is: Hostname as --hostname gives it
// ("github.com", "git.example.com:8443", or with a scheme), and CA, a PEM
// bundle trusted next to the system's (--ca-file).
type Address struct {
	Hostname string
	CA       []byte
}

// origin is "https://host[:port]" (or the scheme --hostname gave).
func (a Address) origin() string {
	h := strings.TrimSuffix(a.Hostname, "/")
	if strings.Contains(h, "://") {
		return h
	}
	return "https://" + h
}

// httpClient trusts CA next to the system's roots.
func (a Address) httpClient() (*http.Client, error) {
	if len(a.CA) == 0 {
		return &http.Client{}, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(a.CA) {
		return nil, fmt.Errorf("--ca-file holds no PEM certificate")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}

// SSHURL turns a host's SSH clone address into the ssh:// form weir's
// GitRepository takes: "git@host:owner/repo.git" becomes
// "ssh://git@host/owner/repo.git". A non-empty hostname replaces the
// host (--ssh-hostname, for a host whose SSH name differs).
func SSHURL(addr, hostname string) (string, error) {
	if !strings.Contains(addr, "://") {
		at, colon := strings.Index(addr, "@"), strings.Index(addr, ":")
		if colon <= 0 || (at >= 0 && at > colon) {
			return "", fmt.Errorf("SSH clone address %q is not a repository address", addr)
		}
		addr = "ssh://" + addr[:colon] + "/" + strings.TrimPrefix(addr[colon+1:], "/")
	}
	u, err := url.Parse(addr)
	if err != nil || u.Scheme != "ssh" || u.Host == "" {
		return "", fmt.Errorf("SSH clone address %q is not an ssh:// URL", addr)
	}
	if hostname != "" {
		u.Host = hostname
	}
	return u.String(), nil
}
