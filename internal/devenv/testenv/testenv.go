package testenv

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/config/crd"
	"github.com/weir-gitops/weir/internal/devenv/controlplane"
	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/scheme"
)

// Env is a running control plane with weir's CRDs installed.
type Env struct {
	ControlPlane *controlplane.ControlPlane
	Config       *rest.Config
	Scheme       *runtime.Scheme
	Client       client.Client
}

// Options configures Start.
type Options struct {
	// WithoutNode starts the API server alone (no controller manager,
	// scheduler or kwok node): enough for schema and storage tests.
	WithoutNode bool
	// SkipCRDs leaves weir's CRDs uninstalled.
	SkipCRDs bool
	// AuditPolicy, when set, is the API server's audit policy (YAML); the
	// log is at Env.ControlPlane.AuditLogPath().
	AuditPolicy string
	// Setup runs once the environment is up, before the tests, for example
	// to start controllers; ctx is cancelled when the tests are done.
	Setup func(ctx context.Context, env *Env) error
}

// Start launches a control plane and installs weir's CRDs. Stop it with
// Env.Stop.
func Start(ctx context.Context, opts Options) (*Env, error) {
	cp, err := controlplane.Start(ctx, controlplane.Options{WithoutNode: opts.WithoutNode, AuditPolicy: opts.AuditPolicy})
	if err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	env := &Env{ControlPlane: cp, Config: cp.RESTConfig()}
	if env.Scheme, err = scheme.New(); err != nil {
		cp.Stop()
		return nil, err
	}
	if env.Client, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
		cp.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	if !opts.SkipCRDs {
		if err := env.InstallCRDs(ctx); err != nil {
			cp.Stop()
			return nil, err
		}
	}
	return env, nil
}

// Stop ends every process of the control plane.
func (e *Env) Stop() { e.ControlPlane.Stop() }

// InstallCRDs applies weir's CRDs and waits until the API server serves them.
func (e *Env) InstallCRDs(ctx context.Context) error {
	return install.CRDs(ctx, e.Client, crd.Options{Version: "test"}, 30*time.Second)
}

// Namespace creates a namespace named after the test and deletes it when
// the test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	name := namespaceName(t.Name())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ctx := context.Background()
	if err := e.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := e.Client.Delete(context.Background(), ns); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName turns a test name into a unique DNS-1123 label.
func namespaceName(testName string) string {
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	return base + "-" + utilrand.String(6)
}

// shared is the environment Main started for the test package.
var shared *Env

// Main starts one environment for the test package, runs its tests and
// stops the environment, whatever the outcome. Use it from TestMain.
func Main(m *testing.M, opts ...func(*Options)) {
	os.Exit(run(m, opts))
}

// offlineClouds points the cloud SDKs' own discovery away from the
// link-local metadata addresses for the whole test process, unless a test
// already chose an endpoint: a test that reaches a cloud's default chain
// without its fake then fails at once on 127.0.0.1 instead of sending a
// request off the machine. Tests that fake a cloud set its endpoint with
// t.Setenv, which wins.
var offlineClouds = map[string]string{
	"GCE_METADATA_HOST":                 "127.0.0.1:9",
	"AWS_EC2_METADATA_DISABLED":         "true",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9",
	"IDENTITY_ENDPOINT":                 "http://127.0.0.1:9/msi/token",
	"IMDS_ENDPOINT":                     "http://127.0.0.1:9",
}

func run(m *testing.M, opts []func(*Options)) int {
	for k, v := range offlineClouds {
		if _, set := os.LookupEnv(k); !set {
			_ = os.Setenv(k, v)
		}
	}
	var o Options
	for _, f := range opts {
		f(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	env, err := Start(ctx, o)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	shared = env
	defer env.Stop()
	if o.Setup != nil {
		setupCtx, stop := context.WithCancel(context.Background())
		defer stop()
		if err := o.Setup(setupCtx, env); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: setup: %v\n", err)
			return 1
		}
	}
	return m.Run()
}

// APIServerOnly is an option for Main: no node, controller manager or
// scheduler.
func APIServerOnly(o *Options) { o.WithoutNode = true }

// Get returns the environment Main started.
func Get(t testing.TB) *Env {
	t.Helper()
	if shared == nil {
		t.Fatal("testenv.Main was not called from TestMain")
	}
	return shared
}
