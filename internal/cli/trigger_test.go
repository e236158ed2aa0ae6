package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/oidcissuer"
	"github.com/weir-gitops/weir/internal/notification/controller/receiver"
)

// receiverServer runs weir's Receiver reconciler and webhook server for the
// namespace ns only (other tests' Receivers have stand-in controllers), and
// returns the server's base URL.
func receiverServer(t *testing.T, ns string) string {
	t.Helper()
	env := testenv.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	if err := r.SetupWithManager(ctx, mgr, testenv.FastQueue); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	srv := httptest.NewServer(receiver.NewServer("", mgr.GetClient(), logr.Discard(), false).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTriggerReceiver calls weir's real receiver server with `weir trigger
// receiver` for each type the command signs for, and checks the
// GitRepository each Receiver names is asked to reconcile.
func TestTriggerReceiver(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	base := receiverServer(t, ns)
	iss := oidcissuer.Start(t)
	const token = "s3cr3t-token"
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: ns}, StringData: map[string]string{"token": token}})

	receiverFor := func(name, typ, repo string) {
		env.Create(t, &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: repo, Namespace: ns},
			Spec:       sourcev1.GitRepositorySpec{URL: "https://example.com/repo.git", Interval: metav1.Duration{Duration: time.Hour}},
		})
		r := &notificationv1.Receiver{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: notificationv1.ReceiverSpec{Type: typ, Resources: []notificationv1.ReceiverResource{{
				CrossNamespaceObjectReference: notificationv1.CrossNamespaceObjectReference{
					APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind, Name: repo}}}},
		}
		if typ == notificationv1.GenericOIDCReceiver {
			r.Spec.OIDCProviders = []notificationv1.OIDCProvider{{IssuerURL: iss.URL,
				Validations: []notificationv1.OIDCValidation{{Expression: `claims.repository == 'org/app'`, Message: "only org/app"}}}}
		} else {
			r.Spec.SecretRef = &meta.LocalObjectReference{Name: "token"}
		}
		env.Create(t, r)
		env.WaitForReady(t, r, nil)
	}
	receiverFor("generic", notificationv1.GenericReceiver, "generic-app")
	receiverFor("hmac", notificationv1.GenericHMACReceiver, "hmac-app")
	receiverFor("oidc", notificationv1.GenericOIDCReceiver, "oidc-app")
	receiverFor("oidc-actions", notificationv1.GenericOIDCReceiver, "actions-app")

	// A GitHub Actions ID token endpoint: asked with the request token for
	// the audience, it answers with a token from the issuer.
	var asked atomic.Value
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(fmt.Sprintf("%s %s audience=%s auth=%q", r.Method, r.URL.Path, r.URL.Query().Get("audience"), r.Header.Get("Authorization")))
		tok := iss.Sign(t, iss.Claims(r.URL.Query().Get("audience"), map[string]any{"repository": "org/app"}))
		fmt.Fprintf(w, `{"count":1,"value":%q}`, tok)
	}))
	defer actions.Close()
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_URL", actions.URL+"/_apis/token?api-version=2.0")
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "runtime-token")

	oidcToken := iss.Sign(t, iss.Claims("notification-controller", map[string]any{"repository": "org/app"}))
	denied := iss.Sign(t, iss.Claims("notification-controller", map[string]any{"repository": "evil/app"}))
	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
		repo   string // annotated after the step
	}{
		{"generic", []string{"generic", "--token", token}, 0, "trigger/generic.golden", "generic-app"},
		{"generic-hmac", []string{"hmac", "--type=generic-hmac", "--token", token, "--payload", `{"image":"ghcr.io/org/app:v1"}`}, 0, "trigger/hmac.golden", "hmac-app"},
		{"generic-hmac wrong token", []string{"hmac", "--type=generic-hmac", "--token", "wrong", "--retries=1", "--retry-delay=10ms"},
			1, "trigger/wrong-token.golden", ""},
		{"generic-oidc token", []string{"oidc", "--type=generic-oidc", "--oidc-token", oidcToken}, 0, "trigger/oidc.golden", "oidc-app"},
		{"generic-oidc refused", []string{"oidc", "--type=generic-oidc", "--oidc-token", denied}, 1, "trigger/oidc-denied.golden", ""},
		{"generic-oidc from actions", []string{"oidc-actions", "--type=generic-oidc", "--oidc-provider=github"}, 0, "trigger/oidc-actions.golden", "actions-app"},
	}
	for _, s := range steps {
		res := weir(t, append(append([]string{"trigger", "receiver"}, s.args...), "--url", base+"/", "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit %d, want %d\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		for _, secret := range []string{token, oidcToken, denied, "runtime-token"} {
			if strings.Contains(res.Output(), secret) {
				t.Errorf("%s: output shows a secret:\n%s", s.name, res.Output())
			}
		}
		assertGolden(t, s.golden, strings.ReplaceAll(res.Output(), base, "URL"), ns)
		if s.repo != "" {
			repo := &sourcev1.GitRepository{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: s.repo}, repo); err != nil {
				t.Fatal(err)
			}
			if repo.Annotations[meta.ReconcileRequestAnnotation] == "" {
				t.Errorf("%s: %s not asked to reconcile", s.name, s.repo)
			}
		}
	}
	if got, want := asked.Load(), `GET /_apis/token audience=notification-controller auth="bearer runtime-token"`; got != want {
		t.Errorf("ID token request = %v, want %s", got, want)
	}
}

