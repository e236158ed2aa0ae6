package eventserver

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/auth"
	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/eventhubfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/notification/notifier/bus"
)

// TestAzureEventHubWorkloadIdentityThroughAlert sends a Kustomization's
// event through two Alerts to two azureeventhub Providers that name two
// ServiceAccounts of the real API server, mapped to two Entra
// applications: each ServiceAccount's token (audience
// api://AzureADTokenExchange) is its application's client assertion for
// Event Hubs' scope, and the hub sees each application's token on $cbs as
// a JWT. A second event reuses the cached tokens. With the gate off, or
// with a token beside the ServiceAccount, the delivery fails with Flux's
// words.
func TestAzureEventHubWorkloadIdentityThroughAlert(t *testing.T) {
	f := newFixture(t)
	entra := azurefake.Start(t)
	entra.Install(t, nil)

	const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	clients := map[string]string{"notify-a": "11111111-1111-1111-1111-111111111111", "notify-b": "22222222-2222-2222-2222-222222222222"}
	bearers := map[string]string{}
	for sa, client := range clients {
		bearers[azurefake.AccessToken(client, bus.ScopeEventHubs)] = client
		f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa,
			Annotations: map[string]string{authazure.TenantIDAnnotation: tenant, authazure.ClientIDAnnotation: client}}})
	}
	hub := eventhubfake.Start(t, eventhubfake.Credentials{Bearers: bearers})
	f.secret(t, "hub-ca", map[string]string{"ca.crt": string(hub.CAPEM())})
	f.secret(t, "hub-token", map[string]string{"token": "a-static-jwt"})
	apps := []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	provider := func(name, sa string, secret *meta.LocalObjectReference) {
		f.provider(t, name, notificationv1beta3.ProviderSpec{Type: notificationv1beta3.AzureEventHubProvider,
			Address: "flux", Channel: hub.Addr, ServiceAccountName: sa, SecretRef: secret,
			CertSecretRef: &meta.LocalObjectReference{Name: "hub-ca"}})
		f.alert(t, name, func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name, s.EventSources = name, apps })
	}
	provider("p-a", "notify-a", nil)
	provider("p-b", "notify-b", nil)
	logs := &logBuffer{}
	settings := &auth.Settings{ObjectLevel: true, Client: f.env.Client, Cache: auth.NewCache(10, time.Hour)}
	s := newLoggingServerWith(t, logs, Options{Auth: settings})

	for _, sha := range []string{commitA, commitB} {
		if code := sendEvent(t, s, kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", sha, nil)); code != http.StatusAccepted {
			t.Fatalf("code = %d", code)
		}
	}
	if n := len(hub.Messages()); n != 4 {
		t.Fatalf("hub got %d messages, want 4 (two events, two Providers); logs:\n%s", n, logs.String())
	}
	var principals []string
	for _, tok := range hub.Tokens() {
		if tok.Type != eventhubfake.TokenTypeJWT || tok.Status != 202 || tok.Audience != "amqps://"+hub.Addr+"/flux" {
			t.Errorf("put-token %+v", tok)
		}
		principals = append(principals, tok.Principal)
	}
	sort.Strings(principals)
	want := []string{clients["notify-a"], clients["notify-a"], clients["notify-b"], clients["notify-b"]}
	if strings.Join(principals, ",") != strings.Join(want, ",") {
		t.Errorf("the hub saw the tokens of %q, want each application's for each event", principals)
	}
	exchanges := 0
	for _, r := range entra.Requests() {
		if r.Assertion == nil {
			continue
		}
		exchanges++
		sa := map[string]string{clients["notify-a"]: "notify-a", clients["notify-b"]: "notify-b"}[r.Form.Get("client_id")]
		if r.Assertion.Subject != satoken.ServiceAccount(f.ns, sa) || !strings.Contains(r.Form.Get("scope"), bus.ScopeEventHubs) {
			t.Errorf("Entra got %s's assertion for client %s, scope %q", r.Assertion.Subject, r.Form.Get("client_id"), r.Form.Get("scope"))
		}
	}
	if exchanges != 2 {
		t.Errorf("%d Entra exchanges, want 2 (one per ServiceAccount, then cached)", exchanges)
	}
	if strings.Contains(logs.String(), "entra.") {
		t.Errorf("a token is in the logs:\n%s", logs.String())
	}

	// A token beside the ServiceAccount, and the gate off: refused.
	provider("p-both", "notify-a", &meta.LocalObjectReference{Name: "hub-token"})
	if code := sendEvent(t, s, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitA, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	gated := newLoggingServerWith(t, logs, Options{Auth: &auth.Settings{Client: f.env.Client}})
	if code := sendEvent(t, gated, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitB, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	for _, want := range []string{"serviceAccountName and jwt token authentication cannot be set at the same time",
		"getting an Entra token for Azure Event Hubs: ObjectLevelWorkloadIdentity feature gate is not enabled"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the logs lack %q:\n%s", want, logs.String())
		}
	}
}
