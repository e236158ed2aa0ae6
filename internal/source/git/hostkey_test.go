package git

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func TestScanHostKey(t *testing.T) {
	srv, key := writeFixture(t)
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a": "b"}})
	u := srv.SSHURL("app.git")

	got, err := ScanHostKey(testContext(t), u)
	if err != nil {
		t.Fatalf("ScanHostKey: %v", err)
	}
	if !bytes.Equal(got, srv.KnownHosts()) {
		t.Errorf("ScanHostKey = %q, want %q", got, srv.KnownHosts())
	}
	_, hosts, scanned, _, _, err := ssh.ParseKnownHosts(got)
	if err != nil || len(hosts) != 1 || !keysEqual(scanned, srv.HostKey()) {
		t.Fatalf("scanned line: hosts %v, key equal %v, error %v", hosts, err == nil && keysEqual(scanned, srv.HostKey()), err)
	}

	// What was scanned is what NewAuth needs to reach the server.
	auth := mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": got})
	if _, err := NewClient().Remote(testContext(t), u, auth).Resolve(Reference{Branch: "main"}); err != nil {
		t.Errorf("Resolve with the scanned host key: %v", err)
	}
}

func TestScanHostKeyErrors(t *testing.T) {
	srv, _ := writeFixture(t)
	hanging := hangingListener(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name    string
		ctx     context.Context
		url     string
		timeout time.Duration
		want    []error
	}{
		{name: "cancelled context", ctx: cancelled, url: srv.SSHURL("app.git"), want: []error{ErrUnreachable, context.Canceled}},
		{name: "server never answers", url: "ssh://git@" + hanging + "/app.git", timeout: 300 * time.Millisecond, want: []error{ErrUnreachable, context.DeadlineExceeded}},
		{name: "https URL", url: srv.HTTPURL("app.git"), want: []error{ErrInvalidConfig}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = testContext(t)
			}
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			got, err := ScanHostKey(ctx, tt.url)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("ScanHostKey = %q, %v; want %v in the chain", got, err, want)
				}
			}
			if elapsed := time.Since(start); elapsed > tt.timeout+3*time.Second {
				t.Errorf("ScanHostKey took %s", elapsed)
			}
		})
	}
}

func TestKnownHostsCover(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{})
	tests := []struct {
		name       string
		knownHosts []byte
		url        string
		want       bool
	}{
		{"the server's own line", srv.KnownHosts(), srv.SSHURL("app.git"), true},
		{"another port", srv.KnownHosts(), "ssh://git@127.0.0.1:1/app.git", false},
		{"another host", srv.KnownHosts(), "ssh://git@example.invalid/app.git", false},
		{"nothing recorded", nil, srv.SSHURL("app.git"), false},
		{"garbage", []byte("not known_hosts\n"), srv.SSHURL("app.git"), false},
		{"an https URL", srv.KnownHosts(), "https://127.0.0.1/app.git", false},
	}
	for _, tt := range tests {
		if got := KnownHostsCover(tt.knownHosts, tt.url); got != tt.want {
			t.Errorf("%s: KnownHostsCover = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestScanHostKeyAlgorithms: the algorithms given are the only ones
// offered; the server's key is found with its own, and none of the
// others finds it (ErrHostKey). An Auth restricted to an algorithm the
// server lacks cannot reach it, with the server's own it can.
func TestScanHostKeyAlgorithms(t *testing.T) {
	srv, key := writeFixture(t)
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a": "b"}})
	u := srv.SSHURL("app.git")

	got, err := ScanHostKeyAlgorithms(testContext(t), u, []string{ssh.KeyAlgoED25519})
	if err != nil || !bytes.Equal(got, srv.KnownHosts()) {
		t.Fatalf("ScanHostKeyAlgorithms(ed25519) = %q, %v; want %q", got, err, srv.KnownHosts())
	}
	_, err = ScanHostKeyAlgorithms(testContext(t), u, []string{ssh.KeyAlgoRSASHA512})
	if !errors.Is(err, ErrHostKey) {
		t.Errorf("ScanHostKeyAlgorithms(rsa-sha2-512) on an ed25519 server: %v, want ErrHostKey", err)
	}

	for _, tt := range []struct {
		algos []string
		ok    bool
	}{{[]string{ssh.KeyAlgoED25519}, true}, {[]string{ssh.KeyAlgoRSASHA512}, false}} {
		auth := mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": got})
		auth.HostKeyAlgorithms = tt.algos
		_, err := NewClient().Remote(testContext(t), u, auth).Resolve(Reference{Branch: "main"})
		if (err == nil) != tt.ok {
			t.Errorf("Resolve offering %v: %v, want success %v", tt.algos, err, tt.ok)
		}
	}
}
