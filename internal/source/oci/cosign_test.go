package oci

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

func TestVerifyCosign(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	trusted, other := newSigner(t), newSigner(t)
	keys, err := NewCosignKeys(map[string][]byte{"cosign.pub": trusted.publicPEM(t), "README": []byte("not a key")})
	if err != nil {
		t.Fatal(err)
	}

	// Each case pushes its own artifact (distinct content, distinct digest)
	// and signs it, or not, its own way.
	tests := []struct {
		name    string
		sign    func(t *testing.T, repoRef, digest string) []sigLayer
		wantErr string // "" means verified by cosign.pub
	}{
		{
			name: "signed by the trusted key",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				p := payload(t, repoRef, digest)
				return []sigLayer{{payload: p, signature: trusted.sign(t, p)}}
			},
		},
		{
			name: "one good signature among bad ones",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				p := payload(t, repoRef, digest)
				return []sigLayer{
					{payload: p, signature: other.sign(t, p)},
					{payload: []byte("{}"), signature: trusted.sign(t, []byte("{}"))},
					{payload: p, signature: trusted.sign(t, p)},
				}
			},
		},
		{
			name: "signed by another key",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				p := payload(t, repoRef, digest)
				return []sigLayer{{payload: p, signature: other.sign(t, p)}}
			},
			wantErr: "not made by any trusted key",
		},
		{
			name: "signature of another digest",
			sign: func(t *testing.T, repoRef, _ string) []sigLayer {
				p := payload(t, repoRef, "sha256:"+strings.Repeat("0", 64))
				return []sigLayer{{payload: p, signature: trusted.sign(t, p)}}
			},
			wantErr: "payload names digest sha256:000",
		},
		{
			name: "payload altered after signing",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				p := payload(t, repoRef, digest)
				sig := trusted.sign(t, p)
				return []sigLayer{{payload: append(p, ' '), signature: sig}}
			},
			wantErr: "not made by any trusted key",
		},
		{
			name: "not a cosign signature payload",
			sign: func(t *testing.T, _, digest string) []sigLayer {
				p := []byte(`{"critical":{"image":{"docker-manifest-digest":"` + digest + `"},"type":"something else"}}`)
				return []sigLayer{{payload: p, signature: trusted.sign(t, p)}}
			},
			wantErr: `payload type "something else" is not "cosign container image signature"`,
		},
		{
			name: "wrong layer media type",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				p := payload(t, repoRef, digest)
				return []sigLayer{{payload: p, signature: trusted.sign(t, p), mediaType: "application/json"}}
			},
			wantErr: "media type application/json is not",
		},
		{
			name: "signature annotation missing",
			sign: func(t *testing.T, repoRef, digest string) []sigLayer {
				return []sigLayer{{payload: payload(t, repoRef, digest)}}
			},
			wantErr: "annotation dev.cosignproject.cosign/signature is missing",
		},
		{
			name:    "unsigned",
			sign:    func(*testing.T, string, string) []sigLayer { return nil },
			wantErr: "signature tag 'sha256-",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repoRef := reg.Host() + "/org/app"
			digest := reg.PushArtifact(t, "org/app", "v1", ociregistry.Artifact{Files: map[string]string{"n": string(rune('a' + i))}})
			if layers := tt.sign(t, repoRef, digest); layers != nil {
				pushSignatures(t, reg.Host(), "org/app", digest, layers...)
			}
			r := openRemote(t, "oci://"+repoRef, Options{})
			res, err := r.Resolve(Reference{Tag: "v1"})
			if err != nil {
				t.Fatal(err)
			}
			name, err := r.VerifyCosign(res, keys)
			if tt.wantErr == "" {
				if err != nil || name != "cosign.pub" {
					t.Fatalf("VerifyCosign = %q, %v; want cosign.pub", name, err)
				}
				return
			}
			if !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("VerifyCosign error = %v, want ErrVerification containing %q", err, tt.wantErr)
			}
			want := "no matching signatures were found for '" + repoRef + ":v1': "
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q does not start with %q", err, want)
			}
		})
	}
}

func TestNewCosignKeys(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	good := newSigner(t).publicPEM(t)
	tests := []struct {
		name    string
		data    map[string][]byte
		want    []string
		wantErr string
	}{
		{name: "pub entries only", data: map[string][]byte{"b.pub": good, "a.pub": good, "notes.txt": []byte("x")}, want: []string{"a.pub", "b.pub"}},
		{name: "no keys", data: map[string][]byte{"cosign.key": []byte("private")}, wantErr: "verification secret has no .pub public keys"},
		{name: "not PEM", data: map[string][]byte{"cosign.pub": []byte("garbage")}, wantErr: `"cosign.pub": not a PEM-encoded public key`},
		{name: "private key block", data: map[string][]byte{"cosign.pub": pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte("x")})}, wantErr: "is not a PUBLIC KEY"},
		{name: "RSA key", data: map[string][]byte{"rsa.pub": rsaPEM}, wantErr: "*rsa.PublicKey keys are not supported, only ECDSA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := NewCosignKeys(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewCosignKeys error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(keys.Names(), ","); got != strings.Join(tt.want, ",") {
				t.Errorf("Names() = %s, want %v", got, tt.want)
			}
		})
	}
}
