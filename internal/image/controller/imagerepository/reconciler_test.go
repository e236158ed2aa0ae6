package imagerepository

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/image/scan"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// The reconciler under test asks for pageSize tags per page and keeps at
// most maxTags per repository, so that paging and the cap show with a few
// dozen tags.
const (
	pageSize = 5
	maxTags  = 30
)

var store *scan.Store

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

func startController(ctx context.Context, env *testenv.Env) error {
	dir, err := os.MkdirTemp("", "weir-image-tags-")
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); _ = os.RemoveAll(dir) }()
	store = &scan.Store{Dir: dir, CompressAbove: 64 * 1024}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		r := &Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store, MaxTags: maxTags, PageSize: pageSize,
			Events: events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "", ""), //nolint:staticcheck // SA1019: as internal/app
			// The ObjectLevelWorkloadIdentity gate off (aws_test.go).
			Auth: &auth.Settings{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(100, time.Hour)},
		}
		return r.SetupWithManager(mgr, testenv.FastQueue)
	})
}

func newRepo(ns, name, image string) *imagev1.ImageRepository {
	return &imagev1.ImageRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: imagev1.ImageRepositorySpec{
			Image: image, Insecure: true, Interval: metav1.Duration{Duration: time.Hour},
			Timeout: &metav1.Duration{Duration: 20 * time.Second},
		},
	}
}

func tagList(prefix string, n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return tags
}

// TestScanPages scans a repository whose tags take several pages of the
// registry's list, and checks Flux's status and message.
func TestScanPages(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	host, log := ociregistry.CountingProxy(t, reg.URL())
	tags := append(tagList("1.0.", 12), "sha256-abc.sig")
	reg.PushTags(t, "team/app", "app", tags...)

	repo := newRepo(ns, "app", host+"/team/app")
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)

	kept, _ := scan.Exclude(tags, imagev1.DefaultExclusionList)
	want := scan.Revision(kept)
	res := repo.Status.LastScanResult
	if res == nil || res.Revision != want || res.TagCount != 12 || res.ScanTime.IsZero() {
		t.Fatalf("lastScanResult = %+v, want revision %s and 12 tags", res, want)
	}
	if !slices.Equal(res.LatestTags, kept[:10]) || res.LatestTags[0] != "1.0.9" {
		t.Errorf("latestTags = %v, want the ten first of %v", res.LatestTags, kept)
	}
	if repo.Status.CanonicalImageName != host+"/team/app" || !slices.Equal(repo.Status.ObservedExclusionList, imagev1.DefaultExclusionList) {
		t.Errorf("canonicalImageName %q, observedExclusionList %v", repo.Status.CanonicalImageName, repo.Status.ObservedExclusionList)
	}
	ready := conditions.Get(repo, meta.ReadyCondition)
	if msg := "successful scan: found 12 tags with checksum " + want; ready.Message != msg || ready.Reason != meta.SucceededReason {
		t.Errorf("Ready = %s %q, want Succeeded %q", ready.Reason, ready.Message, msg)
	}
	// 13 tags at 5 a page: three pages.
	if n := log.Count("GET", "/tags/list"); n < 3 {
		t.Errorf("%d tag list requests, want one per page (3)\n%s", n, log)
	}
	stored, err := store.Get(ns, "app", want)
	if err != nil || !slices.Equal(stored, kept) {
		t.Errorf("stored tags %v, %v", stored, err)
	}
	env.AssertEvent(t, repo, meta.SucceededReason, ready.Message)
	if slices.ContainsFunc(repo.Finalizers, func(f string) bool { return f == meta.Finalizer }) == false {
		t.Errorf("finalizers %v", repo.Finalizers)
	}
}

// TestScanSchedule: no rescan before the interval unless the spec changes
// or a reconcile is requested; a new exclusion list rescans.
func TestScanSchedule(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	host, log := ociregistry.CountingProxy(t, reg.URL())
	reg.PushTags(t, "app", "v1", "v1.0.0", "v1.1.0", "latest")
	repo := newRepo(ns, "app", host+"/app")
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	first := repo.Status.LastScanResult.ScanTime
	lists := log.Count("GET", "/tags/list")

	// A label change is no spec change: nothing is scanned.
	env.Update(t, repo, func() { repo.Labels = map[string]string{"team": "a"} })
	time.Sleep(300 * time.Millisecond)
	if n := log.Count("GET", "/tags/list"); n != lists {
		t.Errorf("%d tag list requests after a label change, want %d", n, lists)
	}

	reg.PushTags(t, "app", "v2", "v2.0.0")
	env.RequestReconcile(t, repo)
	env.WaitForReady(t, repo, func() (bool, string) {
		return repo.Status.LastScanResult.TagCount == 4, fmt.Sprintf("%d tags", repo.Status.LastScanResult.TagCount)
	})
	if repo.Status.LastScanResult.ScanTime.Before(&first) {
		t.Errorf("scan time went back: %s before %s", repo.Status.LastScanResult.ScanTime, first)
	}

	env.Update(t, repo, func() { repo.Spec.ExclusionList = []string{"^latest$"} })
	env.WaitForReady(t, repo, func() (bool, string) {
		return repo.Status.LastScanResult.TagCount == 3, fmt.Sprintf("%d tags", repo.Status.LastScanResult.TagCount)
	})
	if got := repo.Status.LastScanResult.LatestTags; !slices.Equal(got, []string{"v2.0.0", "v1.1.0", "v1.0.0"}) {
		t.Errorf("latestTags %v", got)
	}
	if !slices.Equal(repo.Status.ObservedExclusionList, []string{"^latest$"}) {
		t.Errorf("observedExclusionList %v", repo.Status.ObservedExclusionList)
	}
}

