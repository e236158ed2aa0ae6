package eventserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/auth"
	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/notification/notifier/bus"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// pubsubWIP is the workload identity provider the tests' ServiceAccounts
// name (gcp.auth.fluxcd.io/workload-identity-provider).
const pubsubWIP = "projects/123456789/locations/global/workloadIdentityPools/flux/providers/weir"

// useGooglePubSub starts the Google fake (STS, IAM Credentials, the
// metadata server) for internal/auth/gcp's Default provider and a TLS
// Pub/Sub fake with the topic weir-project/flux-events, which every
// Pub/Sub client reaches until the test ends.
func useGooglePubSub(t *testing.T) (*gcpfake.Server, *gcpfake.PubSub) {
	t.Helper()
	google := gcpfake.Start(t, gcpfake.Options{})
	google.Install(t)
	t.Setenv("PUBSUB_EMULATOR_HOST", "")
	pubsub := gcpfake.StartPubSub(t)
	pubsub.AddTopic("weir-project", "flux-events")
	saved := bus.PubSubClientOptions
	bus.PubSubClientOptions = pubsub.ClientOptions()
	t.Cleanup(func() { bus.PubSubClientOptions = saved })
	return google, pubsub
}

// TestGooglePubSubWorkloadIdentityThroughAlert sends a Kustomization's
// event through two Alerts to two googlepubsub Providers naming two
// ServiceAccounts of the real API server. notify-gke is annotated with a
// Google service account: its token (audience the GKE workload identity
// pool) is exchanged at Google STS for the cluster's identity namespace,
// then impersonates that account. notify-wif names a workload identity
// provider: its token (audience the provider) is exchanged at STS and the
// federated token publishes itself. Pub/Sub sees each identity's bearer
// token and the event as the message's data, with the Secret's headers as
// attributes. A second event reuses the cached tokens: two STS exchanges
// and one impersonation in all.
func TestGooglePubSubWorkloadIdentityThroughAlert(t *testing.T) {
	f := newFixture(t)
	google, pubsub := useGooglePubSub(t)

	const email, wip = "notifier@weir-project.iam.gserviceaccount.com", pubsubWIP
	wifPrincipal := satoken.ServiceAccount(f.ns, "notify-wif")
	pubsub.Accept(gcpfake.ImpersonatedToken(email), email)
	pubsub.Accept(gcpfake.FederatedToken(wifPrincipal), wifPrincipal)
	f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "notify-gke",
		Annotations: map[string]string{authgcp.ServiceAccountAnnotation: email}}})
	f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "notify-wif",
		Annotations: map[string]string{authgcp.WorkloadIdentityProviderAnnotation: wip}}})
	f.secret(t, "pubsub-headers", map[string]string{"headers": "cluster: prod-eu\nteam: platform\n"})
	apps := []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	provider := func(name, sa string, secret *meta.LocalObjectReference) {
		f.provider(t, name, notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GooglePubSubProvider,
			Address: "weir-project", Channel: "flux-events", ServiceAccountName: sa, SecretRef: secret})
		f.alert(t, name, func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name, s.EventSources = name, apps })
	}
	provider("p-gke", "notify-gke", &meta.LocalObjectReference{Name: "pubsub-headers"})
	provider("p-wif", "notify-wif", nil)
	logs := &logBuffer{}
	s := newLoggingServerWith(t, logs, Options{Auth: &auth.Settings{ObjectLevel: true, Client: f.env.Client, Cache: auth.NewCache(10, time.Hour)}})

	for _, sha := range []string{commitA, commitB} {
		if code := sendEvent(t, s, kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", sha, nil)); code != http.StatusAccepted {
			t.Fatalf("code = %d", code)
		}
	}
	publishes := pubsub.Publishes()
	if len(publishes) != 4 {
		t.Fatalf("Pub/Sub got %d publishes, want 4 (two events, two Providers): %+v; logs:\n%s", len(publishes), publishes, logs.String())
	}
	seen := map[string]int{}
	for _, p := range publishes {
		if p.Topic != "projects/weir-project/topics/flux-events" || len(p.Messages) != 1 {
			t.Fatalf("publish %+v", p)
		}
		seen[p.Bearer]++
		var e events.Event
		if err := json.Unmarshal(p.Messages[0].Data, &e); err != nil || e.InvolvedObject.Name != "apps" || e.Reason != "ReconciliationSucceeded" {
			t.Errorf("message data %s is not the event (%v)", p.Messages[0].Data, err)
		}
		var want map[string]string
		if p.Bearer == email {
			want = map[string]string{"cluster": "prod-eu", "team": "platform"}
		}
		if d := cmp.Diff(want, p.Messages[0].Attributes); d != "" {
			t.Errorf("attributes of %s's message (-want +got):\n%s", p.Bearer, d)
		}
	}
	if seen[email] != 2 || seen[wifPrincipal] != 2 {
		t.Errorf("publishes by identity %v, want two each for %s and %s", seen, email, wifPrincipal)
	}

	var exchanges []string
	for _, r := range google.Requests() {
		if r.Path != "/v1/token" {
			continue
		}
		exchanges = append(exchanges, r.Subject.Subject)
		wantAudience, wantToken := google.IdentityNamespace(), google.WorkloadIdentityPool()
		if r.Subject.Subject == wifPrincipal {
			wantAudience, wantToken = "//iam.googleapis.com/"+wip, "//iam.googleapis.com/"+wip
		}
		if r.Status != 200 || r.Form.Get("audience") != wantAudience || !r.Subject.HasAudience(wantToken) {
			t.Errorf("STS exchange of %s: status %d, audience %q, token audiences %q; want %q and %q",
				r.Subject.Subject, r.Status, r.Form.Get("audience"), r.Subject.Audience, wantAudience, wantToken)
		}
	}
	if len(exchanges) != 2 {
		t.Errorf("STS exchanges %q, want one per ServiceAccount, then cached", exchanges)
	}
	if n := google.Count("/v1/projects/-/serviceAccounts/" + email + ":generateAccessToken"); n != 1 {
		t.Errorf("%d impersonations of %s, want 1", n, email)
	}
	if strings.Contains(logs.String(), "ya29.") {
		t.Errorf("a token is in the logs:\n%s", logs.String())
	}

	// The gate off: no token is asked for and nothing is published.
	gated := newLoggingServerWith(t, logs, Options{Auth: &auth.Settings{Client: f.env.Client}})
	if code := sendEvent(t, gated, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitA, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	if want := "getting a Google access token for Pub/Sub: ObjectLevelWorkloadIdentity feature gate is not enabled"; !strings.Contains(logs.String(), want) {
		t.Errorf("the logs lack %q:\n%s", want, logs.String())
	}
	for _, p := range pubsub.Publishes()[len(publishes):] {
		if p.Code == 0 {
			t.Errorf("published with the gate off: %+v", p)
		}
	}
}
