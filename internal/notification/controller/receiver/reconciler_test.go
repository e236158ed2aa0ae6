package receiver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// mgrClient is the client of the manager running the reconciler: it reads
// Receivers from the cache holding the webhook path index, as the Server
// does in weir-controller.
var mgrClient client.Client

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

// startController runs the Receiver reconciler in a manager.
func startController(ctx context.Context, env *testenv.Env) error {
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		mgrClient = mgr.GetClient()
		r := &Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Events: events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "test", ""), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
		}
		return r.SetupWithManager(ctx, mgr, testenv.FastQueue)
	})
}

// fixture is a namespace in the shared environment.
type fixture struct {
	env *testenv.Env
	ns  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.Get(t)
	return &fixture{env: env, ns: env.Namespace(t)}
}

// secret creates the Secret named "token" holding data.
func (f *fixture) secret(t *testing.T, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: f.ns}, StringData: data}
	f.env.Create(t, s)
	return s
}

// receiver is a Receiver of type typ using Secret "token", for resources
// (GitRepository "app" when none are given).
func (f *fixture) receiver(name, typ string, resources ...notificationv1.ReceiverResource) *notificationv1.Receiver {
	if len(resources) == 0 {
		resources = []notificationv1.ReceiverResource{named("app")}
	}
	return &notificationv1.Receiver{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: notificationv1.ReceiverSpec{
			Type: typ, SecretRef: &meta.LocalObjectReference{Name: "token"}, Resources: resources,
			Interval: &metav1.Duration{Duration: time.Hour},
		},
	}
}

// expectedPath is Flux's documented /hook/sha256sum(token+name+namespace),
// computed without the code under test.
func expectedPath(token, name, namespace string) string {
	sum := sha256.Sum256([]byte(token + name + namespace))
	return "/hook/" + hex.EncodeToString(sum[:])
}

func TestReadyReceiverPublishesPath(t *testing.T) {
	f := newFixture(t)
	f.secret(t, map[string]string{"token": "s3cr3t"})
	obj := f.receiver("hooks", notificationv1.GenericReceiver)
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)

	want := expectedPath("s3cr3t", "hooks", f.ns)
	if obj.Status.WebhookPath != want {
		t.Errorf("webhookPath = %q, want %q", obj.Status.WebhookPath, want)
	}
	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready.Reason != meta.SucceededReason || ready.Message != "Receiver initialized for path: "+want {
		t.Errorf("Ready = %s: %q", ready.Reason, ready.Message)
	}
	if obj.Status.ObservedGeneration != obj.Generation {
		t.Errorf("observedGeneration = %d, generation %d", obj.Status.ObservedGeneration, obj.Generation)
	}
	f.env.AssertEvent(t, obj, "Succeeded", "Reconciliation finished, next run in 1h0m0s")
}

func TestTokenFailures(t *testing.T) {
	tests := []struct {
		name    string
		secret  map[string]string // nil: no Secret
		message func(ns string) string
	}{
		{"missing secret", nil, func(ns string) string {
			return fmt.Sprintf(`unable to read token from secret '%s/token' error: Secret "token" not found`, ns)
		}},
		{"secret without token key", map[string]string{"password": "x"}, func(ns string) string {
			return fmt.Sprintf("invalid '%s/token' secret data: required field 'token'", ns)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.secret != nil {
				f.secret(t, tt.secret)
			}
			obj := f.receiver("hooks", notificationv1.GitHubReceiver)
			f.env.Create(t, obj)
			ready := f.env.WaitForFailure(t, obj, notificationv1.TokenNotFoundReason)
			if ready.Message != tt.message(f.ns) {
				t.Errorf("Ready message = %q, want %q", ready.Message, tt.message(f.ns))
			}
			rec := conditions.Get(obj, meta.ReconcilingCondition)
			if rec == nil || rec.Reason != meta.ProgressingWithRetryReason {
				t.Errorf("Reconciling = %+v, want ProgressingWithRetry", rec)
			}
			f.env.AssertEvent(t, obj, "Failed", tt.message(f.ns))
		})
	}
}

func TestTokenChangeMovesPath(t *testing.T) {
	f := newFixture(t)
	s := f.secret(t, map[string]string{"token": "first"})
	obj := f.receiver("hooks", notificationv1.GenericReceiver)
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)

	f.env.Update(t, s, func() { s.StringData = map[string]string{"token": "second"} })
	f.env.RequestReconcile(t, obj)
	want := expectedPath("second", "hooks", f.ns)
	f.env.WaitForReady(t, obj, func() (bool, string) {
		return obj.Status.WebhookPath == want, "path still " + obj.Status.WebhookPath
	})
}

func TestInvalidOIDCProviderStalls(t *testing.T) {
	f := newFixture(t)
	obj := f.oidcReceiver("hooks", notificationv1.OIDCProvider{
		IssuerURL:   "https://token.actions.githubusercontent.com",
		Validations: []notificationv1.OIDCValidation{{Expression: "claims.repository ==", Message: "wrong repository"}},
	})
	f.env.Create(t, obj)
	ready := f.env.WaitForFailure(t, obj, meta.InvalidCELExpressionReason)
	if want := `oidcProviders[0] (issuerURL="https://token.actions.githubusercontent.com"): invalid expression for validation "wrong repository"`; !strings.HasPrefix(ready.Message, want) {
		t.Errorf("Ready message = %q, want prefix %q", ready.Message, want)
	}
	if !conditions.IsTrue(obj, meta.StalledCondition) {
		t.Error("not Stalled")
	}
	if obj.Status.WebhookPath != "" {
		t.Errorf("webhookPath = %q for an invalid spec", obj.Status.WebhookPath)
	}
}

func TestGCRSecretNeedsEmailAndAudience(t *testing.T) {
	f := newFixture(t)
	f.secret(t, map[string]string{"token": "t", "email": "push@project.iam.gserviceaccount.com"})
	obj := f.receiver("hooks", notificationv1.GCRReceiver)
	f.env.Create(t, obj)
	ready := f.env.WaitForFailure(t, obj, notificationv1.TokenNotFoundReason)
	if want := fmt.Sprintf("invalid '%s/token' secret data: required field 'audience' for GCR receiver", f.ns); ready.Message != want {
		t.Errorf("Ready message = %q, want %q", ready.Message, want)
	}
}

// oidcReceiver is a generic-oidc Receiver trusting providers, for
// resources (GitRepository "app" when none are given).
func (f *fixture) oidcReceiver(name string, provider notificationv1.OIDCProvider, resources ...notificationv1.ReceiverResource) *notificationv1.Receiver {
	obj := f.receiver(name, notificationv1.GenericOIDCReceiver, resources...)
	obj.Spec.SecretRef = nil
	obj.Spec.OIDCProviders = []notificationv1.OIDCProvider{provider}
	return obj
}

// gitRepository is a GitRepository for the Receiver to annotate; no source
// controller runs, the annotation is all that is checked.
func (f *fixture) gitRepository(t *testing.T, name string, labels map[string]string) *sourcev1.GitRepository {
	t.Helper()
	r := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels},
		Spec:       sourcev1.GitRepositorySpec{URL: "https://example.com/repo.git", Interval: metav1.Duration{Duration: time.Hour}},
	}
	f.env.Create(t, r)
	return r
}
