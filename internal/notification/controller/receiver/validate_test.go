package receiver

import (
	"context"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // test vectors for HMAC-SHA1 senders
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"testing"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

func mac(h func() hash.Hash, key string, body []byte) string {
	m := hmac.New(h, []byte(key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// run validates a request for a Receiver of type typ with the given token
// and spec.events.
func run(typ string, h http.Header, body []byte, token string, events []string) (verdict, error) {
	return validate(context.Background(), check{
		req: request{header: h, body: body}, token: token,
		spec: &notificationv1.ReceiverSpec{Type: typ, Events: events}, tokens: newTokenVerifier(),
	})
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestValidate(t *testing.T) {
	const token = "t0ken"
	body := []byte(`{"a":1}`)
	tests := []struct {
		name   string
		typ    string
		header http.Header
		body   []byte
		events []string
		want   error // nil, or the sentinel errors.Is must match
		ping   bool
	}{
		{"generic accepts anything", notificationv1.GenericReceiver, nil, nil, nil, nil, false},
		{"hmac sha1", notificationv1.GenericHMACReceiver, headers("X-Signature", "sha1="+mac(sha1.New, token, body)), body, nil, nil, false},
		{"hmac sha256", notificationv1.GenericHMACReceiver, headers("X-Signature", "sha256="+mac(sha256.New, token, body)), body, nil, nil, false},
		{"hmac sha512", notificationv1.GenericHMACReceiver, headers("X-Signature", "sha512="+mac(sha512.New, token, body)), body, nil, nil, false},
		{"hmac wrong key", notificationv1.GenericHMACReceiver, headers("X-Signature", "sha256="+mac(sha256.New, "other", body)), body, nil, errUnauthenticated, false},
		{"hmac unknown hash", notificationv1.GenericHMACReceiver, headers("X-Signature", "md5=00"), body, nil, errUnauthenticated, false},
		{"hmac no prefix", notificationv1.GenericHMACReceiver, headers("X-Signature", mac(sha256.New, token, body)), body, nil, errUnauthenticated, false},
		{"hmac missing", notificationv1.GenericHMACReceiver, nil, body, nil, errUnauthenticated, false},
		{"github sha256 push", notificationv1.GitHubReceiver, headers("X-Hub-Signature-256", "sha256="+mac(sha256.New, token, body), "X-GitHub-Event", "push"), body, []string{"push"}, nil, false},
		{"github sha1 header", notificationv1.GitHubReceiver, headers("X-Hub-Signature", "sha1="+mac(sha1.New, token, body), "X-GitHub-Event", "push"), body, nil, nil, false},
		{"github sha256 preferred over a bad sha1", notificationv1.GitHubReceiver, headers("X-Hub-Signature-256", "sha256="+mac(sha256.New, token, body), "X-Hub-Signature", "sha1=00"), body, nil, nil, false},
		{"github event filtered", notificationv1.GitHubReceiver, headers("X-Hub-Signature-256", "sha256="+mac(sha256.New, token, body), "X-GitHub-Event", "issues"), body, []string{"push"}, errEventNotAccepted, false},
		{"github ping", notificationv1.GitHubReceiver, headers("X-Hub-Signature-256", "sha256="+mac(sha256.New, token, body), "X-GitHub-Event", "ping"), body, []string{"push"}, nil, true},
		{"github unsigned ping", notificationv1.GitHubReceiver, headers("X-GitHub-Event", "ping"), body, nil, errUnauthenticated, false},
		{"gitlab", notificationv1.GitLabReceiver, headers("X-Gitlab-Token", token, "X-Gitlab-Event", "Push Hook"), nil, []string{"push hook"}, nil, false},
		{"gitlab wrong token", notificationv1.GitLabReceiver, headers("X-Gitlab-Token", "x"), nil, nil, errUnauthenticated, false},
		{"gitlab event filtered", notificationv1.GitLabReceiver, headers("X-Gitlab-Token", token, "X-Gitlab-Event", "Note Hook"), nil, []string{"Push Hook"}, errEventNotAccepted, false},
		{"bitbucket", notificationv1.BitbucketReceiver, headers("X-Hub-Signature", "sha256="+mac(sha256.New, token, body), "X-Event-Key", "repo:refs_changed"), body, []string{"repo:refs_changed"}, nil, false},
		{"bitbucket event filtered", notificationv1.BitbucketReceiver, headers("X-Hub-Signature", "sha256="+mac(sha256.New, token, body), "X-Event-Key", "pr:opened"), body, []string{"repo:refs_changed"}, errEventNotAccepted, false},
		{"harbor", notificationv1.HarborReceiver, headers("Authorization", token), nil, nil, nil, false},
		{"harbor wrong", notificationv1.HarborReceiver, headers("Authorization", "Basic x"), nil, nil, errUnauthenticated, false},
		{"nexus", notificationv1.NexusReceiver, headers("X-Nexus-Webhook-Signature", mac(sha1.New, token, body)), body, nil, nil, false},
		{"nexus wrong", notificationv1.NexusReceiver, headers("X-Nexus-Webhook-Signature", mac(sha1.New, "x", body)), body, nil, errUnauthenticated, false},
		{"dockerhub json", notificationv1.DockerHubReceiver, nil, body, nil, nil, false},
		{"quay not json", notificationv1.QuayReceiver, nil, []byte("nope"), nil, errBadPayload, false},
		{"acr json", notificationv1.ACRReceiver, nil, body, nil, nil, false},
		{"unknown type unsupported", "svn", nil, body, nil, errUnsupportedType, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			v, err := run(tt.typ, h, tt.body, token, tt.events)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("validate: %v", err)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("validate error = %v, want %v", err, tt.want)
			}
			if v.ping != tt.ping {
				t.Errorf("ping = %v, want %v", v.ping, tt.ping)
			}
		})
	}
}

func TestEqualSecretRefusesEmptyToken(t *testing.T) {
	if equalSecret("", "") {
		t.Error("an empty token matched an absent header")
	}
	if !equalSecret("abc", "abc") || equalSecret("abd", "abc") {
		t.Error("comparison wrong")
	}
}

func TestCompileFilter(t *testing.T) {
	tests := []struct {
		expr    string
		wantErr bool
		accept  bool
	}{
		{"res.metadata.name == 'app'", false, true},
		{"has(req.image) && req.image.startsWith('ghcr.io/')", false, true},
		{"res.metadata.name", false, false}, // dyn: checked when evaluated
		{"1 + 1", true, false},
		{"res.metadata.name ==", true, false},
	}
	res := map[string]any{"metadata": map[string]any{"name": "app"}}
	req := map[string]any{"image": "ghcr.io/x"}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			f, err := compileFilter(tt.expr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("compile error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got, err := f.accept(t.Context(), res, req, nil)
			if tt.accept && (err != nil || !got) {
				t.Errorf("accept = %v, %v", got, err)
			}
			if !tt.accept && err == nil && got {
				t.Error("accepted")
			}
		})
	}
}

// FuzzValidate feeds untrusted headers and bodies to every validator: none
// may panic, and an HMAC type may only accept a correct signature.
func FuzzValidate(f *testing.F) {
	f.Add("sha256=00", "push", []byte(`{}`), "t")
	f.Add("sha1="+mac(sha1.New, "t", []byte("x")), "ping", []byte("x"), "t")
	f.Add("=", "", []byte(nil), "")
	f.Fuzz(func(t *testing.T, sig, event string, body []byte, token string) {
		h := headers("X-Signature", sig, "X-Hub-Signature", sig, "X-Hub-Signature-256", sig,
			"X-GitHub-Event", event, "X-Gitlab-Token", sig, "X-Event-Key", event,
			"X-Nexus-Webhook-Signature", sig, "Authorization", sig)
		for typ := range validators {
			if typ == notificationv1.GCRReceiver || typ == notificationv1.GenericOIDCReceiver {
				continue // they would call out to an issuer; FuzzUnverifiedIssuer covers their parsing
			}
			_, _ = run(typ, h, body, token, []string{"push"})
		}
		if _, err := run(notificationv1.GenericHMACReceiver, h, body, token, nil); err == nil {
			ok := false
			for name, fn := range hashes {
				if sig == name+"="+mac(fn, token, body) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("accepted signature %q", sig)
			}
		}
	})
}
