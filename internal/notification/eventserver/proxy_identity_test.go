package eventserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
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
	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// fakeDevOps speaks the two calls of Azure DevOps' Git statuses API a
// commit status needs (list a commit's latest statuses, add one) and
// takes only basic auth whose password is token, as Azure DevOps takes an
// Entra access token.
type fakeDevOps struct {
	srv   *httptest.Server
	token string
	posts reqlog.Log[string] // each posted status's state
}

func newFakeDevOps(t *testing.T, token string) *fakeDevOps {
	t.Helper()
	d := &fakeDevOps{token: token}
	const statuses = "/org/proj/_apis/git/repositories/app/commits/{sha}/statuses"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+statuses, func(w http.ResponseWriter, r *http.Request) {
		if d.authorized(w, r) {
			writeJSONAnswer(w, http.StatusOK, map[string]any{"count": 0, "value": []any{}})
		}
	})
	mux.HandleFunc("POST "+statuses, func(w http.ResponseWriter, r *http.Request) {
		if !d.authorized(w, r) {
			return
		}
		var s struct {
			State string `json:"state"`
		}
		if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.posts.Add(s.State)
		writeJSONAnswer(w, http.StatusCreated, s)
	})
	d.srv = httptest.NewServer(mux)
	t.Cleanup(d.srv.Close)
	return d
}

func (d *fakeDevOps) authorized(w http.ResponseWriter, r *http.Request) bool {
	if user, pass, ok := r.BasicAuth(); !ok || user != "" || pass != d.token {
		http.Error(w, "TF400813: the user is not authorized", http.StatusUnauthorized)
		return false
	}
	return true
}

