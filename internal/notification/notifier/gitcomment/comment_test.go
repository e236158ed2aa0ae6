package gitcomment

import (
	"context"
	"flag"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const (
	token       = "s3cr3t-token"
	providerUID = "0c9c2e41-5f1b-4d7e-9a38-7b2f2f6d1c11"
)

// hostCase is one comment type against its fake.
type hostCase struct {
	typ string
	api hostAPI
	// address is the repository's address at the fake's base.
	address func(base string) string
	// authHeader and authValue are the credentials every request carries.
	authHeader, authValue string
	// listQuery is the query of the comments' list, as Flux asks it.
	listQuery string
	// retries5xx is true when the type's client retries a 5xx answer,
	// as Flux's does with the same client.
	retries5xx bool
}

func hostCases() []hostCase {
	bearer := func(prefix string) func(*http.Request) string {
		return func(r *http.Request) string {
			v, _ := strings.CutPrefix(r.Header.Get("Authorization"), prefix)
			return v
		}
	}
	login := func(key string) func(string) map[string]any {
		return func(l string) map[string]any { return map[string]any{"id": 7, key: l} }
	}
	return []hostCase{
		{
			typ: "githubpullrequestcomment",
			api: hostAPI{
				list:       regexp.MustCompile(`^/api/v3/repos/org/app/issues/([0-9]+)/comments$`),
				edit:       regexp.MustCompile(`^/api/v3/repos/org/app/issues/comments/([0-9]+)$`),
				editMethod: http.MethodPatch,
				user:       "/api/v3/user",
				auth:       bearer("Bearer "),
				encode: func(c stored) map[string]any {
					return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author}}
				},
				me: login("login"),
			},
			address:    func(base string) string { return base + "/org/app.git" },
			authHeader: "Authorization", authValue: "Bearer " + token,
			listQuery: "direction=asc&per_page=100&sort=created",
		},
		{
			typ: "gitlabmergerequestcomment",
			api: hostAPI{
				list:       regexp.MustCompile(`^/api/v4/projects/group%2Fsub%2Fapp/merge_requests/([0-9]+)/notes$`),
				edit:       regexp.MustCompile(`^/api/v4/projects/group%2Fsub%2Fapp/merge_requests/([0-9]+)/notes/([0-9]+)$`),
				editMethod: http.MethodPut,
				user:       "/api/v4/user",
				auth:       func(r *http.Request) string { return r.Header.Get("Private-Token") },
				encode: func(c stored) map[string]any {
					return map[string]any{"id": c.ID, "body": c.Body, "author": map[string]any{"username": c.Author}}
				},
				me: login("username"),
			},
			address:    func(base string) string { return base + "/group/sub/app" },
			authHeader: "Private-Token", authValue: token,
			listQuery: "order_by=created_at&per_page=100&sort=asc", retries5xx: true,
		},
		{
			typ: "giteapullrequestcomment",
			api: hostAPI{
				list:       regexp.MustCompile(`^/api/v1/repos/org/app/issues/([0-9]+)/comments$`),
				edit:       regexp.MustCompile(`^/api/v1/repos/org/app/issues/comments/([0-9]+)$`),
				editMethod: http.MethodPatch,
				user:       "/api/v1/user",
				auth:       bearer("token "),
				encode: func(c stored) map[string]any {
					return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author}}
				},
				me: login("login"),
			},
			address:    func(base string) string { return base + "/org/app" },
			authHeader: "Authorization", authValue: "token " + token,
			listQuery: "limit=100&page=1",
		},
	}
}

// newFor builds the type's Notifier against the fake, as the user
// "weir-bot".
func (hc hostCase) newFor(t *testing.T, f *fakeHost, tok string) notifier.Notifier {
	t.Helper()
	f.mu.Lock()
	f.users[token] = "weir-bot"
	f.mu.Unlock()
	n, err := New(notifier.Options{Type: hc.typ, Address: hc.address(f.srv.URL), Token: tok, ProviderUID: providerUID,
		HTTPClient: f.srv.Client()})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return n
}

// objectEvent is an event of the Kustomization ns/name naming pull
// request 7, as a Flux controller sends it: the object's annotation
// keeps the event group's prefix.
func objectEvent(name, severity, message string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization",
			Name: name, Namespace: "apps"},
		Severity: severity, Reason: "ReconciliationSucceeded", Message: message,
		Timestamp: time.Date(2026, 12, 4, 12, 30, 5, 123456789, time.UTC),
		Metadata: map[string]string{
			"revision":                               "preview@sha1:5394cb7f48332b2de7c17dd8b8384bbc84b7e738",
			"event.toolkit.fluxcd.io/change_request": "7", "event.toolkit.fluxcd.io/env": "preview",
		},
		ReportingController: "kustomize-controller",
	}
}

