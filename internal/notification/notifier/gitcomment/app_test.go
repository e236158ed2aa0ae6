package gitcomment

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// gitHubAPI is the fake's GitHub: the pull request comment API.
func gitHubAPI() hostAPI { return hostCases()[0].api }

func TestDispatch(t *testing.T) {
	f := newFakeHost(t, gitHubAPI())
	f.users[token] = "weir-bot"
	n, err := New(notifier.Options{Type: "githubdispatch", Address: f.srv.URL + "/org/app", Token: token, HTTPClient: f.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	e := objectEvent("podinfo", events.SeverityError, "Health check failed")
	if err := n.Post(context.Background(), e); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	writes := f.writes()
	if len(writes) != 1 {
		t.Fatalf("writes %v, want one dispatch", summary(writes))
	}
	w := writes[0]
	if w.method != http.MethodPost || w.path != "/api/v3/repos/org/app/dispatches" {
		t.Errorf("sent %s %s, want POST /api/v3/repos/org/app/dispatches", w.method, w.path)
	}
	if got := w.header.Get("Authorization"); got != "Bearer "+token {
		t.Errorf("Authorization = %q", got)
	}
	var d struct {
		EventType     string       `json:"event_type"`
		ClientPayload events.Event `json:"client_payload"`
	}
	if err := json.Unmarshal(w.body, &d); err != nil {
		t.Fatal(err)
	}
	if d.EventType != "Kustomization/podinfo.apps" || d.ClientPayload.Message != e.Message {
		t.Errorf("dispatched %q with %+v", d.EventType, d.ClientPayload)
	}
	notifiertest.Golden(t, filepath.Join("testdata", "githubdispatch.json"), w.body, f.srv.URL, *update)

	// The commit-status event is not dispatched.
	f.reset()
	e.Metadata["commit_status"] = "update"
	if err := n.Post(context.Background(), e); err != nil || len(f.requests()) != 0 {
		t.Errorf("commit status update: Post() = %v after %d requests", err, len(f.requests()))
	}

	// A refusal is reported without the token the host echoed.
	wrong, _ := New(notifier.Options{Type: "githubdispatch", Address: f.srv.URL + "/org/app", Token: "wr0ng", HTTPClient: f.srv.Client()})
	err = wrong.Post(context.Background(), objectEvent("podinfo", events.SeverityInfo, "m"))
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wr0ng") {
		t.Errorf("bad token: Post() = %v, want a 401 without the token", err)
	}
}

// newApp makes a GitHub App the fake knows, and its Secret's data.
func newApp(t *testing.T, f *fakeHost, installation map[string]string) *githubapp.App {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.appKey, f.appID, f.appSlug = &key.PublicKey, 1234, "weir-app"
	f.owners["octo"] = 42
	f.mu.Unlock()
	data := map[string][]byte{
		githubapp.KeyAppID:      []byte("1234"),
		githubapp.KeyPrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		githubapp.KeyBaseURL:    []byte(f.srv.URL + "/api/v3"),
	}
	for k, v := range installation {
		data[k] = []byte(v)
	}
	app, err := githubapp.FromSecret(data)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestGitHubAppInstallation(t *testing.T) {
	for name, installation := range map[string]map[string]string{
		"by id":    {githubapp.KeyInstallationID: "42"},
		"by owner": {githubapp.KeyInstallationOwner: "octo"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeHost(t, gitHubAPI())
			app := newApp(t, f, installation)
			o := notifier.Options{Address: f.srv.URL + "/org/app", GitHubApp: app, ProviderUID: providerUID, HTTPClient: f.srv.Client()}
			ctx := context.Background()
			// Each delivery builds its Notifiers anew, as the event server does.
			for i, typ := range []string{"githubpullrequestcomment", "githubpullrequestcomment", "githubdispatch"} {
				o.Type = typ
				n, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				if err := n.Post(ctx, objectEvent("podinfo", events.SeverityInfo, "event "+string(rune('A'+i)))); err != nil {
					t.Fatalf("%s: Post() = %v", typ, err)
				}
			}
			if f.tokens != 1 {
				t.Errorf("the fake handed out %d installation tokens, want 1 reused", f.tokens)
			}
			for _, r := range f.requests() {
				if got := r.header.Get("Authorization"); got != "Bearer ghs_installation1" {
					t.Errorf("%s %s: Authorization = %q, want the installation token", r.method, r.path, got)
				}
			}
			// The App writes as "<slug>[bot]": its second event edited its comment.
			got := f.commentsOf("7")
			if len(got) != 1 || got[0].Author != "weir-app[bot]" || !strings.Contains(got[0].Body, "event B") {
				t.Errorf("request holds %+v, want one comment of weir-app[bot] saying event B", got)
			}
		})
	}
}

func TestGitHubAppRefusalsAreScrubbed(t *testing.T) {
	f := newFakeHost(t, gitHubAPI())
	app := newApp(t, f, map[string]string{githubapp.KeyInstallationID: "99"})
	n, err := New(notifier.Options{Type: "githubdispatch", Address: f.srv.URL + "/org/app", GitHubApp: app, HTTPClient: f.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	// The fake knows no installation 99; wrong JWTs are echoed back.
	err = n.Post(context.Background(), objectEvent("podinfo", events.SeverityInfo, "m"))
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("Post() = %v, want the 404 of the token exchange", err)
	}
	f.mu.Lock()
	f.appID = 1 // the JWT's issuer is now wrong: the fake echoes the JWT
	f.mu.Unlock()
	err = n.Post(context.Background(), objectEvent("podinfo", events.SeverityInfo, "m"))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Post() = %v, want the 401 of the token exchange", err)
	}
	for _, s := range append(app.Secrets(), "eyJ") {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error shows a credential (%.12q…): %v", s, err)
		}
	}
}
