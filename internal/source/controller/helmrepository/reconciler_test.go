package helmrepository

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// The reconciler under test: its storage, its index cache, and an index
// size limit small enough for a test to exceed.
var (
	storage    *artifact.Storage
	indexCache = helmrepo.NewCache(helmrepo.CacheOptions{MaxSize: 50})
)

const indexLimit = 64 << 10

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

func startController(ctx context.Context, env *testenv.Env) (err error) {
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		deps := testenv.SourceDeps(mgr, storage)
		deps.Helm.Limits.MaxIndexSize = indexLimit
		deps.Helm.Cache = indexCache
		return (&Reconciler{Deps: deps}).SetupWithManager(mgr, testenv.FastQueue)
	})
}

// fluxExport is what `flux create source helm podinfo --url=<url> --export`
// writes: url and interval, no type, timeout or provider.
const fluxExport = `---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: %s
spec:
  interval: 1m0s
  url: %s
`

func fromFluxExport(t *testing.T, ns, url string) *sourcev1.HelmRepository {
	t.Helper()
	var obj sourcev1.HelmRepository
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(fluxExport, ns, url)), &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

func newRepo(ns, name, url string) *sourcev1.HelmRepository {
	return &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       sourcev1.HelmRepositorySpec{URL: url, Interval: metav1.Duration{Duration: 1 << 40}},
	}
}

func authSecret(ns, name, user, pass string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"username": user, "password": pass},
	}
}

func waitRevision(t *testing.T, env *testenv.Env, obj *sourcev1.HelmRepository, revision string) {
	t.Helper()
	env.WaitForReady(t, obj, func() (bool, string) {
		return obj.Status.Artifact != nil && obj.Status.Artifact.Revision == revision,
			fmt.Sprintf("artifact %+v, want revision %s", obj.Status.Artifact, revision)
	})
}

// storedIndex downloads the artifact and parses it as a HelmChart would.
func storedIndex(t *testing.T, a *meta.Artifact) map[string][]string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(p, testenv.DownloadArtifact(t, a), 0o600); err != nil {
		t.Fatal(err)
	}
	idx, err := helmrepo.LoadIndexFile(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, cvs := range idx.Entries {
		for _, cv := range cvs {
			out[name] = append(out[name], cv.Version)
		}
	}
	return out
}

func TestFluxExportedObjectBecomesReady(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.1.0", "6.1.0"))
	obj := fromFluxExport(t, ns, srv.URL())
	env.Create(t, obj)

	want := srv.IndexDigest(t)
	waitRevision(t, env, obj, want)
	msg := "stored artifact: revision '" + want + "'"
	if c := conditions.Get(obj, meta.ReadyCondition); c.Reason != meta.SucceededReason || c.Message != msg {
		t.Errorf("Ready = %s %q, want %q", c.Reason, c.Message, msg)
	}
	if c := conditions.Get(obj, sourcev1.ArtifactInStorageCondition); c == nil || c.Message != msg {
		t.Errorf("ArtifactInStorage = %+v", c)
	}
	a := obj.Status.Artifact
	if wantPath := "helmrepository/" + ns + "/podinfo/index-" + strings.TrimPrefix(want, "sha256:") + ".yaml"; a.Path != wantPath {
		t.Errorf("path %s, want %s", a.Path, wantPath)
	}
	if obj.Status.URL != a.URL || !controllerutil.ContainsFinalizer(obj, meta.Finalizer) {
		t.Errorf("status.url %q, finalizers %v", obj.Status.URL, obj.Finalizers)
	}
	if got := storedIndex(t, a); strings.Join(got["podinfo"], ",") != "6.1.0,6.0.0" {
		t.Errorf("stored index lists %v", got)
	}
	if idx, ok := indexCache.Get(a.Path); !ok || len(idx.Entries["podinfo"]) != 2 {
		t.Error("the new index is not in the cache under its artifact path")
	}
	env.AssertEvent(t, obj, "NewArtifact", newArtifactMessage(a, srv.URL()))
}

