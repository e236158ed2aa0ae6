package git

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// Secret values that must never show up in an error or a String.
const (
	secretPassword = "pa55-SECRET-word"
	secretToken    = "tok-SECRET-en"
)

func TestNewAuth(t *testing.T) {
	key := gitserver.GenerateClientKey(t)
	encKey := encryptedKey(t, secretPassword)
	knownHosts := []byte("example.com " + strings.TrimSpace(string(key.AuthorizedKey)) + "\n")
	cert, certKey := selfSignedPEM(t)

	tests := []struct {
		name    string
		url     string
		data    map[string][]byte
		wantErr string // empty: success
		want    string // substring of String()
	}{
		{name: "anonymous https", url: "https://example.com/org/app.git", want: "anonymous"},
		{name: "basic", url: "https://example.com/app.git", data: map[string][]byte{"username": []byte("git"), "password": []byte(secretPassword)}, want: "basic auth user git"},
		{name: "user without password", url: "http://example.com/app.git", data: map[string][]byte{"username": []byte("git")}, want: "basic auth user git"},
		{name: "bearer", url: "https://example.com/app.git", data: map[string][]byte{"bearerToken": []byte(secretToken)}, want: "bearer token"},
		{name: "password without username", url: "https://example.com/app.git", data: map[string][]byte{"password": []byte(secretPassword)}, wantErr: `"password" requires "username"`},
		{name: "bearer and username", url: "https://example.com/app.git", data: map[string][]byte{"bearerToken": []byte(secretToken), "username": []byte("git")}, wantErr: "mutually exclusive"},
		{name: "ca.crt", url: "https://example.com/app.git", data: map[string][]byte{"ca.crt": cert}, want: "custom CA"},
		{name: "legacy caFile", url: "https://example.com/app.git", data: map[string][]byte{"caFile": cert}, want: "custom CA"},
		{name: "ca not pem", url: "https://example.com/app.git", data: map[string][]byte{"ca.crt": []byte(secretToken)}, wantErr: "holds no PEM certificate"},
		{name: "client cert", url: "https://example.com/app.git", data: map[string][]byte{"tls.crt": cert, "tls.key": certKey}, want: "client certificate"},
		{name: "cert without key", url: "https://example.com/app.git", data: map[string][]byte{"tls.crt": cert}, wantErr: `"tls.crt" requires "tls.key"`},
		{name: "key without cert", url: "https://example.com/app.git", data: map[string][]byte{"tls.key": certKey}, wantErr: `"tls.key" requires "tls.crt"`},
		{name: "cert and key mismatch", url: "https://example.com/app.git", data: map[string][]byte{"tls.crt": cert, "tls.key": otherKeyPEM(t)}, wantErr: "not a matching"},
		{name: "tls material ignored on http", url: "http://example.com/app.git", data: map[string][]byte{"ca.crt": []byte("junk")}, want: "anonymous"},
		{name: "ssh", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": knownHosts}, want: "ssh user git"},
		{name: "ssh default user", url: "ssh://example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": knownHosts}, want: "ssh user git"},
		{name: "ssh url user", url: "ssh://deploy@example.com:2222/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": knownHosts}, want: "ssh user deploy"},
		{name: "ssh password ignored for plain key", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": knownHosts, "password": []byte(secretPassword)}, want: "ssh user git"},
		{name: "ssh encrypted key", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": encKey, "known_hosts": knownHosts, "password": []byte(secretPassword)}, want: "identity SHA256:"},
		{name: "ssh encrypted key without password", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": encKey, "known_hosts": knownHosts}, wantErr: "is encrypted"},
		{name: "ssh encrypted key wrong password", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": encKey, "known_hosts": knownHosts, "password": []byte("wrong-" + secretToken)}, wantErr: "decrypt secret key"},
		{name: "ssh without secret", url: "ssh://git@example.com/app.git", wantErr: `need secret key "identity"`},
		{name: "ssh without known_hosts", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM}, wantErr: `"known_hosts"`},
		{name: "ssh identity garbage", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": []byte(secretToken), "known_hosts": knownHosts}, wantErr: "not an SSH private key"},
		{name: "ssh known_hosts garbage", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": []byte("example.com ssh-ed25519 !!!")}, wantErr: "known_hosts"},
		{name: "ssh known_hosts only revoked", url: "ssh://git@example.com/app.git", data: map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": append([]byte("@revoked "), knownHosts...)}, wantErr: "no host key line"},
		{name: "unsupported scheme", url: "git://example.com/app.git", wantErr: "not http, https or ssh"},
		{name: "file scheme", url: "file:///etc", wantErr: "not http, https or ssh"},
		{name: "scp-like", url: "git@example.com:org/app.git", wantErr: "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAuth(tt.url, tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewAuth error = %v, want it to contain %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("NewAuth error %v is not ErrInvalidConfig", err)
				}
				assertNoSecret(t, err.Error())
				return
			}
			if err != nil {
				t.Fatalf("NewAuth: %v", err)
			}
			for _, s := range []string{a.String(), fmt.Sprintf("%v", a), fmt.Sprintf("%+v", a), fmt.Sprintf("%#v", a)} {
				assertNoSecret(t, s)
				if !strings.Contains(s, tt.want) {
					t.Errorf("String() = %q, want it to contain %q", s, tt.want)
				}
			}
		})
	}
}

func TestNewProxy(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string][]byte
		want    string
		wantErr string
	}{
		{name: "address only", data: map[string][]byte{"address": []byte("http://127.0.0.1:3128")}, want: "http://127.0.0.1:3128"},
		{name: "with credentials", data: map[string][]byte{"address": []byte("http://proxy:3128"), "username": []byte("u"), "password": []byte(secretPassword)}, want: "http://u:xxxxx@proxy:3128"},
		{name: "socks5", data: map[string][]byte{"address": []byte("socks5://proxy:1080")}, want: "socks5://proxy:1080"},
		{name: "missing address", data: map[string][]byte{"username": []byte("u")}, wantErr: `needs key "address"`},
		{name: "password without username", data: map[string][]byte{"address": []byte("http://proxy:3128"), "password": []byte(secretPassword)}, wantErr: `"password" requires "username"`},
		{name: "bad scheme", data: map[string][]byte{"address": []byte("ftp://proxy")}, wantErr: "not http, https, socks5"},
		{name: "no scheme", data: map[string][]byte{"address": []byte("proxy:3128")}, wantErr: "not a URL"},
		{name: "credentials in address", data: map[string][]byte{"address": []byte("http://u:" + secretPassword + "@proxy:3128")}, wantErr: "must not carry credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProxy(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewProxy error = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
				}
				assertNoSecret(t, err.Error())
				return
			}
			if err != nil {
				t.Fatalf("NewProxy: %v", err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			assertNoSecret(t, fmt.Sprintf("%v %#v", p, p))
			opts := p.options()
			if tt.data["password"] != nil && opts.Password != secretPassword {
				t.Errorf("options().Password not carried")
			}
		})
	}
}

func assertNoSecret(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{secretPassword, secretToken, "SECRET", "PRIVATE KEY"} {
		if strings.Contains(s, secret) {
			t.Errorf("%q contains secret material %q", s, secret)
		}
	}
}

func encryptedKey(t *testing.T, passphrase string) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(k, "test", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block)
}

func selfSignedPEM(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "weir-test-client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func otherKeyPEM(t *testing.T) []byte {
	t.Helper()
	_, k := selfSignedPEM(t)
	return k
}
