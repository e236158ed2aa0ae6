package eventserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxErrorBody bounds how much of a refusing provider's answer goes into
// the error.
const maxErrorBody = 256

// newHTTPClient returns a client for one delivery with the target's
// timeout, CA certificate and proxy. Without a proxy, the environment's
// (HTTPS_PROXY…) applies, as for any Go program.
func newHTTPClient(t *target) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	proxy, err := t.proxyURL()
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	if len(t.caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.caPEM) {
			return nil, fmt.Errorf("%q holds no PEM certificate", secretKeyCACert)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: t.timeout}, nil
}

// proxyURL is the target's proxy (spec.proxy, the Secret's proxy key or
// proxySecretRef), nil without one. The delivery and, for the workload
// identity types, the token exchanges go through it.
func (t *target) proxyURL() (*url.URL, error) {
	if t.proxy == "" {
		return nil, nil
	}
	u, err := url.Parse(t.proxy)
	if err != nil || u.Host == "" {
		// The parse error quotes the URL, and with it the password.
		return nil, errors.New("proxy is not a valid URL")
	}
	return u, nil
}

// send performs req and fails on any answer outside 2xx.
func send(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			// url.Error quotes the full address; keep only its host.
			return fmt.Errorf("posting to %s: %w", redactAddress(req.URL.String()), uerr.Err)
		}
		return fmt.Errorf("posting to %s: %w", redactAddress(req.URL.String()), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fmt.Errorf("posting to %s: %s: %s", redactAddress(req.URL.String()), resp.Status, strings.TrimSpace(string(b)))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return nil
}