func TestUnchangedIndexIsNotDownloadedAgain(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{ETag: true})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	obj := newRepo(ns, "podinfo", srv.URL())
	env.Create(t, obj)
	first := srv.IndexDigest(t)
	waitRevision(t, env, obj, first)
	stored := obj.Status.Artifact.DeepCopy()
	sent := srv.Downloads("/index.yaml") // the controller's download, and servedDigest's

	for range 2 {
		env.RequestReconcile(t, obj)
		waitRevision(t, env, obj, first)
	}
	if got := srv.Downloads("/index.yaml"); got != sent {
		t.Errorf("index sent %d times after two unchanged reconciles, want %d", got, sent)
	}
	reqs := srv.Requests("/index.yaml")
	if last := reqs[len(reqs)-1]; last.Status != http.StatusNotModified || last.IfNoneMatch == "" {
		t.Errorf("last request %+v, want a 304 to If-None-Match", last)
	}
	if a := obj.Status.Artifact; a.Digest != stored.Digest || !a.LastUpdateTime.Equal(&stored.LastUpdateTime) {
		t.Errorf("artifact rewritten: %+v, was %+v", a, stored)
	}

	srv.AddChart(t, helmserver.NewChart("podinfo", "6.2.0", "6.2.0"))
	second := srv.IndexDigest(t)
	env.RequestReconcile(t, obj)
	waitRevision(t, env, obj, second)
	if got := storedIndex(t, obj.Status.Artifact); got["podinfo"][0] != "6.2.0" {
		t.Errorf("new index lists %v", got)
	}
	env.AssertEvent(t, obj, "NewArtifact", newArtifactMessage(obj.Status.Artifact, srv.URL()))
}

func TestCredentials(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	const user, pass, wrong = "helm", "right-password-value", "wrong-password-value"
	srv := helmserver.New(t, helmserver.Options{Username: user, Password: pass})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))

	good := newRepo(ns, "good", srv.URL())
	good.Spec.SecretRef = &meta.LocalObjectReference{Name: "good"}
	bad := newRepo(ns, "bad", srv.URL())
	bad.Spec.SecretRef = &meta.LocalObjectReference{Name: "bad"}
	missing := newRepo(ns, "missing", srv.URL())
	missing.Spec.SecretRef = &meta.LocalObjectReference{Name: "nowhere"}
	env.Create(t, authSecret(ns, "good", user, pass), authSecret(ns, "bad", user, wrong), good, bad, missing)

	waitRevision(t, env, good, srv.IndexDigest(t))
	ready := env.WaitForFailure(t, bad, sourcev1.AuthenticationFailedReason)
	if want := "failed to fetch Helm repository index: failed to fetch " + srv.URL() + "/index.yaml : 401 Unauthorized"; ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
	if c := conditions.Get(bad, sourcev1.FetchFailedCondition); c == nil || c.Reason != sourcev1.AuthenticationFailedReason {
		t.Errorf("FetchFailed = %+v", c)
	}
	ready = env.WaitForFailure(t, missing, sourcev1.AuthenticationFailedReason)
	if !strings.HasPrefix(ready.Message, "failed to get authentication secret '"+ns+"/nowhere'") {
		t.Errorf("message %q", ready.Message)
	}
	env.AssertEventPrefix(t, bad, sourcev1.AuthenticationFailedReason, "failed to fetch Helm repository index")
	var events corev1.EventList
	if err := env.Client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		if strings.Contains(ev.Message, pass) || strings.Contains(ev.Message, wrong) {
			t.Errorf("event leaks a password: %q", ev.Message)
		}
	}
	for _, o := range []*sourcev1.HelmRepository{good, bad, missing} {
		for _, c := range o.Status.Conditions {
			if strings.Contains(c.Message, pass) || strings.Contains(c.Message, wrong) {
				t.Errorf("%s condition %s leaks a password: %q", o.Name, c.Type, c.Message)
			}
		}
	}
}

func TestTLSWithCertSecretRef(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{TLS: true})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	trusted := newRepo(ns, "trusted", srv.URL())
	trusted.Spec.CertSecretRef = &meta.LocalObjectReference{Name: "ca"}
	untrusted := newRepo(ns, "untrusted", srv.URL())
	ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ca"}, Data: map[string][]byte{"ca.crt": srv.CAPEM()}}
	env.Create(t, ca, trusted, untrusted)

	waitRevision(t, env, trusted, srv.IndexDigest(t))
	ready := env.WaitForFailure(t, untrusted, meta.FailedReason)
	if !strings.Contains(ready.Message, "certificate") {
		t.Errorf("message %q, want a certificate error", ready.Message)
	}
}