func TestCommentsCreateThenUpdate(t *testing.T) {
	for _, hc := range hostCases() {
		t.Run(hc.typ, func(t *testing.T) {
			f := newFakeHost(t, hc.api)
			// Another user's comment quoting the marker is not ours to edit.
			quoted := "see <!-- " + prefixOf(hc.typ) + ":" + providerUID + "/Kustomization/apps/podinfo -->"
			f.comments["7"] = []stored{{ID: 1, Author: "someone", Body: quoted}}
			n := hc.newFor(t, f, token)
			ctx := context.Background()

			// The first event of an object creates its comment.
			if err := n.Post(ctx, objectEvent("podinfo", events.SeverityInfo, "Applied revision: preview@sha1:5394cb7")); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			reqs := f.requests()
			for _, r := range reqs {
				if got := r.header.Get(hc.authHeader); got != hc.authValue {
					t.Errorf("%s %s: %s = %q, want %q", r.method, r.path, hc.authHeader, got, hc.authValue)
				}
				if hc.api.list.MatchString(r.path) && r.method == http.MethodGet && r.query != hc.listQuery {
					t.Errorf("comments listed with query %q, want %q", r.query, hc.listQuery)
				}
			}
			writes := f.writes()
			if len(writes) != 1 || writes[0].method != http.MethodPost || !hc.api.list.MatchString(writes[0].path) {
				t.Fatalf("first event: writes %v, want one POST of a comment on #7", summary(writes))
			}
			if m := hc.api.list.FindStringSubmatch(writes[0].path); m[1] != "7" {
				t.Errorf("commented on #%s, want #7", m[1])
			}
			notifiertest.Golden(t, filepath.Join("testdata", hc.typ+"-create.json"), writes[0].body, f.srv.URL, *update)
			created := f.commentsOf("7")
			if len(created) != 2 {
				t.Fatalf("request holds %d comments, want 2", len(created))
			}

			// The object's next event updates that comment, not the quote.
			f.reset()
			if err := n.Post(ctx, objectEvent("podinfo", events.SeverityError, "Health check failed after 5m0s")); err != nil {
				t.Fatalf("second Post() = %v", err)
			}
			writes = f.writes()
			if len(writes) != 1 || writes[0].method != hc.api.editMethod || !hc.api.edit.MatchString(writes[0].path) {
				t.Fatalf("second event: writes %v, want one %s of comment %d", summary(writes), hc.api.editMethod, created[1].ID)
			}
			if m := hc.api.edit.FindStringSubmatch(writes[0].path); m[len(m)-1] != "101" {
				t.Errorf("edited comment %s, want 101", m[len(m)-1])
			}
			notifiertest.Golden(t, filepath.Join("testdata", hc.typ+"-update.json"), writes[0].body, f.srv.URL, *update)
			if got := f.commentsOf("7"); len(got) != 2 || got[0].Body != quoted {
				t.Errorf("after the update the request holds %+v", got)
			}

			// Another object gets its own comment.
			f.reset()
			if err := n.Post(ctx, objectEvent("redis", events.SeverityInfo, "Applied revision")); err != nil {
				t.Fatalf("third Post() = %v", err)
			}
			if writes = f.writes(); len(writes) != 1 || writes[0].method != http.MethodPost {
				t.Fatalf("another object: writes %v, want one POST", summary(writes))
			}
			if got := f.commentsOf("7"); len(got) != 3 || !strings.Contains(got[2].Body, "/Kustomization/apps/redis -->") {
				t.Errorf("another object: the request holds %+v", got)
			}
		})
	}
}

func TestCommentsReportRefusals(t *testing.T) {
	for _, hc := range hostCases() {
		t.Run(hc.typ, func(t *testing.T) {
			f := newFakeHost(t, hc.api)
			e := objectEvent("podinfo", events.SeverityInfo, "Applied revision")

			// A 4xx on the write is an error naming the answer.
			f.failWrites, f.failCode = 1, http.StatusUnprocessableEntity
			err := hc.newFor(t, f, token).Post(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "#7") {
				t.Errorf("422: Post() = %v, want the refusal reported", err)
			}

			// A 5xx is an error, or retried where Flux's client retries.
			f.reset()
			f.failWrites, f.failCode = 1, http.StatusInternalServerError
			err = hc.newFor(t, f, token).Post(context.Background(), e)
			switch {
			case hc.retries5xx && (err != nil || len(f.writes()) != 2):
				t.Errorf("5xx: Post() = %v after %d writes, want a retry that succeeds", err, len(f.writes()))
			case !hc.retries5xx && (err == nil || !strings.Contains(err.Error(), "500")):
				t.Errorf("5xx: Post() = %v, want the 500 reported", err)
			}

			// Refused credentials are an error that does not show them,
			// though the host echoed them.
			wrong := "wr0ng-" + token
			err = hc.newFor(t, f, wrong).Post(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("bad credentials: Post() = %v, want the 401 reported", err)
			}
			if strings.Contains(err.Error(), wrong) {
				t.Errorf("error shows the credential: %v", err)
			}
		})
	}
}