// TestTriggerReceiverRetries retries what a Receiver answers while it is
// not served yet, and gives up after --retries.
func TestTriggerReceiverRetries(t *testing.T) {
	var calls atomic.Int32
	var signature atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		signature.Store(r.Header.Get("X-Signature") + " " + r.Header.Get("Content-Type"))
		if calls.Add(1) < 3 {
			http.Error(w, "receiver is not ready", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	res := weir(t, "trigger", "receiver", "app", "--type=generic-hmac", "--token=retry-token", "--payload={}",
		"--url", srv.URL, "--retries=3", "--retry-delay=1ms", "-n", "apps")
	if res.Code != 0 {
		t.Errorf("exit %d\n%s", res.Code, res.Stderr)
	}
	assertGolden(t, "trigger/retries.golden", strings.ReplaceAll(res.Output(), srv.URL, "URL"))
	// HMAC-SHA256 of "{}" keyed with "retry-token" (openssl dgst -sha256 -hmac retry-token).
	if got, want := signature.Load(), "sha256=859efb368ed2ff2807e36e905e4c9ae25f11a9eeb12f02d986f9a515bf42c1fc application/json"; got != want {
		t.Errorf("headers sent: %v, want %s", got, want)
	}
}

func TestTriggerReceiverFlags(t *testing.T) {
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"r", "--token=t"}, "--url is required"},
		{[]string{"r", "--url=http://x", "--type=github", "--token=t"}, `invalid --type "github", must be one of: generic, generic-hmac, generic-oidc`},
		{[]string{"r", "--url=http://x"}, "--token is required for --type=generic"},
		{[]string{"r", "--url=http://x", "--token=t", "--oidc-token=x"}, "--oidc-provider, --oidc-token and --oidc-audience can only be set for --type=generic-oidc"},
		{[]string{"r", "--url=http://x", "--type=generic-oidc", "--token=t"}, "--token must not be set for --type=generic-oidc, the Receiver of this type has no secret"},
		{[]string{"r", "--url=http://x", "--type=generic-oidc", "--oidc-provider=github", "--oidc-token=x"}, "--oidc-provider and --oidc-token are mutually exclusive"},
		{[]string{"r", "--url=http://x", "--type=generic-oidc", "--oidc-provider=gitlab"}, `invalid --oidc-provider "gitlab", must be one of: github, forgejo`},
		{[]string{"r", "--url=http://x", "--type=generic-oidc", "--oidc-audience=a"}, "--oidc-audience can only be set together with --oidc-provider"},
		{[]string{"r", "--url=http://x", "--type=generic-oidc"}, "no OIDC token provided: set --oidc-provider, --oidc-token or the FLUX_TRIGGER_RECEIVER_OIDC_TOKEN environment variable"},
	} {
		res := weir(t, append([]string{"trigger", "receiver"}, s.args...)...)
		if want := "✗ " + s.want + "\n"; res.Code != 1 || res.Stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, want)
		}
	}
}
