package imagepolicy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/image/controller/imagerepository"
	"github.com/weir-gitops/weir/internal/image/scan"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

// startControllers runs the ImageRepository and ImagePolicy reconcilers on
// one store, as weir-controller's image-reflector does.
func startControllers(ctx context.Context, env *testenv.Env) error {
	dir, err := os.MkdirTemp("", "weir-image-tags-")
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); _ = os.RemoveAll(dir) }()
	store := &scan.Store{Dir: dir}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		rec := events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "", "") //nolint:staticcheck // SA1019: as internal/app
		repos := &imagerepository.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store, Events: rec}
		if err := repos.SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store, Events: rec}
		return r.SetupWithManager(ctx, mgr, testenv.FastQueue)
	})
}

// repoName names every test's ImageRepository.
const repoName = "app"

func newRepo(ns, image string) *imagev1.ImageRepository {
	return &imagev1.ImageRepository{
		ObjectMeta: metav1.ObjectMeta{Name: repoName, Namespace: ns},
		Spec:       imagev1.ImageRepositorySpec{Image: image, Insecure: true, Interval: metav1.Duration{Duration: time.Hour}},
	}
}

func newPolicy(ns, name string, choice imagev1.ImagePolicyChoice, filter *imagev1.TagFilter) *imagev1.ImagePolicy {
	return &imagev1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: imagev1.ImagePolicySpec{
			ImageRepositoryRef: meta.NamespacedObjectReference{Name: repoName}, Policy: choice, FilterTags: filter,
		},
	}
}

func waitLatest(t *testing.T, env *testenv.Env, p *imagev1.ImagePolicy, tag string) {
	t.Helper()
	env.WaitForReady(t, p, func() (bool, string) {
		if p.Status.LatestRef == nil || p.Status.LatestRef.Tag != tag {
			return false, "latestRef " + p.Status.LatestRef.String()
		}
		return true, ""
	})
}

// TestPolicies elects with each order, filterTags and extract, on one
// scanned repository, with Flux's status and Ready message.
func TestPolicies(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	image := reg.Host() + "/team/app"
	reg.PushTags(t, "team/app", "app", "v1.0.0", "v1.2.0", "v2.0.0-rc.1", "latest",
		"main-3f2a1b0-1611147430", "main-8e1c2d3-1611150000", "main-0a0a0a0-1611140000",
		"RELEASE.2021-01-01T00-00-00Z", "RELEASE.2022-03-04T10-11-12Z")
	env.Create(t, newRepo(ns, image))

	tests := []struct {
		name   string
		choice imagev1.ImagePolicyChoice
		filter *imagev1.TagFilter
		want   string
	}{
		{"semver", imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: ">=1.0.0 <2.0.0"}}, nil, "v1.2.0"},
		{"semver-extract", imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: ">=2.0.0-0"}},
			&imagev1.TagFilter{Pattern: `^v(?P<version>.*)$`, Extract: "$version"}, "v2.0.0-rc.1"},
		{"alphabetical", imagev1.ImagePolicyChoice{Alphabetical: &imagev1.AlphabeticalPolicy{Order: "asc"}},
			&imagev1.TagFilter{Pattern: `^RELEASE\.(?P<timestamp>.*)Z$`, Extract: "$timestamp"}, "RELEASE.2022-03-04T10-11-12Z"},
		{"alphabetical-desc", imagev1.ImagePolicyChoice{Alphabetical: &imagev1.AlphabeticalPolicy{Order: "desc"}},
			&imagev1.TagFilter{Pattern: `^v`}, "v1.0.0"},
		{"numerical", imagev1.ImagePolicyChoice{Numerical: &imagev1.NumericalPolicy{Order: "asc"}},
			&imagev1.TagFilter{Pattern: `^main-[a-fA-F0-9]+-(?P<ts>.*)`, Extract: "$ts"}, "main-8e1c2d3-1611150000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPolicy(ns, tt.name, tt.choice, tt.filter)
			env.Create(t, p)
			waitLatest(t, env, p, tt.want)
			if p.Status.LatestRef.Name != image || p.Status.LatestRef.Digest != "" {
				t.Errorf("latestRef %+v", p.Status.LatestRef)
			}
			msg := "Latest image tag for " + image + " resolved to " + tt.want
			if got := conditions.Get(p, meta.ReadyCondition).Message; got != msg {
				t.Errorf("Ready %q, want %q", got, msg)
			}
			env.AssertEvent(t, p, meta.SucceededReason, msg)
		})
	}

	numeric := newPolicy(ns, "numeric-text", imagev1.ImagePolicyChoice{Numerical: &imagev1.NumericalPolicy{Order: "asc"}}, nil)
	env.Create(t, numeric)
	if c := env.WaitForFailure(t, numeric, FailureReason); !strings.HasPrefix(c.Message, "failed to parse invalid numeric value '") {
		t.Errorf("numerical on text tags: %q", c.Message)
	}
}

