package kustomization

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/offline"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/gitrepository"
)

// The tests run the GitRepository and Kustomization reconcilers against a
// real control plane with a kwok node, so Deployments become Available.
// --requeue-dependency is an hour: a dependent that becomes ready in these
// tests did so because the watches queued it, not because a timer fired.
//
// The cloud SDKs SOPS uses are kept off the network (cloudfake/offline):
// the key-service tests reach only their fakes.
func TestMain(m *testing.M) {
	if _, err := offline.Apply(); err != nil {
		panic(err)
	}
	testenv.Main(m, func(o *testenv.Options) { o.Setup = startControllers })
}

func startControllers(ctx context.Context, env *testenv.Env) error {
	if err := mountControllerToken(); err != nil {
		return err
	}
	storage, err := testenv.StartArtifactStorage(ctx)
	if err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		git := &gitrepository.Reconciler{Deps: testenv.SourceDeps(mgr, storage)}
		if err := git.SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		r := newReconciler(mgr, Options{})
		mainReconciler = r
		if err := r.WatchHealth(mgr); err != nil {
			return err
		}
		return r.SetupWithManager(ctx, mgr, testenv.FastQueue)
	})
}

// The controller's own ServiceAccount, as the token mounted in its Pod
// names it (auth.ControllerTokenFile), and its --sops-vault-configmap,
// in its namespace: default.
var (
	controllerSA       = types.NamespacedName{Namespace: "default", Name: "weir-controller"}
	sopsVaultConfigMap = types.NamespacedName{Namespace: "default", Name: "sops-vault-config"}
)

// mountControllerToken writes the controller's token file; only its
// subject is read.
func mountControllerToken() error {
	dir, err := os.MkdirTemp("", "weir-controller-token-")
	if err != nil {
		return err
	}
	own, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "system:serviceaccount:" + controllerSA.Namespace + ":" + controllerSA.Name}).SignedString([]byte("test"))
	if err != nil {
		return err
	}
	auth.ControllerTokenFile = filepath.Join(dir, "token")
	return os.WriteFile(auth.ControllerTokenFile, []byte(own), 0o600)
}

// mainReconciler is the reconciler the tests' manager runs.
var mainReconciler *Reconciler

// newReconciler builds a reconciler as internal/app does, with test timings.
func newReconciler(mgr ctrl.Manager, opts Options) *Reconciler {
	if opts.RequeueDependency == 0 {
		opts.RequeueDependency = time.Hour
	}
	opts.HealthPollInterval = 200 * time.Millisecond
	opts.ConfigsSelector = labels.SelectorFromSet(labels.Set{"reconcile.fluxcd.io/watch": "Enabled"})
	opts.FollowProducedConfigs = true
	opts.SOPSVaultConfigMap = &sopsVaultConfigMap
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clients: &ClientFactory{
			Config: mgr.GetConfig(), Mapper: mgr.GetRESTMapper(), Scheme: mgr.GetScheme(), Reader: mgr.GetAPIReader(),
			KubeConfigIdentity: &auth.Settings{
				ObjectLevel: true, Client: countTokenRequests(mgr.GetClient()), Reader: mgr.GetAPIReader(),
				Cache: auth.NewCache(10, time.Hour),
			},
		},
		Events:  events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "test", ""), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
		Fetcher: &artifact.Fetcher{Retries: 1, Client: &http.Client{Timeout: 2 * time.Minute, Transport: gatedTransport{http.DefaultTransport}}},
		// The controller's identity only: the ObjectLevelWorkloadIdentity
		// gate is off.
		Identity: &auth.Settings{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(10, time.Hour)},
		Options:  opts,
		holdFor:  testHold,
	}
}

// fixture is one test's Git repository and GitRepository object.
type fixture struct {
	t    *testing.T
	env  *testenv.Env
	ns   string
	srv  *gitserver.Server
	repo *sourcev1.GitRepository
}

func newFixture(t *testing.T, files map[string]string) (*fixture, string) {
	t.Helper()
	env := testenv.Get(t)
	f := &fixture{t: t, env: env, ns: env.Namespace(t), srv: gitserver.New(t, gitserver.Options{})}
	f.srv.InitRepo(t, "fleet.git")
	sha := f.srv.Commit(t, "fleet.git", gitserver.Commit{Files: files, Message: "first"})
	f.repo = newGitRepository(f.ns, f.srv.HTTPURL("fleet.git"))
	env.Create(t, f.repo)
	f.waitSource("main@sha1:" + sha)
	return f, sha
}

