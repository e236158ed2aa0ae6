package oci

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func dockerConfig(entries map[string]string) map[string][]byte {
	var parts []string
	for host, userPass := range entries {
		user, pass, _ := strings.Cut(userPass, ":")
		parts = append(parts, fmt.Sprintf("%q: {\"username\": %q, \"password\": %q}", host, user, pass))
	}
	return map[string][]byte{DockerConfigJSONKey: []byte(`{"auths": {` + strings.Join(parts, ",") + `}}`)}
}

func resolveUser(t *testing.T, k *Keychain, repo string) string {
	t.Helper()
	r, err := name.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	a, err := k.Resolve(r)
	if err != nil {
		t.Fatal(err)
	}
	if a == authn.Anonymous {
		return "anonymous"
	}
	cfg, err := a.Authorization()
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Username
}

func TestKeychainMatching(t *testing.T) {
	secretRef := dockerConfig(map[string]string{
		"ghcr.io":                     "ref-ghcr:p1",
		"https://registry.local:5000": "ref-local:p2",
		"ghcr.io/team":                "ref-team:p3",
	})
	pullSecret := dockerConfig(map[string]string{
		"ghcr.io":                     "sa-ghcr:p4",
		"*.azurecr.io":                "sa-acr:p5",
		"https://index.docker.io/v1/": "sa-hub:p6",
		"quay.io":                     "sa-quay:p7",
	})
	k, err := NewKeychain(secretRef, pullSecret)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ repo, want string }{
		{"ghcr.io/org/app", "ref-ghcr"},              // secretRef before the ServiceAccount's
		{"ghcr.io/team/app", "ref-team"},             // a path prefix is more specific
		{"ghcr.io/teams/app", "ref-ghcr"},            // prefixes end at a slash
		{"registry.local:5000/app", "ref-local"},     // scheme dropped, port kept
		{"registry.local/app", "anonymous"},          // different port
		{"myreg.azurecr.io/app", "sa-acr"},           // wildcard label
		{"a.b.azurecr.io/app", "anonymous"},          // a wildcard is one label
		{"docker.io/stefanprodan/podinfo", "sa-hub"}, // Docker Hub's legacy key
		{"quay.io/org/app", "sa-quay"},
		{"example.com/app", "anonymous"},
	}
	for _, tt := range tests {
		if got := resolveUser(t, k, tt.repo); got != tt.want {
			t.Errorf("Resolve(%s) = %s, want %s", tt.repo, got, tt.want)
		}
	}
}

func TestKeychainEntryForms(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("user:pa:ss"))
	tests := []struct {
		name    string
		data    map[string][]byte
		want    authn.AuthConfig
		wantErr string
	}{
		{
			name: "auth field",
			data: map[string][]byte{DockerConfigJSONKey: []byte(`{"auths":{"ghcr.io":{"auth":"` + auth + `"}}}`)},
			want: authn.AuthConfig{Username: "user", Password: "pa:ss"},
		},
		{
			name: "identity token",
			data: map[string][]byte{DockerConfigJSONKey: []byte(`{"auths":{"ghcr.io":{"identitytoken":"tok"}}}`)},
			want: authn.AuthConfig{IdentityToken: "tok"},
		},
		{
			name: "legacy dockercfg",
			data: map[string][]byte{DockerConfigKey: []byte(`{"ghcr.io":{"username":"u","password":"p"}}`)},
			want: authn.AuthConfig{Username: "u", Password: "p"},
		},
		{name: "no config key", data: map[string][]byte{"username": []byte("u")}, wantErr: `secret has neither ".dockerconfigjson" nor ".dockercfg"`},
		{name: "not JSON", data: map[string][]byte{DockerConfigJSONKey: []byte("s3cret-not-json")}, wantErr: "is not a docker config JSON document"},
		{name: "auth not base64", data: map[string][]byte{DockerConfigJSONKey: []byte(`{"auths":{"ghcr.io":{"auth":"s3cret!!"}}}`)}, wantErr: `field "auth" is not base64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := NewKeychain(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewKeychain error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error leaks secret data: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, _ := name.NewRepository("ghcr.io/org/app")
			a, err := k.Resolve(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("Authorization() = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestKeychainStringHidesSecrets(t *testing.T) {
	k, err := NewKeychain(dockerConfig(map[string]string{"ghcr.io": "bot:hunter2"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{k.String(), fmt.Sprintf("%v", k), fmt.Sprintf("%#v", k), fmt.Sprintf("%+v", k)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("keychain prints its password: %s", s)
		}
	}
	if !strings.Contains(k.String(), "ghcr.io (user bot)") {
		t.Errorf("String() = %s", k.String())
	}
}

func TestNewProxyURL(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    string
		wantErr string
	}{
		{name: "address", data: map[string]string{"address": "http://proxy:3128"}, want: "http://proxy:3128"},
		{name: "with credentials", data: map[string]string{"address": "http://proxy:3128", "username": "u", "password": "p4ss"}, want: "http://u:p4ss@proxy:3128"},
		{name: "socks5", data: map[string]string{"address": "socks5://proxy:1080"}, want: "socks5://proxy:1080"},
		{name: "missing address", data: map[string]string{"username": "u"}, wantErr: `proxy secret needs key "address"`},
		{name: "bad scheme", data: map[string]string{"address": "ftp://proxy"}, wantErr: "is not http, https, socks5 or socks5h"},
		{name: "password without user", data: map[string]string{"address": "http://proxy", "password": "p4ss"}, wantErr: `requires "username"`},
		{name: "credentials in address", data: map[string]string{"address": "http://u:p4ss@proxy"}, wantErr: "must not carry credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string][]byte{}
			for k, v := range tt.data {
				data[k] = []byte(v)
			}
			u, err := NewProxyURL(data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "p4ss") {
					t.Fatalf("NewProxyURL error = %v, want %q without the password", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Fatalf("NewProxyURL = %v, %v; want %s", u, err, tt.want)
			}
		})
	}
}

func TestNewTLSConfig(t *testing.T) {
	if cfg, err := NewTLSConfig(map[string][]byte{}); cfg != nil || err != nil {
		t.Errorf("empty secret: %v, %v", cfg, err)
	}
	for _, tt := range []struct {
		data    map[string][]byte
		wantErr string
	}{
		{map[string][]byte{TLSCertKey: []byte("x")}, `"tls.crt" requires "tls.key"`},
		{map[string][]byte{TLSKeyKey: []byte("x")}, `"tls.key" requires "tls.crt"`},
		{map[string][]byte{CAKey: []byte("not pem")}, "holds no PEM certificate"},
		{map[string][]byte{TLSCertKey: []byte("x"), TLSKeyKey: []byte("private-s3cret")}, "are not a matching PEM certificate and key"},
	} {
		_, err := NewTLSConfig(tt.data)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewTLSConfig error = %v, want %q", err, tt.wantErr)
		}
	}
}
