package commitstatus

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const (
	token = "s3cr3t-token"
	key   = "kustomization/podinfo/0c9c2e41"
)

// hostCase is one commit-status type against its fake.
type hostCase struct {
	typ string
	api hostAPI
	// options addresses the fake at base.
	options func(base string) notifier.Options
	// authHeader is the Authorization header the host must get.
	authHeader string
	// success and failure are the host's state words.
	success, failure string
	// stateField names the state in a posted status.
	stateField string
	// retries5xx is true when the type's client retries a 5xx answer,
	// as Flux's does with the same client.
	retries5xx bool
}

func hostCases() []hostCase {
	sha := `([0-9a-f]{40}|[0-9a-f]{64})`
	return []hostCase{
		{
			typ: "github",
			api: hostAPI{
				post:       regexp.MustCompile(`^/api/v3/repos/org/app/statuses/` + sha + `$`),
				get:        regexp.MustCompile(`^/api/v3/repos/org/app/commits/` + sha + `/status$`),
				authorized: headerIs("Authorization", "Bearer "+token),
				required:   []string{"state", "context"},
				key:        "context",
				list: func(w http.ResponseWriter, _ *http.Request, stored []map[string]any) {
					writeJSON(w, http.StatusOK, map[string]any{"state": "success", "statuses": latestByKey(stored, "context")})
				},
			},
			options: func(base string) notifier.Options {
				return notifier.Options{Address: base + "/org/app.git", Token: token}
			},
			authHeader: "Bearer " + token, success: "success", failure: "failure", stateField: "state",
		},
		{
			typ: "gitlab",
			api: hostAPI{
				post:       regexp.MustCompile(`^/api/v4/projects/group%2Fsub%2Fapp/statuses/` + sha + `$`),
				get:        regexp.MustCompile(`^/api/v4/projects/group%2Fsub%2Fapp/repository/commits/` + sha + `/statuses$`),
				authorized: headerIs("Private-Token", token),
				required:   []string{"state"},
				key:        "name",
				list: func(w http.ResponseWriter, r *http.Request, stored []map[string]any) {
					out := []map[string]any{}
					for _, s := range latestByKey(stored, "name") {
						if n := r.URL.Query().Get("name"); n == "" || n == s["name"] {
							out = append(out, map[string]any{"name": s["name"], "status": s["state"], "description": s["description"]})
						}
					}
					writeJSON(w, http.StatusOK, out)
				},
			},
			options: func(base string) notifier.Options {
				return notifier.Options{Address: base + "/group/sub/app", Token: token}
			},
			success: "success", failure: "failed", stateField: "state", retries5xx: true,
		},
		{
			typ: "gitea",
			api: hostAPI{
				post:       regexp.MustCompile(`^/api/v1/repos/org/app/statuses/` + sha + `$`),
				get:        regexp.MustCompile(`^/api/v1/repos/org/app/commits/` + sha + `/statuses$`),
				authorized: headerIs("Authorization", "token "+token),
				required:   []string{"state", "context"},
				key:        "context",
				// Gitea reads a status's state back as "status".
				list: func(w http.ResponseWriter, _ *http.Request, stored []map[string]any) {
					out := []map[string]any{}
					for _, s := range stored {
						out = append(out, map[string]any{"context": s["context"], "status": s["state"], "description": s["description"]})
					}
					writeJSON(w, http.StatusOK, out)
				},
			},
			options: func(base string) notifier.Options {
				return notifier.Options{Address: base + "/org/app", Token: token}
			},
			authHeader: "token " + token, success: "success", failure: "failure", stateField: "state",
		},
		{
			typ: "bitbucket",
			api: hostAPI{
				post:       regexp.MustCompile(`^/2.0/repositories/org/app/commit/` + sha + `/statuses/build$`),
				get:        regexp.MustCompile(`^/2.0/repositories/org/app/commit/` + sha + `/statuses/build/[0-9a-f]{40}$`),
				authorized: basicAuthIs("deployer", token),
				required:   []string{"state", "key", "url"},
				key:        "key",
				list:       listBuildByKey(func(r *http.Request) string { return r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:] }),
			},
			options: func(string) notifier.Options {
				return notifier.Options{Address: "https://bitbucket.org/org/app", Token: "deployer:" + token}
			},
			success: "SUCCESSFUL", failure: "FAILED", stateField: "state",
		},
		{
			typ: "bitbucketserver",
			api: hostAPI{
				post:       regexp.MustCompile(`^/bitbucket/rest/api/1.0/projects/PROJ/repos/app/commits/` + sha + `/builds$`),
				get:        regexp.MustCompile(`^/bitbucket/rest/api/1.0/projects/PROJ/repos/app/commits/` + sha + `/builds$`),
				authorized: basicAuthIs("deployer", token),
				required:   []string{"state", "key", "url"},
				key:        "key",
				list:       listBuildByKey(func(r *http.Request) string { return r.URL.Query().Get("key") }),
			},
			options: func(base string) notifier.Options {
				return notifier.Options{Address: base + "/bitbucket/scm/PROJ/app.git", Username: "deployer", Password: token}
			},
			success: "SUCCESSFUL", failure: "FAILED", stateField: "state",
		},
		{
			typ: "azuredevops",
			api: hostAPI{
				post:       regexp.MustCompile(`^/org/proj/_apis/git/repositories/app/commits/` + sha + `/statuses$`),
				get:        regexp.MustCompile(`^/org/proj/_apis/git/repositories/app/commits/` + sha + `/statuses$`),
				authorized: func(r *http.Request) bool { return r.URL.Query().Get("api-version") != "" && basicAuthIs("", token)(r) },
				required:   []string{"state", "context"},
				key:        "context",
				list: func(w http.ResponseWriter, r *http.Request, stored []map[string]any) {
					if r.URL.Query().Get("latestOnly") == "true" {
						stored = latestByKey(stored, "context")
					}
					writeJSON(w, http.StatusOK, map[string]any{"count": len(stored), "value": append([]map[string]any{}, stored...)})
				},
			},
			options: func(base string) notifier.Options {
				return notifier.Options{Address: base + "/org/proj/_git/app", Token: token}
			},
			success: "succeeded", failure: "error", stateField: "state",
		},
	}
}