// TestNewTagFollowed: a new tag reaches the policy as soon as the
// repository scans it, with the previous ref kept and an event.
func TestNewTagFollowed(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	image := reg.Host() + "/app"
	reg.PushTags(t, "app", "one", "1.0.0")
	repo := newRepo(ns, image)
	p := newPolicy(ns, "app", imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: "1.x"}}, nil)
	env.Create(t, p) // before its repository: DependencyNotReady, then followed
	c := env.WaitForFailure(t, p, imagev1.DependencyNotReadyReason)
	if !strings.HasPrefix(c.Message, "failed to get the referred ImageRepository: referenced ImageRepository does not exist: ") {
		t.Errorf("missing repository: %q", c.Message)
	}
	env.Create(t, repo)
	waitLatest(t, env, p, "1.0.0")

	reg.PushTags(t, "app", "two", "1.1.0")
	start := time.Now()
	env.RequestReconcile(t, repo)
	waitLatest(t, env, p, "1.1.0")
	t.Logf("scan request to new latest image: %s", time.Since(start).Round(time.Millisecond))
	if prev := p.Status.ObservedPreviousRef; prev == nil || prev.Tag != "1.0.0" {
		t.Errorf("observedPreviousRef %+v", prev)
	}
	msg := "Latest image tag for " + image + " resolved to 1.1.0 (previously " + image + ":1.0.0)"
	if got := conditions.Get(p, meta.ReadyCondition).Message; got != msg {
		t.Errorf("Ready %q, want %q", got, msg)
	}
	env.AssertEvent(t, p, meta.SucceededReason, msg)
}

// TestDigestReflection: Never, IfNotPresent and Always (re-read every
// interval, so a tag pushed again is noticed).
func TestDigestReflection(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	first := reg.Push(t, "app", "1.0.0", ociregistry.Image("first"))
	env.Create(t, newRepo(ns, reg.Host()+"/app"))
	semver := imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: "1.x"}}

	never := newPolicy(ns, "never", semver, nil)
	ifNotPresent := newPolicy(ns, "if-not-present", semver, nil)
	ifNotPresent.Spec.DigestReflectionPolicy = imagev1.ReflectIfNotPresent
	always := newPolicy(ns, "always", semver, nil)
	always.Spec.DigestReflectionPolicy = imagev1.ReflectAlways
	always.Spec.Interval = &metav1.Duration{Duration: time.Second}
	env.Create(t, never, ifNotPresent, always)
	for _, p := range []*imagev1.ImagePolicy{never, ifNotPresent, always} {
		waitLatest(t, env, p, "1.0.0")
	}
	if never.Status.LatestRef.Digest != "" {
		t.Errorf("Never reflected %s", never.Status.LatestRef.Digest)
	}
	for _, p := range []*imagev1.ImagePolicy{ifNotPresent, always} {
		if p.Status.LatestRef.Digest != first {
			t.Errorf("%s: digest %q, want %s", p.Name, p.Status.LatestRef.Digest, first)
		}
		msg := "Latest image tag for " + reg.Host() + "/app resolved to 1.0.0 with digest " + first
		if got := conditions.Get(p, meta.ReadyCondition).Message; got != msg {
			t.Errorf("%s: Ready %q, want %q", p.Name, got, msg)
		}
	}

	second := reg.Push(t, "app", "1.0.0", ociregistry.Image("second"))
	env.WaitForReady(t, always, func() (bool, string) {
		return always.Status.LatestRef.Digest == second, "digest " + always.Status.LatestRef.Digest
	})
	if prev := always.Status.ObservedPreviousRef; prev == nil || prev.Digest != first {
		t.Errorf("observedPreviousRef %+v", prev)
	}
	env.RequestReconcile(t, ifNotPresent)
	env.WaitForReady(t, ifNotPresent, nil)
	if ifNotPresent.Status.LatestRef.Digest != first {
		t.Errorf("IfNotPresent re-read the digest: %s", ifNotPresent.Status.LatestRef.Digest)
	}
}

// TestCrossNamespace: accessFrom.namespaceSelectors decide which other
// namespaces' policies may read a repository.
func TestCrossNamespace(t *testing.T) {
	env := testenv.Get(t)
	repoNS, policyNS := env.Namespace(t), env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "app", "x", "1.0.0")
	repo := newRepo(repoNS, reg.Host()+"/app")
	env.Create(t, repo)
	p := newPolicy(policyNS, "app", imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: "1.x"}}, nil)
	p.Spec.ImageRepositoryRef.Namespace = repoNS
	env.Create(t, p)
	c := env.WaitForFailure(t, p, meta.AccessDeniedReason)
	want := "failed to get the referred ImageRepository: access denied: 'ImageRepository/" + repoNS + "/app' can't be accessed due to missing ACL labels on 'accessFrom'"
	if c.Message != want {
		t.Errorf("no accessFrom: %q, want %q", c.Message, want)
	}

	env.Update(t, repo, func() {
		repo.Spec.AccessFrom = &meta.AccessFrom{NamespaceSelectors: []meta.NamespaceSelector{{MatchLabels: map[string]string{"team": "apps"}}}}
	})
	env.RequestReconcile(t, p)
	c = env.WaitForFailure(t, p, meta.AccessDeniedReason)
	if !strings.HasSuffix(c.Message, "can't be accessed due to ACL labels mismatch on namespace '"+policyNS+"'") {
		t.Errorf("labels mismatch: %q", c.Message)
	}

	var nsObj corev1.Namespace
	nsObj.Name = policyNS
	env.Update(t, &nsObj, func() { nsObj.Labels["team"] = "apps" })
	waitLatest(t, env, p, "1.0.0") // retried: namespace labels are not watched
}