// TestAuth scans a registry that requires basic auth: without credentials,
// with wrong ones, then with a dockerconfigjson Secret, and through a
// ServiceAccount's image pull secret.
func TestAuth(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{Username: "bot", Password: "s3cret"})
	reg.PushTags(t, "private/app", "p", "1.0.0", "1.1.0")

	repo := newRepo(ns, "private", reg.Host()+"/private/app")
	env.Create(t, repo)
	ready := env.WaitForFailure(t, repo, imagev1.ReadOperationFailedReason)
	if !strings.HasPrefix(ready.Message, "scan failed: authentication failed: ") {
		t.Errorf("anonymous: %q", ready.Message)
	}

	secret := func(name, pass string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{%q:{"username":"bot","password":%q}}}`, reg.Host(), pass))}}
	}
	env.Create(t, secret("wrong", "nope"), secret("right", "s3cret"))
	env.Update(t, repo, func() { repo.Spec.SecretRef = &meta.LocalObjectReference{Name: "wrong"} })
	ready = env.WaitForFailure(t, repo, imagev1.ReadOperationFailedReason)
	if !strings.Contains(ready.Message, "authentication failed") {
		t.Errorf("wrong password: %q", ready.Message)
	}
	env.AssertEvent(t, repo, imagev1.ReadOperationFailedReason, ready.Message)

	env.Update(t, repo, func() { repo.Spec.SecretRef = &meta.LocalObjectReference{Name: "missing"} })
	ready = env.WaitForFailure(t, repo, imagev1.AuthenticationFailedReason)
	if want := "failed to configure authentication options: failed to get secret '" + ns + "/missing'"; !strings.HasPrefix(ready.Message, want) {
		t.Errorf("missing secret: %q, want prefix %q", ready.Message, want)
	}

	env.Update(t, repo, func() { repo.Spec.SecretRef = &meta.LocalObjectReference{Name: "right"} })
	env.WaitForReady(t, repo, nil)
	if repo.Status.LastScanResult.TagCount != 2 {
		t.Errorf("tagCount %d", repo.Status.LastScanResult.TagCount)
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller", Namespace: ns},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "right"}}}
	env.Create(t, sa)
	bySA := newRepo(ns, "by-sa", reg.Host()+"/private/app")
	bySA.Spec.ServiceAccountName = "puller"
	env.Create(t, bySA)
	env.WaitForReady(t, bySA, nil)
}

// TestStalls: an image Flux refuses stalls with Flux's reason.
func TestStalls(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	tagged := newRepo(ns, "tagged", "ghcr.io/org/app:v1")
	env.Create(t, tagged)
	for _, tt := range []struct {
		obj          *imagev1.ImageRepository
		reason, want string
	}{
		{tagged, imagev1.ImageURLInvalidReason, ".spec.image value should not contain a tag; remove ':v1'"},
	} {
		ready := env.WaitForFailure(t, tt.obj, tt.reason)
		if ready.Message != tt.want || !conditions.IsTrue(tt.obj, meta.StalledCondition) {
			t.Errorf("%s: %q (stalled %v), want %q", tt.obj.Name, ready.Message, conditions.IsTrue(tt.obj, meta.StalledCondition), tt.want)
		}
	}
}

// TestTagLimit: a repository with more tags than the cap keeps the greatest
// in version order and says so.
func TestTagLimit(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	tags := tagList("1.0.", maxTags+10)
	reg.PushTags(t, "big", "big", tags...)
	repo := newRepo(ns, "big", reg.Host()+"/big")
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	if n := repo.Status.LastScanResult.TagCount; n != maxTags {
		t.Fatalf("tagCount %d, want the cap %d", n, maxTags)
	}
	stored, err := store.Get(ns, "big", repo.Status.LastScanResult.Revision)
	if err != nil || slices.Contains(stored, "1.0.9") || !slices.Contains(stored, "1.0.39") || !slices.Contains(stored, "1.0.10") {
		t.Errorf("kept %v, %v; want 1.0.10 to 1.0.39", stored, err)
	}
	c := conditions.Get(repo, TagLimitCondition)
	want := "the registry lists 40 tags after the exclusion list, more than the 30 kept per repository (--max-tags-per-image-repository): kept the 30 greatest in version order, dropped 10"
	if c == nil || c.Status != metav1.ConditionTrue || c.Message != want {
		t.Fatalf("TagLimitExceeded = %+v, want %q", c, want)
	}
	env.AssertEvent(t, repo, TagLimitReason, want)

	env.Update(t, repo, func() { repo.Spec.ExclusionList = []string{`^1\.0\.[0-9]$`} })
	env.WaitForReady(t, repo, func() (bool, string) {
		return conditions.Get(repo, TagLimitCondition) == nil, "TagLimitExceeded still set"
	})
}

// TestRestartKeepsTags: a controller that starts again (a new Store on the
// same directory) finds the tags and does not rescan; one whose storage was
// emptied rescans, as Flux does with an empty database.
func TestRestartKeepsTags(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "app", "a", "1.0.0", "2.0.0")
	repo := newRepo(ns, "app", reg.Host()+"/app")
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)

	restarted := &Reconciler{Client: env.Client, Store: &scan.Store{Dir: store.Dir}}
	due, next, why := restarted.shouldScan(repo, repo.Status.CanonicalImageName)
	if due || next <= 59*time.Minute {
		t.Errorf("after a restart: due %v (%s), next in %s; want no scan for about an hour", due, why, next)
	}
	tags, err := restarted.Store.Get(ns, "app", repo.Status.LastScanResult.Revision)
	if err != nil || !slices.Equal(tags, []string{"2.0.0", "1.0.0"}) {
		t.Errorf("tags after restart: %v, %v", tags, err)
	}

	emptied := &Reconciler{Client: env.Client, Store: &scan.Store{Dir: filepath.Join(t.TempDir(), "new")}}
	if due, _, why := emptied.shouldScan(repo, repo.Status.CanonicalImageName); !due || why != scanReasonEmptyDatabase {
		t.Errorf("emptied storage: due %v, reason %q; want %q", due, why, scanReasonEmptyDatabase)
	}
}

// TestDeleteRemovesTags: the finalizer deletes the stored tags.
func TestDeleteRemovesTags(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "app", "d", "1.0.0")
	repo := newRepo(ns, "gone", reg.Host()+"/app")
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	rev := repo.Status.LastScanResult.Revision
	if err := env.Client.Delete(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo)
		return client.IgnoreNotFound(err) == nil && err != nil, "still there"
	})
	if store.Has(ns, "gone", rev) {
		t.Error("tags left behind")
	}
}

// TestCertSecretRef scans a registry behind TLS with a certificate no
// system root signs: refused without spec.certSecretRef, scanned with its CA
// in ca.crt.
func TestCertSecretRef(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "app", "tls", "1.0.0")
	target, err := url.Parse(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")

	repo := newRepo(ns, "tls", host+"/app")
	repo.Spec.Insecure = false
	env.Create(t, repo)
	c := env.WaitForFailure(t, repo, imagev1.ReadOperationFailedReason)
	if !strings.HasPrefix(c.Message, "scan failed: ") || !strings.Contains(c.Message, "certificate") {
		t.Errorf("untrusted certificate: %q", c.Message)
	}

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-ca", Namespace: ns},
		Data: map[string][]byte{"ca.crt": ca}})
	env.Update(t, repo, func() { repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: "registry-ca"} })
	env.WaitForReady(t, repo, nil)
	if repo.Status.LastScanResult.TagCount != 1 {
		t.Errorf("tagCount %d", repo.Status.LastScanResult.TagCount)
	}
}

// TestProxySecretRef scans through the HTTP proxy of spec.proxySecretRef,
// with its credentials.
func TestProxySecretRef(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "app", "proxied", "1.0.0", "1.1.0")
	var proxied atomic.Int32
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL }}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := proxyAuth(r); !ok || user != "p" || pass != "q" {
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
		proxied.Add(1)
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns},
		Data: map[string][]byte{"address": []byte(proxy.URL), "username": []byte("p"), "password": []byte("q")}})
	repo := newRepo(ns, "proxied", reg.Host()+"/app")
	repo.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: "proxy"}
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	if repo.Status.LastScanResult.TagCount != 2 || proxied.Load() == 0 {
		t.Errorf("tagCount %d, %d requests through the proxy", repo.Status.LastScanResult.TagCount, proxied.Load())
	}
}

// proxyAuth reads Proxy-Authorization basic credentials.
func proxyAuth(r *http.Request) (string, string, bool) {
	req := &http.Request{Header: http.Header{"Authorization": r.Header["Proxy-Authorization"]}}
	return req.BasicAuth()
}
