package receiver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/oidcissuer"
)

const hookToken = "hook-token"

// readyReceiver creates obj with a token Secret, waits until it is Ready
// and until the manager's cache serves it under its path, and returns the
// path.
func (f *fixture) readyReceiver(t *testing.T, obj *notificationv1.Receiver) string {
	t.Helper()
	f.secret(t, map[string]string{"token": hookToken})
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)
	waitIndexed(t, obj.Status.WebhookPath, func(*notificationv1.Receiver) bool { return true })
	return obj.Status.WebhookPath
}

// waitIndexed waits until the cache returns a Receiver under path that
// satisfies ok.
func waitIndexed(t *testing.T, path string, ok func(*notificationv1.Receiver) bool) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var list notificationv1.ReceiverList
		if err := mgrClient.List(ctx, &list, client.MatchingFields{WebhookPathIndex: path}); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 1 && ok(&list.Items[0]), "receiver not in the cache yet"
	})
}

// named is a GitRepository resource of a Receiver.
func named(name string) notificationv1.ReceiverResource {
	return notificationv1.ReceiverResource{CrossNamespaceObjectReference: notificationv1.CrossNamespaceObjectReference{
		APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind, Name: name,
	}}
}

func newServer(noCross bool) *Server {
	return NewServer("127.0.0.1:0", mgrClient, logr.Discard(), noCross)
}

// post sends body to path with headers and returns the code and message.
func post(t *testing.T, h http.Handler, path string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// requestedAt returns the reconcile request annotation of obj.
func (f *fixture) requestedAt(t *testing.T, obj client.Object) string {
	t.Helper()
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()[meta.ReconcileRequestAnnotation]
}

func (f *fixture) assertAnnotated(t *testing.T, want bool, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		v := f.requestedAt(t, o)
		if (v != "") != want {
			t.Errorf("%s: requestedAt = %q, want annotated=%v", o.GetName(), v, want)
			continue
		}
		if want {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				t.Errorf("%s: requestedAt %q is not RFC3339Nano: %v", o.GetName(), v, err)
			}
		}
	}
}