func newGitRepository(ns, url string) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: url, Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
}

// push commits to the repository and makes the GitRepository fetch it.
func (f *fixture) push(c gitserver.Commit) string {
	f.t.Helper()
	sha := f.srv.Commit(f.t, "fleet.git", c)
	f.env.RequestReconcile(f.t, f.repo)
	f.waitSource("main@sha1:" + sha)
	return sha
}

func (f *fixture) waitSource(revision string) {
	f.t.Helper()
	f.env.WaitForReady(f.t, f.repo, func() (bool, string) {
		return f.repo.Status.Artifact != nil && f.repo.Status.Artifact.Revision == revision, "revision not stored yet"
	})
}

// kustomization returns a Kustomization of path in the fixture's namespace,
// built from its GitRepository, with prune on and a one-hour interval.
func (f *fixture) kustomization(name, path string, change func(*kustomizev1.KustomizationSpec)) *kustomizev1.Kustomization {
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef:       kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: f.repo.Name},
			Path:            path,
			Prune:           true,
			TargetNamespace: f.ns,
			Interval:        metav1.Duration{Duration: time.Hour},
			Timeout:         &metav1.Duration{Duration: 30 * time.Second},
		},
	}
	if change != nil {
		change(&k.Spec)
	}
	return k
}

// waitApplied waits until k is Ready at revision.
func (f *fixture) waitApplied(k *kustomizev1.Kustomization, revision string) {
	f.t.Helper()
	f.env.WaitForReady(f.t, k, func() (bool, string) {
		return k.Status.LastAppliedRevision == revision, "last applied " + k.Status.LastAppliedRevision
	})
}

// waitFailed waits until k's last attempt of revision failed with reason,
// and returns the Ready condition. Flux leaves observedGeneration alone on
// failure, so the generic testenv wait does not apply.
func (f *fixture) waitFailed(k *kustomizev1.Kustomization, revision, reason string) *metav1.Condition {
	f.t.Helper()
	return f.waitFailedWithin(k, revision, reason, testenv.DefaultTimeout)
}

// waitFailedWithin is waitFailed with a timeout of its own.
func (f *fixture) waitFailedWithin(k *kustomizev1.Kustomization, revision, reason string, timeout time.Duration) *metav1.Condition {
	f.t.Helper()
	var ready *metav1.Condition
	testenv.Eventually(f.t, timeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			return false, err.Error()
		}
		ready = conditions.Get(k, meta.ReadyCondition)
		if ready == nil {
			return false, "no Ready condition"
		}
		if revision != "" && k.Status.LastAttemptedRevision != revision {
			return false, "last attempted " + k.Status.LastAttemptedRevision
		}
		return ready.Status == metav1.ConditionFalse && ready.Reason == reason, ready.Reason + ": " + ready.Message
	})
	return ready
}

func (f *fixture) configMap(name string) *corev1.ConfigMap {
	f.t.Helper()
	var cm corev1.ConfigMap
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, &cm); err != nil {
		f.t.Fatalf("ConfigMap %s: %v", name, err)
	}
	return &cm
}

func (f *fixture) absent(name string) bool {
	err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, &corev1.ConfigMap{})
	return apierrors.IsNotFound(err)
}

// configMapYAML is a ConfigMap manifest with one key.
func configMapYAML(name, key, value string, annotations ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if len(annotations) > 0 {
		b.WriteString("  annotations:\n")
		for _, a := range annotations {
			k, v, _ := strings.Cut(a, "=")
			fmt.Fprintf(&b, "    %s: %q\n", k, v)
		}
	}
	fmt.Fprintf(&b, "data:\n  %s: %q\n", key, value)
	return b.String()
}

// inventoryIDs returns the ids in k's inventory.
func inventoryIDs(k *kustomizev1.Kustomization) []string {
	if k.Status.Inventory == nil {
		return nil
	}
	ids := make([]string, 0, len(k.Status.Inventory.Entries))
	for _, e := range k.Status.Inventory.Entries {
		ids = append(ids, e.ID)
	}
	return ids
}

func clientKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