// TestProviderProxyCarriesTokenExchanges: a Provider with
// spec.serviceAccountName and spec.proxySecretRef sends its token
// exchanges through its proxy, as Flux does, not only its delivery. An
// azuredevops Provider's Entra client assertion goes through the proxy's
// tunnel, then its commit status calls through the proxy; a googlepubsub
// Provider's Google STS exchange goes through the proxy (its publish is
// gRPC, which takes no HTTP proxy). A second event is served from the
// token cache: only the delivery crosses the proxy. With a wrong proxy
// password the event fails naming the exchange and the proxy's 407, and
// neither password nor token is logged.
func TestProviderProxyCarriesTokenExchanges(t *testing.T) {
	f := newFixture(t)
	entra := azurefake.Start(t)
	entra.Install(t, nil)
	google, pubsub := useGooglePubSub(t)

	const (
		tenant        = "72f988bf-86f1-41af-91ab-2d7cd011db47"
		proxyPassword = "proxy-s3cret"
		wrongPassword = "not-the-proxy-s3cret"
	)
	clients := map[string]string{"devops-good": "11111111-1111-1111-1111-111111111111", "devops-bad": "22222222-2222-2222-2222-222222222222"}
	devops := newFakeDevOps(t, azurefake.AccessToken(clients["devops-good"], authazure.ScopeDevOps))
	for sa, client := range clients {
		f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa,
			Annotations: map[string]string{authazure.TenantIDAnnotation: tenant, authazure.ClientIDAnnotation: client}}})
	}
	for _, sa := range []string{"pubsub-good", "pubsub-bad"} {
		f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa,
			Annotations: map[string]string{authgcp.WorkloadIdentityProviderAnnotation: pubsubWIP}}})
	}
	pubsub.Accept(gcpfake.FederatedToken(satoken.ServiceAccount(f.ns, "pubsub-good")), "pubsub-good")

	// One proxy per Provider, so that each one's record is its own; all
	// take only the right password and tunnel CONNECTs to Entra.
	apps := []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	proxies := map[string]*awsfake.Proxy{}
	for _, name := range []string{"devops-good", "devops-bad", "pubsub-good", "pubsub-bad"} {
		proxies[name] = awsfake.NewProxy(t, awsfake.ProxyOptions{Tunnel: entra.Addr(), Username: "weir", Password: proxyPassword})
		password := proxyPassword
		if strings.HasSuffix(name, "-bad") {
			password = wrongPassword
		}
		f.secret(t, name+"-proxy", map[string]string{"address": proxies[name].URL, "username": "weir", "password": password})
		spec := notificationv1beta3.ProviderSpec{Type: notificationv1beta3.AzureDevOpsProvider,
			Address: devops.srv.URL + "/org/proj/_git/app", ServiceAccountName: name,
			ProxySecretRef: &meta.LocalObjectReference{Name: name + "-proxy"}}
		if strings.HasPrefix(name, "pubsub") {
			spec.Type, spec.Address, spec.Channel = notificationv1beta3.GooglePubSubProvider, "weir-project", "flux-events"
		}
		f.provider(t, name, spec)
		f.alert(t, name, func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name, s.EventSources = name, apps })
	}
	logs := &logBuffer{}
	s := newLoggingServerWith(t, logs, Options{Auth: &auth.Settings{ObjectLevel: true, Client: f.env.Client, Cache: auth.NewCache(10, time.Hour)}})

	if code := sendEvent(t, s, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitA, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	entraTunnel, devopsHost, googleHost := "CONNECT "+entra.Addr(), devops.srv.Listener.Addr().String(), google.Host
	// MSAL first asks login.microsoftonline.com for the authority's
	// metadata (instance discovery), then the token endpoint.
	seen := proxies["devops-good"].Seen()
	first := slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "CONNECT ") })
	if !slices.Contains(seen, entraTunnel) || first < 0 || slices.Index(seen, devopsHost) < first ||
		strings.Contains(strings.Join(seen, ","), "refused") {
		t.Errorf("through devops-good's proxy %q, want the Entra exchange (%s), then the delivery (%s)", seen, entraTunnel, devopsHost)
	}
	if got := devops.posts.All(); len(got) != 1 || got[0] != "error" {
		t.Errorf("Azure DevOps got statuses %q, want one error, posted with the Entra token; logs:\n%s", got, logs.String())
	}
	if seen := proxies["pubsub-good"].Seen(); !slices.Contains(seen, googleHost) {
		t.Errorf("through pubsub-good's proxy %q, want the Google STS exchange (%s)", seen, googleHost)
	}
	if n := len(pubsub.Publishes()); n == 0 || pubsub.Publishes()[0].Bearer != "pubsub-good" {
		t.Errorf("Pub/Sub publishes %+v, want pubsub-good's", pubsub.Publishes())
	}
	assertions := map[string]string{}
	for _, r := range entra.Requests() {
		if r.Assertion != nil {
			assertions[r.Form.Get("client_id")] = r.Assertion.Subject
		}
	}
	if assertions[clients["devops-good"]] != satoken.ServiceAccount(f.ns, "devops-good") {
		t.Errorf("Entra's client assertions %v, want devops-good's for its client", assertions)
	}
	if _, ok := assertions[clients["devops-bad"]]; ok {
		t.Errorf("devops-bad's assertion reached Entra past a proxy that refused it")
	}

	// Refused by the proxy: each names its exchange and the 407, the
	// tunnel's (Entra over TLS) and the plain answer's (Google STS, on
	// 127.0.0.1 over HTTP), and no secret.
	out := logs.String()
	for _, want := range []string{
		"getting an Entra token for Azure DevOps: failed to create access token for serviceaccount/" + f.ns + "/devops-bad (Entra ID token endpoint",
		"the proxy refused to tunnel to login.microsoftonline.com:443: 407 Proxy Authentication Required",
		"getting a Google access token for Pub/Sub: failed to create access token for serviceaccount/" + f.ns + "/pubsub-bad (Google STS): oauth2/google: status code 407",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the logs lack %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{proxyPassword, wrongPassword, "entra.", "ya29."} {
		if strings.Contains(out, secret) {
			t.Errorf("%q is in the logs:\n%s", secret, out)
		}
	}

	// A second event: the tokens are cached, only the delivery is proxied.
	before := len(proxies["devops-good"].Seen())
	if code := sendEvent(t, s, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitB, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	if again := proxies["devops-good"].Seen()[before:]; slices.ContainsFunc(again, func(s string) bool { return strings.HasPrefix(s, "CONNECT ") }) ||
		!slices.Contains(again, devopsHost) {
		t.Errorf("the second event's way through the proxy %q, want the delivery only", again)
	}
	if got := devops.posts.All(); len(got) != 2 || got[1] != "error" {
		t.Errorf("Azure DevOps got statuses %q, want one per commit", got)
	}
}
