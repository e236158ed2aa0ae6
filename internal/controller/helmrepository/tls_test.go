package helmrepository

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"testing"

	"github.com/weir-gitops/weir/internal/testenv/helmrepo"
)

// srvTLS trusts the test server's self-signed certificate.
func srvTLS(t *testing.T, srv *helmrepo.Server) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.CAPEM()) {
		t.Fatal("no CA")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func digestWith(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}
