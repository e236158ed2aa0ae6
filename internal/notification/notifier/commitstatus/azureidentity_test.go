package commitstatus

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// devOpsIdentity hands out an Entra token per scope, recording the asks.
type devOpsIdentity struct{ scopes *[]string }

func (d devOpsIdentity) AzureToken(_ context.Context, scope string) (auth.Token, error) {
	*d.scopes = append(*d.scopes, scope)
	return auth.Token{Value: "entra.devops-app", ExpiresAt: time.Now().Add(time.Hour)}, nil
}

func (devOpsIdentity) GCPToken(context.Context) (auth.Token, error) { return auth.Token{}, nil }

// TestAzureDevOpsWithWorkloadIdentity: without a token, the identity's
// Entra token for Azure DevOps (its application id's scope) is the basic
// auth password of every call, fetched once per delivery; a Secret's
// token wins over the identity, as in Flux.
func TestAzureDevOpsWithWorkloadIdentity(t *testing.T) {
	api := hostAPI{
		post:       regexp.MustCompile(`^/org/proj/_apis/git/repositories/app/commits/(` + sha1Hex + `)/statuses$`),
		get:        regexp.MustCompile(`^/org/proj/_apis/git/repositories/app/commits/(` + sha1Hex + `)/statuses$`),
		authorized: basicAuthIs("", "entra.devops-app"),
		required:   []string{"state", "context"},
		key:        "context",
		list: func(w http.ResponseWriter, _ *http.Request, stored []map[string]any) {
			writeJSON(w, http.StatusOK, map[string]any{"count": len(stored), "value": append([]map[string]any{}, stored...)})
		},
	}
	f := newFakeHost(t, api)
	var scopes []string
	n, err := New(notifier.Options{Type: "azuredevops", Address: f.srv.URL + "/org/proj/_git/app", CommitStatus: key,
		HTTPClient: f.srv.Client(), ServiceAccountName: "notify", Identity: devOpsIdentity{&scopes}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Post(context.Background(), kustomizationEvent(events.SeverityInfo, "ReconciliationSucceeded")); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	if len(f.posts()) != 1 || f.callCount() != 2 {
		t.Errorf("%d calls, %d posts; want a read and a post", f.callCount(), len(f.posts()))
	}
	if len(scopes) != 1 || scopes[0] != "499b84ac-1321-427f-aa17-267ca6975798/.default" {
		t.Errorf("scopes asked = %q, want Azure DevOps' once", scopes)
	}

	scopes = nil
	n, _ = New(notifier.Options{Type: "azuredevops", Address: f.srv.URL + "/org/proj/_git/app", CommitStatus: key,
		HTTPClient: f.srv.Client(), Token: "pat-token", Identity: devOpsIdentity{&scopes}})
	err = n.Post(context.Background(), kustomizationEvent(events.SeverityError, "HealthCheckFailed"))
	if err == nil || len(scopes) != 0 {
		t.Errorf("with a token: err = %v, identity asked %q; want the token sent (and refused by this host)", err, scopes)
	}
}