// listBuildByKey answers a Bitbucket build status read: the newest status
// with the key keyOf reads from the request, 404 when none.
func listBuildByKey(keyOf func(*http.Request) string) func(http.ResponseWriter, *http.Request, []map[string]any) {
	return func(w http.ResponseWriter, r *http.Request, stored []map[string]any) {
		for _, s := range stored {
			if s["key"] == keyOf(r) {
				writeJSON(w, http.StatusOK, s)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "no build status"})
	}
}

// newFor builds the type's Notifier against the fake.
func (hc hostCase) newFor(t *testing.T, f *fakeHost, change func(*notifier.Options)) notifier.Notifier {
	t.Helper()
	o := hc.options(f.srv.URL)
	o.Type, o.CommitStatus, o.HTTPClient = hc.typ, key, f.srv.Client()
	if change != nil {
		change(&o)
	}
	n, err := New(o)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	if b, ok := n.(*poster).host.(*bitbucket); ok {
		// Bitbucket Cloud's API has one address: point it at the fake.
		b.base = f.srv.URL + "/2.0"
	}
	return n
}

func kustomizationEvent(severity, reason string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Kustomization", Name: "podinfo", Namespace: "apps"},
		Severity:       severity, Reason: reason, Message: "Applied revision: main@sha1:" + sha1Hex,
		Metadata: map[string]string{"revision": "main@sha1:" + sha1Hex, "commit_status": "update"},
	}
}

func TestHostsSetCommitStatus(t *testing.T) {
	for _, hc := range hostCases() {
		t.Run(hc.typ, func(t *testing.T) {
			f := newFakeHost(t, hc.api)
			n := hc.newFor(t, f, nil)
			ctx := context.Background()

			// A success posts once, on the event's commit.
			if err := n.Post(ctx, kustomizationEvent(events.SeverityInfo, "ReconciliationSucceeded")); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			posts := f.posts()
			if len(posts) != 1 {
				t.Fatalf("host got %d posts, want 1", len(posts))
			}
			p := posts[0]
			if !strings.Contains(p.path, sha1Hex) {
				t.Errorf("posted to %s, not the event's commit", p.path)
			}
			if hc.authHeader != "" && p.header.Get("Authorization") != hc.authHeader {
				t.Errorf("Authorization = %q, want %q", p.header.Get("Authorization"), hc.authHeader)
			}
			if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q", ct)
			}
			notifiertest.Golden(t, filepath.Join("testdata", hc.typ+".json"), p.body, f.srv.URL, *update)

			// The same status again is not posted.
			f.reset()
			if err := n.Post(ctx, kustomizationEvent(events.SeverityInfo, "ReconciliationSucceeded")); err != nil {
				t.Fatalf("second Post() = %v", err)
			}
			if got := len(f.posts()); got != 0 {
				t.Errorf("duplicate status posted %d times", got)
			}

			// A failure replaces it.
			if err := n.Post(ctx, kustomizationEvent(events.SeverityError, "HealthCheckFailed")); err != nil {
				t.Fatalf("failure Post() = %v", err)
			}
			posts = f.posts()
			if len(posts) != 1 {
				t.Fatalf("failure: host got %d posts, want 1", len(posts))
			}
			var st map[string]any
			if err := json.Unmarshal(posts[0].body, &st); err != nil {
				t.Fatal(err)
			}
			if st[hc.stateField] != hc.failure || st["description"] != "health check failed" {
				t.Errorf("failure status = %v, want state %s", st, hc.failure)
			}

			// Progressing events set nothing and ask nothing.
			f.reset()
			if err := n.Post(ctx, kustomizationEvent(events.SeverityInfo, "Progressing")); err != nil || f.callCount() != 0 {
				t.Errorf("Progressing: Post() = %v after %d calls", err, f.callCount())
			}
		})
	}
}

func TestHostsReportRefusals(t *testing.T) {
	for _, hc := range hostCases() {
		t.Run(hc.typ, func(t *testing.T) {
			f := newFakeHost(t, hc.api)
			e := kustomizationEvent(events.SeverityInfo, "ReconciliationSucceeded")

			// A 5xx is an error, or retried where Flux's client retries.
			f.failPosts = 1
			err := hc.newFor(t, f, nil).Post(context.Background(), e)
			switch {
			case hc.retries5xx && (err != nil || len(f.posts()) != 2):
				t.Errorf("5xx: Post() = %v after %d posts, want a retry that succeeds", err, len(f.posts()))
			case !hc.retries5xx && (err == nil || !strings.Contains(err.Error(), "500")):
				t.Errorf("5xx: Post() = %v, want the 500 reported", err)
			}

			// Refused credentials are an error that does not show them,
			// though the host echoed them.
			wrong := "wr0ng-" + token
			err = hc.newFor(t, f, func(o *notifier.Options) {
				switch {
				case o.Password != "":
					o.Password = wrong
				case strings.Contains(o.Token, ":"):
					o.Token = "deployer:" + wrong
				default:
					o.Token = wrong
				}
			}).Post(context.Background(), kustomizationEvent(events.SeverityError, "BuildFailed"))
			if err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("bad credentials: Post() = %v, want the 401 reported", err)
			}
			if strings.Contains(err.Error(), wrong) {
				t.Errorf("error shows the credential: %v", err)
			}
		})
	}
}