func TestCommentsSkipAndRefuseEvents(t *testing.T) {
	hc := hostCases()[0]
	f := newFakeHost(t, hc.api)
	n := hc.newFor(t, f, token)
	ctx := context.Background()

	e := objectEvent("podinfo", events.SeverityInfo, "Reconciliation finished")
	e.Metadata["commit_status"] = "update"
	if err := n.Post(ctx, e); err != nil || len(f.requests()) != 0 {
		t.Errorf("commit status update: Post() = %v after %d requests, want nothing asked", err, len(f.requests()))
	}
	for _, tt := range []struct{ value, want string }{
		{"", `missing "change_request" metadata key`},
		{"seven", `invalid "change_request" metadata value "seven"`},
	} {
		e := objectEvent("podinfo", events.SeverityInfo, "Applied")
		e.Metadata["event.toolkit.fluxcd.io/change_request"] = tt.value
		if err := n.Post(ctx, e); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("change_request %q: Post() = %v, want %q", tt.value, err, tt.want)
		}
	}
	// weir's controllers send the key bare.
	e = objectEvent("podinfo", events.SeverityInfo, "Applied")
	delete(e.Metadata, "event.toolkit.fluxcd.io/change_request")
	e.Metadata["change_request"] = "9"
	if err := n.Post(ctx, e); err != nil || len(f.commentsOf("9")) != 1 {
		t.Errorf("bare change_request: Post() = %v, comments on #9: %d", err, len(f.commentsOf("9")))
	}
}

func TestSkip(t *testing.T) {
	withKey := objectEvent("a", events.SeverityInfo, "m")
	bare := objectEvent("a", events.SeverityInfo, "m")
	delete(bare.Metadata, "event.toolkit.fluxcd.io/change_request")
	update := objectEvent("a", events.SeverityInfo, "m")
	update.Metadata["commit_status"] = "update"
	tests := []struct {
		kind     string
		e        events.Event
		skip     bool
		loud     bool
		whyWords string
	}{
		{kind: "githubpullrequestcomment", e: withKey},
		{kind: "gitlabmergerequestcomment", e: bare, skip: true, loud: true, whyWords: "change_request"},
		{kind: "githubdispatch", e: bare},
		// The event server drops commit status updates before asking.
		{kind: "githubdispatch", e: update},
		{kind: "giteapullrequestcomment", e: update},
	}
	for _, tt := range tests {
		why, loud := Skip(tt.kind, tt.e)
		if (why != "") != tt.skip || loud != tt.loud || !strings.Contains(why, tt.whyWords) {
			t.Errorf("Skip(%s) = %q, %v; want skip %v, loud %v", tt.kind, why, loud, tt.skip, tt.loud)
		}
	}
}

func TestNewRefusesMisconfiguredProviders(t *testing.T) {
	for name, o := range map[string]notifier.Options{
		"no uid":             {Type: "githubpullrequestcomment", Address: "https://github.com/o/r", Token: "t"},
		"github no token":    {Type: "githubpullrequestcomment", Address: "https://github.com/o/r", ProviderUID: "u"},
		"dispatch no repo":   {Type: "githubdispatch", Address: "https://github.com/o", Token: "t"},
		"gitlab no project":  {Type: "gitlabmergerequestcomment", Address: "https://gitlab.com", Token: "t", ProviderUID: "u"},
		"gitea no token":     {Type: "giteapullrequestcomment", Address: "https://gitea.io/o/r", ProviderUID: "u"},
		"not a comment type": {Type: "github", Address: "https://github.com/o/r", Token: "t", ProviderUID: "u"},
	} {
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), notifier.ErrInvalidConfig.Error()) {
			t.Errorf("%s: New() = %v, want ErrInvalidConfig", name, err)
		}
	}
}

func prefixOf(typ string) string {
	if typ == "gitlabmergerequestcomment" {
		return mrMarker
	}
	return prMarker
}

func summary(cs []call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.method+" "+c.path)
	}
	return out
}