func TestIndexOverLimitKeepsArtifact(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	obj := newRepo(ns, "podinfo", srv.URL())
	env.Create(t, obj)
	waitRevision(t, env, obj, srv.IndexDigest(t))
	kept := obj.Status.Artifact.DeepCopy()

	srv.WriteFile(t, "index.yaml", []byte("apiVersion: v1\nentries: {}\n# "+strings.Repeat("x", indexLimit)+"\n"))
	env.RequestReconcile(t, obj)
	ready := env.WaitForFailure(t, obj, meta.FailedReason)
	want := fmt.Sprintf("failed to fetch Helm repository index: index exceeds the maximum index file size of %d bytes (--helm-index-max-size)", indexLimit)
	if ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
	if a := obj.Status.Artifact; a == nil || a.Digest != kept.Digest {
		t.Fatalf("artifact %+v, want the previous one kept", a)
	}
	testenv.DownloadArtifact(t, obj.Status.Artifact)
	if !conditions.IsTrue(obj, sourcev1.ArtifactInStorageCondition) || !conditions.IsTrue(obj, sourcev1.FetchFailedCondition) {
		t.Errorf("conditions %+v", obj.Status.Conditions)
	}
}

func TestInvalidIndexAndURL(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	srv.WriteFile(t, "index.yaml", []byte("entries: {}\n"))
	noVersion := newRepo(ns, "no-version", srv.URL())
	ociURL := newRepo(ns, "oci-url", "oci://ghcr.io/stefanprodan/charts")
	env.Create(t, noVersion, ociURL)

	ready := env.WaitForFailure(t, noVersion, sourcev1.IndexationFailedReason)
	if want := "failed to load Helm repository from index YAML: no API version specified"; ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
	ready = env.WaitForFailure(t, ociURL, sourcev1.URLInvalidReason)
	if want := "invalid Helm repository URL: 'oci' URL scheme cannot be used with 'default' HelmRepository type"; ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
	if !conditions.IsTrue(ociURL, meta.StalledCondition) {
		t.Errorf("invalid URL does not stall: %+v", ociURL.Status.Conditions)
	}
}

func TestOCIRepositoryIsStatic(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	oci := newRepo(ns, "oci", "oci://ghcr.io/stefanprodan/charts")
	oci.Spec.Type = sourcev1.HelmRepositoryTypeOCI
	aws := newRepo(ns, "aws", "oci://123.dkr.ecr.us-east-1.amazonaws.com/charts")
	aws.Spec.Type, aws.Spec.Provider = sourcev1.HelmRepositoryTypeOCI, "aws"
	converted := newRepo(ns, "converted", srv.URL())
	env.Create(t, oci, aws, converted)

	waitStatic(t, env, oci)
	// A provider changes nothing here: its login happens when a HelmChart pulls.
	waitStatic(t, env, aws)

	// A default repository turned oci loses its artifacts and finalizer.
	waitRevision(t, env, converted, srv.IndexDigest(t))
	dir := filepath.Join(storage.BasePath(), artifact.ObjectDir(sourcev1.HelmRepositoryKind, ns, "converted"))
	env.Update(t, converted, func() {
		converted.Spec.Type, converted.Spec.URL = sourcev1.HelmRepositoryTypeOCI, "oci://ghcr.io/stefanprodan/charts"
	})
	waitStatic(t, env, converted)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("artifacts of the converted repository remain: %v", err)
	}
}

// waitStatic waits until obj has Flux's static status: no finalizer and an
// empty status (observedGeneration 0, where the CRD's default is -1).
func waitStatic(t *testing.T, env *testenv.Env, obj *sourcev1.HelmRepository) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		s := obj.Status
		return len(obj.Finalizers) == 0 && s.ObservedGeneration == 0 && s.Conditions == nil && s.Artifact == nil && s.URL == "",
			fmt.Sprintf("finalizers %v, status %+v", obj.Finalizers, s)
	})
}

func TestDeleteRemovesArtifacts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	obj := newRepo(ns, "podinfo", srv.URL())
	env.Create(t, obj)
	waitRevision(t, env, obj, srv.IndexDigest(t))
	path := obj.Status.Artifact.Path
	if err := env.Client.Delete(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("still there: %v", err)
	})
	dir := filepath.Join(storage.BasePath(), artifact.ObjectDir(sourcev1.HelmRepositoryKind, ns, "podinfo"))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("artifact directory remains: %v", err)
	}
	if _, ok := indexCache.Get(path); ok {
		t.Error("the deleted repository's index is still cached")
	}
}

func TestSuspendedRepositoryIsLeftAlone(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	obj := newRepo(ns, "podinfo", srv.URL())
	obj.Spec.Suspend = true
	env.Create(t, obj)
	other := newRepo(ns, "witness", srv.URL())
	env.Create(t, other)
	waitRevision(t, env, other, srv.IndexDigest(t))
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if obj.Status.Artifact != nil || len(obj.Status.Conditions) != 0 {
		t.Errorf("suspended repository reconciled: %+v", obj.Status)
	}
}
