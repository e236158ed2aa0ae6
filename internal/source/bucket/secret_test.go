package bucket

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestCredentialsFromSecret(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string][]byte
		want    *Credentials
		wantErr string
	}{
		{"both keys", map[string][]byte{"accesskey": []byte("a"), "secretkey": []byte("s")}, &Credentials{AccessKey: "a", SecretKey: "s"}, ""},
		{"empty values are anonymous", map[string][]byte{"accesskey": nil, "secretkey": nil}, nil, ""},
		{"missing secretkey", map[string][]byte{"accesskey": []byte("a")}, nil,
			"invalid 'creds' secret data: required fields 'accesskey' and 'secretkey'"},
		{"wrong key names", map[string][]byte{"accessKey": []byte("a"), "secretKey": []byte("s")}, nil,
			"invalid 'creds' secret data: required fields 'accesskey' and 'secretkey'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CredentialsFromSecret("creds", tt.data)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	c := Credentials{AccessKey: "a", SecretKey: "very-secret"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(s, "very-secret") {
			t.Errorf("secret key printed: %s", s)
		}
	}
}

func TestTLSFromSecret(t *testing.T) {
	certPEM, keyPEM := selfSigned(t)
	tests := []struct {
		name       string
		data       map[string][]byte
		wantErr    string
		roots      bool
		clientCert bool
	}{
		{"ca only", map[string][]byte{"ca.crt": certPEM}, "", true, false},
		{"client pair only", map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}, "", false, true},
		{"all three", map[string][]byte{"ca.crt": certPEM, "tls.crt": certPEM, "tls.key": keyPEM}, "", true, true},
		{"nothing", map[string][]byte{"other": []byte("x")}, "does not contain any TLS configuration", false, false},
		{"cert without key", map[string][]byte{"tls.crt": certPEM}, "must be given together", false, false},
		{"ca not pem", map[string][]byte{"ca.crt": []byte("junk")}, "holds no PEM certificate", false, false},
		{"mismatched pair", map[string][]byte{"tls.crt": certPEM, "tls.key": []byte("junk")}, "invalid 'tls.crt'/'tls.key' pair", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := TLSFromSecret(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg.RootCAs != nil) != tt.roots || (len(cfg.Certificates) == 1) != tt.clientCert {
				t.Errorf("roots %v, %d client certificates", cfg.RootCAs != nil, len(cfg.Certificates))
			}
		})
	}
}

func TestProxyFromSecret(t *testing.T) {
	tests := []struct {
		name, want, wantErr string
		data                map[string][]byte
	}{
		{name: "address", data: map[string][]byte{"address": []byte("http://proxy:3128")}, want: "http://proxy:3128"},
		{name: "with credentials", data: map[string][]byte{"address": []byte("http://proxy:3128"), "username": []byte("u"), "password": []byte("p")}, want: "http://u:p@proxy:3128"},
		{name: "missing address", data: map[string][]byte{"username": []byte("u")}, wantErr: "invalid proxy secret 'ns/proxy': key 'address' is missing"},
		{name: "not a URL", data: map[string][]byte{"address": []byte("proxy:3128")}, wantErr: "address must be a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ProxyFromSecret("ns/proxy", tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Errorf("got %v, %v; want %s", u, err, tt.want)
			}
		})
	}
}

func TestEndpointHost(t *testing.T) {
	tests := []struct {
		endpoint string
		insecure bool
		host     string
		secure   bool
		ok       bool
	}{
		{"minio.example.com", false, "minio.example.com", true, true},
		{"127.0.0.1:9000", true, "127.0.0.1:9000", false, true},
		{"https://s3.example.com", false, "s3.example.com", true, true},
		{"https://s3.example.com/", true, "s3.example.com", true, true},
		{"http://127.0.0.1:9000", true, "127.0.0.1:9000", false, true},
		{"http://127.0.0.1:9000", false, "", false, false},
		{"https://s3.example.com/bucket", false, "", false, false},
		{"ftp://s3.example.com", false, "", false, false},
		{"", false, "", false, false},
	}
	for _, tt := range tests {
		host, secure, err := endpointHost(tt.endpoint, tt.insecure)
		if (err == nil) != tt.ok || host != tt.host || secure != tt.secure {
			t.Errorf("endpointHost(%q, %v) = %q, %v, %v", tt.endpoint, tt.insecure, host, secure, err)
		}
	}
}

// selfSigned returns a throwaway certificate and key in PEM.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weir-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}
