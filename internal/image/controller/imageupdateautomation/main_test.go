package imageupdateautomation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/source/git"
)

// hooks holds each test's beforePush seam, by namespace.
var hooks sync.Map // namespace → func(attempt int)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

// startController runs the reconciler in a manager, with Flux's default
// gates (GitForcePushBranch on).
func startController(ctx context.Context, env *testenv.Env) error {
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		r := &Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ForcePushBranch: true, Azure: entraProvider,
			Auth:   &auth.Settings{ObjectLevel: true, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(100, time.Hour)},
			Events: events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "test", ""), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder
			beforePush: func(obj *imagev1.ImageUpdateAutomation, attempt int) {
				if h, ok := hooks.Load(obj.Namespace); ok {
					h.(func(int))(attempt)
				}
			},
		}
		return r.SetupWithManager(ctx, mgr, testenv.FastQueue)
	})
}

const (
	gitUser     = "git"
	gitPassword = "s3cr3t-pw"
	oldImage    = "ghcr.io/org/app:1.0.0"
)

// fixture is a namespace with a Git server holding app.git, whose main
// branch has deploy/app.yaml marked with the namespace's policy "app".
type fixture struct {
	env  *testenv.Env
	ns   string
	srv  *gitserver.Server
	key  gitserver.ClientKey
	base string // main's first commit
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key := gitserver.GenerateClientKey(t)
	return newFixtureWith(t, key, gitserver.Options{Username: gitUser, Password: gitPassword, AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
}

// newFixtureWith is newFixture on a Git server started with opts.
func newFixtureWith(t *testing.T, key gitserver.ClientKey, opts gitserver.Options) *fixture {
	t.Helper()
	env := testenv.Get(t)
	f := &fixture{env: env, ns: env.Namespace(t), key: key, srv: gitserver.New(t, opts)}
	f.srv.InitRepo(t, "app.git")
	f.base = f.srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{
		"deploy/app.yaml": f.deployment(oldImage),
		"README.md":       "not yaml " + `{"$imagepolicy": "x:y"}`,
	}})
	f.env.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: f.ns},
		StringData: map[string]string{"username": gitUser, "password": gitPassword},
	})
	return f
}

// deployment is deploy/app.yaml with image marked by policy "app".
func (f *fixture) deployment(image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: %[1]s
spec:
  template:
    spec:
      containers:
        - name: app
          image: %[2]s # {"$imagepolicy": "%[1]s:app"}
`, f.ns, image)
}

// gitRepository creates GitRepository "app" on main over HTTP.
func (f *fixture) gitRepository(t *testing.T) {
	t.Helper()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.srv.HTTPURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			SecretRef: &meta.LocalObjectReference{Name: "git-auth"},
		},
	}
	f.env.Create(t, repo)
}

// policy creates ImagePolicy "app" and gives it a Ready
// status electing ghcr.io/org/app:tag, as the image reflector would.
func (f *fixture) policy(t *testing.T, tag string) *imagev1.ImagePolicy {
	t.Helper()
	const name, image = "app", "ghcr.io/org/app"
	p := &imagev1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: imagev1.ImagePolicySpec{
			ImageRepositoryRef: meta.NamespacedObjectReference{Name: name},
			Policy:             imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: ">=1.0.0"}},
		},
	}
	f.env.Create(t, p)
	f.elect(t, p, image, tag)
	return p
}

// elect writes a new latest image into the policy's status.
func (f *fixture) elect(t *testing.T, p *imagev1.ImagePolicy, image, tag string) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err.Error()
		}
		p.Status.LatestRef = &imagev1.ImageRef{Name: image, Tag: tag}
		p.Status.Conditions = []metav1.Condition{{
			Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
			Message: "Latest image tag for " + image + " resolved to " + tag, LastTransitionTime: metav1.Now(),
			ObservedGeneration: p.Generation,
		}}
		if err := f.env.Client.Status().Update(ctx, p); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// automation is ImageUpdateAutomation "auto" on GitRepository "app",
// updating ./deploy, with change applied before it is created.
func (f *fixture) automation(change func(*imagev1.ImageUpdateAutomation)) *imagev1.ImageUpdateAutomation {
	obj := &imagev1.ImageUpdateAutomation{
		ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: f.ns},
		Spec: imagev1.ImageUpdateAutomationSpec{
			SourceRef: imagev1.CrossNamespaceSourceReference{Kind: imagev1.GitRepositoryKind, Name: "app"},
			Interval:  metav1.Duration{Duration: time.Hour},
			GitSpec: &imagev1.GitSpec{Commit: imagev1.CommitSpec{
				Author: imagev1.CommitUser{Name: "weir", Email: "weir@example.com"},
			}},
			Update: &imagev1.UpdateStrategy{Strategy: imagev1.UpdateStrategySetters, Path: "./deploy"},
		},
	}
	if change != nil {
		change(obj)
	}
	return obj
}

// open checks branch out of app.git as the controller would.
func (f *fixture) open(t *testing.T, branch string) *git.Checkout {
	t.Helper()
	u := f.srv.HTTPURL("app.git")
	auth, err := git.NewAuth(u, map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := git.OpenBranch(ctx, u, auth, branch)
	if err != nil {
		t.Fatalf("open %s: %v", branch, err)
	}
	return c
}

// file returns a file of branch.
func (f *fixture) file(t *testing.T, branch, p string) string {
	t.Helper()
	b, err := f.open(t, branch).ReadFile(p)
	if err != nil {
		t.Fatalf("read %s on %s: %v", p, branch, err)
	}
	return string(b)
}