func sign(body []byte) string {
	mac := hmac.New(sha256.New, []byte(hookToken))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestGenericHookAnnotatesNamedAndSelected(t *testing.T) {
	f := newFixture(t)
	app := f.gitRepository(t, "app", nil)
	b := f.gitRepository(t, "b", map[string]string{"team": "x"})
	c := f.gitRepository(t, "c", map[string]string{"team": "x"})
	skipped := f.gitRepository(t, "skipped", map[string]string{"team": "x"})
	other := f.gitRepository(t, "other", map[string]string{"team": "y"})
	byName := named("app")
	byName.APIVersion = "" // resolved from the kind
	byLabel := named("*")
	byLabel.MatchLabels = map[string]string{"team": "x"}
	byLabel.Filter = "res.metadata.name != 'skipped'"
	path := f.readyReceiver(t, f.receiver("generic", notificationv1.GenericReceiver, byName, byLabel))

	code, msg := post(t, newServer(false).Handler(), path, []byte(`{}`), nil)
	if code != http.StatusOK {
		t.Fatalf("code = %d (%s)", code, msg)
	}
	if msg != "3 object(s) annotated" {
		t.Errorf("message = %q", msg)
	}
	f.assertAnnotated(t, true, app, b, c)
	f.assertAnnotated(t, false, skipped, other)
}

func TestResourceFilterSeesRequest(t *testing.T) {
	f := newFixture(t)
	a := f.gitRepository(t, "a", map[string]string{"team": "x"})
	b := f.gitRepository(t, "b", map[string]string{"team": "x"})
	all := named("*")
	all.MatchLabels = map[string]string{"team": "x"}
	obj := f.receiver("generic", notificationv1.GenericReceiver, all)
	obj.Spec.ResourceFilter = "has(req.repo) && req.repo == res.metadata.name"
	path := f.readyReceiver(t, obj)

	if code, msg := post(t, newServer(false).Handler(), path, []byte(`{"repo":"b"}`), nil); code != http.StatusOK || msg != "1 object(s) annotated" {
		t.Fatalf("code = %d (%s)", code, msg)
	}
	f.assertAnnotated(t, false, a)
	f.assertAnnotated(t, true, b)
}

func TestGitHubHook(t *testing.T) {
	f := newFixture(t)
	repo := f.gitRepository(t, "app", nil)
	obj := f.receiver("github", notificationv1.GitHubReceiver, named("app"))
	obj.Spec.Events = []string{"push"}
	path := f.readyReceiver(t, obj)
	h := newServer(false).Handler()
	body := []byte(`{"ref":"refs/heads/main"}`)

	refused := []struct {
		name    string
		headers map[string]string
		code    int
	}{
		{"bad signature", map[string]string{"X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64), "X-GitHub-Event": "push"}, http.StatusUnauthorized},
		{"no signature", map[string]string{"X-GitHub-Event": "push"}, http.StatusUnauthorized},
		{"event not in spec.events", map[string]string{"X-Hub-Signature-256": sign(body), "X-GitHub-Event": "issues"}, http.StatusBadRequest},
		{"ping", map[string]string{"X-Hub-Signature-256": sign(body), "X-GitHub-Event": "ping"}, http.StatusOK},
	}
	for _, tt := range refused {
		code, msg := post(t, h, path, body, tt.headers)
		if code != tt.code {
			t.Errorf("%s: code = %d (%s), want %d", tt.name, code, msg, tt.code)
		}
		if strings.Contains(msg, hookToken) {
			t.Errorf("%s: message echoes the token: %q", tt.name, msg)
		}
	}
	f.assertAnnotated(t, false, repo)

	code, msg := post(t, h, path, body, map[string]string{"X-Hub-Signature-256": sign(body), "X-GitHub-Event": "Push"})
	if code != http.StatusOK {
		t.Fatalf("push: code = %d (%s)", code, msg)
	}
	f.assertAnnotated(t, true, repo)
}

func TestTokenAndHMACHooks(t *testing.T) {
	body := []byte(`{"image":"ghcr.io/org/app:v1"}`)
	tests := []struct {
		typ     string
		good    map[string]string
		bad     map[string]string
		badCode int
	}{
		{notificationv1.GenericHMACReceiver, map[string]string{"X-Signature": sign(body)},
			map[string]string{"X-Signature": "sha512=" + strings.Repeat("ab", 64)}, http.StatusUnauthorized},
		{notificationv1.GitLabReceiver, map[string]string{"X-Gitlab-Token": hookToken, "X-Gitlab-Event": "Push Hook"},
			map[string]string{"X-Gitlab-Token": "wrong", "X-Gitlab-Event": "Push Hook"}, http.StatusUnauthorized},
		{notificationv1.HarborReceiver, map[string]string{"Authorization": hookToken},
			map[string]string{"Authorization": "Bearer " + hookToken}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			f := newFixture(t)
			repo := f.gitRepository(t, "app", nil)
			path := f.readyReceiver(t, f.receiver("hooks", tt.typ, named("app")))
			h := newServer(false).Handler()
			if code, msg := post(t, h, path, body, tt.bad); code != tt.badCode {
				t.Errorf("bad credentials: code = %d (%s), want %d", code, msg, tt.badCode)
			}
			f.assertAnnotated(t, false, repo)
			if code, msg := post(t, h, path, body, tt.good); code != http.StatusOK {
				t.Fatalf("good credentials: code = %d (%s)", code, msg)
			}
			f.assertAnnotated(t, true, repo)
		})
	}
}

func TestRefusedRequests(t *testing.T) {
	f := newFixture(t)
	repo := f.gitRepository(t, "app", nil)
	obj := f.receiver("generic", notificationv1.GenericReceiver, named("app"))
	path := f.readyReceiver(t, obj)
	h := newServer(false).Handler()

	if code, _ := post(t, h, "/hook/"+strings.Repeat("0", 64), nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown path: code = %d, want 404", code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: code = %d, want 405", rec.Code)
	}
	if code, _ := post(t, h, path, bytes.Repeat([]byte("x"), DefaultMaxBodyBytes+1), nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize body: code = %d, want 413", code)
	}
	f.assertAnnotated(t, false, repo)

	f.env.Update(t, obj, func() { obj.Spec.Suspend = true })
	waitIndexed(t, path, func(r *notificationv1.Receiver) bool { return r.Spec.Suspend })
	if code, msg := post(t, h, path, nil, nil); code != http.StatusServiceUnavailable || msg != "receiver is suspended" {
		t.Errorf("suspended: code = %d (%s), want 503", code, msg)
	}
	f.assertAnnotated(t, false, repo)
}

func TestCrossNamespaceResources(t *testing.T) {
	f := newFixture(t)
	other := &fixture{env: f.env, ns: f.env.Namespace(t)}
	repo := other.gitRepository(t, "app", nil)
	ref := named("app")
	ref.Namespace = other.ns
	path := f.readyReceiver(t, f.receiver("generic", notificationv1.GenericReceiver, ref))

	code, msg := post(t, newServer(true).Handler(), path, nil, nil)
	if code != http.StatusInternalServerError || !strings.Contains(msg, "cross-namespace references have been blocked") {
		t.Errorf("refused: code = %d (%s), want 500 naming the refusal", code, msg)
	}
	other.assertAnnotated(t, false, repo)

	if code, msg := post(t, newServer(false).Handler(), path, nil, nil); code != http.StatusOK {
		t.Fatalf("allowed: code = %d (%s)", code, msg)
	}
	other.assertAnnotated(t, true, repo)
}

func TestServerStartListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewServer(addr, mgrClient, logr.Discard(), false).Start(ctx) }()
	testenv.Eventually(t, 10*time.Second, func(context.Context) (bool, string) {
		resp, err := http.Post(fmt.Sprintf("http://%s/hook/unknown", addr), "application/json", nil)
		if err != nil {
			return false, err.Error()
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusNotFound, fmt.Sprintf("code %d", resp.StatusCode)
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
}

// TestGenericOIDCHook runs a generic-oidc Receiver against the API server
// and a local issuer: the path is derived from an empty token (no Secret),
// a token passing the validations annotates the GitRepository its claims
// select, and one failing them is refused with the validation's message.
func TestGenericOIDCHook(t *testing.T) {
	f := newFixture(t)
	iss := oidcissuer.Start(t)
	app := f.gitRepository(t, "app", map[string]string{"team": "x"})
	other := f.gitRepository(t, "other", map[string]string{"team": "x"})
	byLabel := named("*")
	byLabel.MatchLabels = map[string]string{"team": "x"}
	obj := f.oidcReceiver("oidc", notificationv1.OIDCProvider{
		IssuerURL:   iss.URL,
		Variables:   []notificationv1.OIDCVariable{{Name: "owner", Expression: `claims.repository.split('/')[0]`}},
		Validations: []notificationv1.OIDCValidation{{Expression: `vars.owner == 'org'`, Message: "only org may deploy"}},
	}, byLabel)
	obj.Spec.ResourceFilter = `res.metadata.name == claims.repository.split('/')[1]`
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)
	path := obj.Status.WebhookPath
	if want := expectedPath("", "oidc", f.ns); path != want {
		t.Fatalf("webhookPath = %q, want %q (an empty token)", path, want)
	}
	waitIndexed(t, path, func(*notificationv1.Receiver) bool { return true })
	h := newServer(false).Handler()

	denied := iss.Sign(t, iss.Claims("notification-controller", map[string]any{"repository": "evil/app"}))
	code, msg := post(t, h, path, []byte(`{}`), map[string]string{"Authorization": "Bearer " + denied})
	if code != http.StatusBadRequest || !strings.HasSuffix(msg, "token validation failed: only org may deploy") {
		t.Errorf("denied: code = %d (%s), want 400 with the validation's message", code, msg)
	}
	wrongAud := iss.Sign(t, iss.Claims("flux", map[string]any{"repository": "org/app"}))
	if code, msg := post(t, h, path, []byte(`{}`), map[string]string{"Authorization": "Bearer " + wrongAud}); code != http.StatusUnauthorized {
		t.Errorf("wrong audience: code = %d (%s), want 401", code, msg)
	}
	f.assertAnnotated(t, false, app, other)

	good := iss.Sign(t, iss.Claims("notification-controller", map[string]any{"repository": "org/app"}))
	code, msg = post(t, h, path, []byte(`{}`), map[string]string{"Authorization": "Bearer " + good})
	if code != http.StatusOK || msg != "1 object(s) annotated" {
		t.Fatalf("allowed: code = %d (%s)", code, msg)
	}
	f.assertAnnotated(t, true, app)
	f.assertAnnotated(t, false, other)
}

// TestGCRHook runs a gcr Receiver against the API server, the issuer
// standing in for accounts.google.com: filters see the registry event,
// not the Pub/Sub envelope.
func TestGCRHook(t *testing.T) {
	f := newFixture(t)
	iss := oidcissuer.Start(t)
	const email, audience = "push@project.iam.gserviceaccount.com", "https://flux.example.com/hook"
	app := f.gitRepository(t, "app", nil)
	f.secret(t, map[string]string{"token": hookToken, "email": email, "audience": audience})
	obj := f.receiver("gcr", notificationv1.GCRReceiver, named("app"))
	obj.Spec.ResourceFilter = `req.tag == 'gcr.io/p/app:v1' && !has(req.message)`
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)
	waitIndexed(t, obj.Status.WebhookPath, func(*notificationv1.Receiver) bool { return true })
	s := newServer(false)
	s.tokens.gcrIssuer = iss.URL
	h := s.Handler()

	tok := iss.Sign(t, iss.Claims(audience, map[string]any{"email": email, "email_verified": true}))
	body := pubsub(`{"action":"INSERT","digest":"gcr.io/p/app@sha256:0a1b","tag":"gcr.io/p/app:v1"}`)
	if code, msg := post(t, h, obj.Status.WebhookPath, body, nil); code != http.StatusUnauthorized {
		t.Errorf("no token: code = %d (%s), want 401", code, msg)
	}
	f.assertAnnotated(t, false, app)
	code, msg := post(t, h, obj.Status.WebhookPath, body, map[string]string{"Authorization": "Bearer " + tok})
	if code != http.StatusOK || msg != "1 object(s) annotated" {
		t.Fatalf("push: code = %d (%s)", code, msg)
	}
	f.assertAnnotated(t, true, app)
}

func TestCDEventsHook(t *testing.T) {
	f := newFixture(t)
	app := f.gitRepository(t, "app", nil)
	obj := f.receiver("cdevents", notificationv1.CDEventsReceiver, named("app"))
	obj.Spec.Events = []string{"dev.cdevents.pipelinerun.queued.0.2.0"}
	path := f.readyReceiver(t, obj)
	h := newServer(false).Handler()
	if code, msg := post(t, h, path, cdEventBody(nil), map[string]string{"Ce-Type": "dev.cdevents.build.started.0.2.0"}); code != http.StatusBadRequest {
		t.Errorf("other event: code = %d (%s), want 400", code, msg)
	}
	f.assertAnnotated(t, false, app)
	if code, msg := post(t, h, path, cdEventBody(nil), map[string]string{"Ce-Type": "dev.cdevents.pipelinerun.queued.0.2.0"}); code != http.StatusOK {
		t.Fatalf("queued: code = %d (%s)", code, msg)
	}
	f.assertAnnotated(t, true, app)
}
