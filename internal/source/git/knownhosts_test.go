package git

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // known_hosts hashing
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func hashedHost(host string) string {
	salt := []byte("0123456789abcdefghij")
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(host))
	return "|1|" + base64.StdEncoding.EncodeToString(salt) + "|" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func TestKnownHostsCallback(t *testing.T) {
	server := gitserver.GenerateClientKey(t).PublicKey
	other := gitserver.GenerateClientKey(t).PublicKey
	line := func(hosts string, k ssh.PublicKey) string {
		return hosts + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) + "\n"
	}

	tests := []struct {
		name        string
		knownHosts  string
		addr        string
		wantErr     bool
		wantUnknown bool
		wantRevoked bool
	}{
		{name: "plain host port 22", knownHosts: line("github.com", server), addr: "github.com:22"},
		{name: "host is case-insensitive", knownHosts: line("GitHub.com", server), addr: "github.com:22"},
		{name: "bracketed port", knownHosts: line("[127.0.0.1]:2222", server), addr: "127.0.0.1:2222"},
		{name: "plain entry does not cover other port", knownHosts: line("127.0.0.1", server), addr: "127.0.0.1:2222", wantErr: true, wantUnknown: true},
		{name: "several hosts on a line", knownHosts: line("a.example,b.example", server), addr: "b.example:22"},
		{name: "hashed", knownHosts: line(hashedHost("git.example"), server), addr: "git.example:22"},
		{name: "hashed with port", knownHosts: line(hashedHost("[git.example]:2222"), server), addr: "git.example:2222"},
		{name: "hashed other host", knownHosts: line(hashedHost("git.example"), server), addr: "evil.example:22", wantErr: true, wantUnknown: true},
		{name: "wildcard", knownHosts: line("*.example.com", server), addr: "git.example.com:22"},
		{name: "question mark", knownHosts: line("git?.example.com", server), addr: "git1.example.com:22"},
		{name: "negated", knownHosts: line("*.example.com,!evil.example.com", server), addr: "evil.example.com:22", wantErr: true, wantUnknown: true},
		{name: "unknown host", knownHosts: line("github.com", server), addr: "gitlab.com:22", wantErr: true, wantUnknown: true},
		{name: "mismatch", knownHosts: line("github.com", other), addr: "github.com:22", wantErr: true},
		{name: "one of several keys", knownHosts: line("github.com", other) + line("github.com", server), addr: "github.com:22"},
		{name: "revoked", knownHosts: line("github.com", server) + "@revoked " + line("*", server), addr: "github.com:22", wantErr: true, wantRevoked: true},
		{name: "cert-authority ignored", knownHosts: "@cert-authority " + line("*", server) + line("other", other), addr: "github.com:22", wantErr: true, wantUnknown: true},
		{name: "comments and blanks", knownHosts: "# comment\n\n" + line("github.com", server), addr: "github.com:22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kh, err := parseKnownHosts([]byte(tt.knownHosts))
			if err != nil {
				t.Fatalf("parseKnownHosts: %v", err)
			}
			err = kh.callback(tt.addr, nil, server)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("callback: %v", err)
				}
				return
			}
			var herr *HostKeyError
			if !errors.As(err, &herr) || !errors.Is(err, ErrHostKey) {
				t.Fatalf("callback error = %v, want a HostKeyError", err)
			}
			if herr.Unknown != tt.wantUnknown || herr.Revoked != tt.wantRevoked {
				t.Errorf("HostKeyError = %+v, want Unknown=%v Revoked=%v", herr, tt.wantUnknown, tt.wantRevoked)
			}
			if !strings.Contains(err.Error(), ssh.FingerprintSHA256(server)) {
				t.Errorf("error %q does not name the offered key", err)
			}
		})
	}
}

func TestKnownHostsAlgorithms(t *testing.T) {
	ed := gitserver.GenerateClientKey(t).PublicKey
	kh, err := parseKnownHosts([]byte("[h]:2222 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed))) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := kh.algorithms("h:2222"); len(got) != 1 || got[0] != ssh.KeyAlgoED25519 {
		t.Errorf("algorithms = %q, want [%s]", got, ssh.KeyAlgoED25519)
	}
	if got := kh.algorithms("other:22"); got != nil {
		t.Errorf("algorithms for unknown host = %q, want nil", got)
	}
}
