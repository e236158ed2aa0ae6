package gitrepository

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// storage is the artifact store of the reconciler the tests run against.
var storage *artifact.Storage

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

// startController runs the GitRepository reconciler in a manager, with its
// artifact file server on 127.0.0.1, as weir-controller does.
func startController(ctx context.Context, env *testenv.Env) (err error) {
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		r := &Reconciler{Deps: testenv.SourceDeps(mgr, storage), Git: gated, Azure: entraProvider}
		r.Auth = &auth.Settings{ObjectLevel: true, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(100, time.Hour)}
		return r.SetupWithManager(mgr, testenv.FastQueue)
	})
}

func newRepo(ns, name, url string, ref *sourcev1.GitRepositoryRef) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: url, Reference: ref, Interval: metav1.Duration{Duration: time.Hour},
			Timeout: &metav1.Duration{Duration: 20 * time.Second},
		},
	}
}

// waitReady waits until obj is Ready at its generation with the given
// revision, and returns the object.
func waitReady(t *testing.T, env *testenv.Env, obj *sourcev1.GitRepository, revision string) *sourcev1.GitRepository {
	t.Helper()
	env.WaitForReady(t, obj, func() (bool, string) {
		return obj.Status.Artifact != nil && obj.Status.Artifact.Revision == revision, "revision not stored yet"
	})
	return obj
}

func TestReferencesResolveToFluxRevisions(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "org/app.git")
	first := srv.Commit(t, "org/app.git", gitserver.Commit{Files: map[string]string{"deploy/app.yaml": "kind: ConfigMap\n"}, Tag: "v1.0.0", Message: "first"})
	second := srv.Commit(t, "org/app.git", gitserver.Commit{Files: map[string]string{"deploy/app.yaml": "kind: Secret\n"}, Tag: "v1.2.0", Message: "second"})
	srv.Commit(t, "org/app.git", gitserver.Commit{Branch: "feature", Files: map[string]string{"x": "y"}, Tag: "not-semver", Message: "feature"})
	url := srv.HTTPURL("org/app.git")

	tests := []struct {
		name string
		ref  *sourcev1.GitRepositoryRef
		want string
	}{
		{"default branch is master, main given", &sourcev1.GitRepositoryRef{Branch: "main"}, "main@sha1:" + second},
		{"tag", &sourcev1.GitRepositoryRef{Tag: "v1.0.0"}, "v1.0.0@sha1:" + first},
		{"semver", &sourcev1.GitRepositoryRef{SemVer: ">=1.0.0 <2.0.0"}, "v1.2.0@sha1:" + second},
		{"name", &sourcev1.GitRepositoryRef{Name: "refs/heads/main"}, "refs/heads/main@sha1:" + second},
		{"commit", &sourcev1.GitRepositoryRef{Commit: first}, "sha1:" + first},
		{"branch and commit", &sourcev1.GitRepositoryRef{Branch: "main", Commit: first}, "main@sha1:" + first},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := newRepo(ns, fmt.Sprintf("ref-%d", i), url, tt.ref)
			if err := env.Client.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
			obj = waitReady(t, env, obj, tt.want)
			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready.Message != "stored artifact for revision '"+tt.want+"'" || ready.Reason != meta.SucceededReason {
				t.Errorf("Ready = %s: %s", ready.Reason, ready.Message)
			}
			if !conditions.IsTrue(obj, sourcev1.ArtifactInStorageCondition) {
				t.Error("ArtifactInStorage is not True")
			}
			if !strings.HasPrefix(obj.Status.Artifact.Path, "gitrepository/"+ns+"/"+obj.Name+"/") {
				t.Errorf("artifact path %s", obj.Status.Artifact.Path)
			}
			testenv.DownloadArtifact(t, obj.Status.Artifact)
		})
	}
}

func TestNewCommitNewArtifactAndNoReclone(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: "s3cret"})
	srv.InitRepo(t, "app.git")
	first := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	ctx := context.Background()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: ns},
		Data:       map[string][]byte{"username": []byte("git"), "password": []byte("s3cret")},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	obj := newRepo(ns, "app", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.SecretRef = &meta.LocalObjectReference{Name: "git-auth"}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	obj = waitReady(t, env, obj, "main@sha1:"+first)
	firstArtifact := *obj.Status.Artifact

	// Nothing changed upstream: a reconcile makes a ref advertisement but
	// downloads no objects, and keeps the artifact.
	packs := srv.UploadPacks()
	env.RequestReconcile(t, obj)
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return obj.Status.LastHandledReconcileAt == obj.Annotations[meta.ReconcileRequestAnnotation], "request not handled yet"
	})
	if got := srv.UploadPacks(); got != packs {
		t.Errorf("an unchanged remote was cloned again (%d object downloads)", got-packs)
	}
	if obj.Status.Artifact.Digest != firstArtifact.Digest {
		t.Error("artifact changed without a new commit")
	}

	second := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"b.yaml": "b: 2\n"}, Message: "second commit"})
	env.RequestReconcile(t, obj)
	obj = waitReady(t, env, obj, "main@sha1:"+second)
	if obj.Status.Artifact.Digest == firstArtifact.Digest {
		t.Error("new commit, same digest")
	}
	testenv.DownloadArtifact(t, obj.Status.Artifact)
	env.AssertEvent(t, obj, "NewArtifact", "stored artifact for commit 'second commit'")
}

func TestFailuresKeepTheLastArtifact(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: "right"})
	srv.InitRepo(t, "app.git")
	sha := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: ns},
		Data:       map[string][]byte{"username": []byte("git"), "password": []byte("right")},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	obj := newRepo(ns, "app", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.SecretRef = &meta.LocalObjectReference{Name: "git-auth"}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	obj = waitReady(t, env, obj, "main@sha1:"+sha)
	good := *obj.Status.Artifact

	env.AssertFailuresKeepArtifact(t, obj, good, testenv.FailureChecks{Secrets: []string{"right", "wrong"}}, []testenv.Sabotage{
		{
			Name: "wrong password",
			Break: func() {
				secret.Data["password"] = []byte("wrong")
				if err := env.Client.Update(ctx, secret); err != nil {
					t.Fatal(err)
				}
			},
			Reason: sourcev1.AuthenticationFailedReason, Mentions: []string{"authentication"},
		},
		{
			Name: "missing tag",
			Break: func() {
				secret.Data["password"] = []byte("right")
				if err := env.Client.Update(ctx, secret); err != nil {
					t.Fatal(err)
				}
				obj.Spec.Reference = &sourcev1.GitRepositoryRef{Tag: "v9.9.9"}
				if err := env.Client.Update(ctx, obj); err != nil {
					t.Fatal(err)
				}
			},
			Reason: sourcev1.GitOperationFailedReason, Mentions: []string{"v9.9.9"},
		},
		{
			Name: "unreachable server",
			Break: func() {
				obj.Spec.URL = "http://127.0.0.1:1/app.git"
				obj.Spec.Reference = &sourcev1.GitRepositoryRef{Branch: "main"}
				if err := env.Client.Update(ctx, obj); err != nil {
					t.Fatal(err)
				}
			},
			Reason: sourcev1.GitOperationFailedReason, Mentions: []string{"127.0.0.1:1"},
		},
	})
}

func TestDeletionRemovesArtifacts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	sha := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	obj := newRepo(ns, "gone", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	obj = waitReady(t, env, obj, "main@sha1:"+sha)
	dir := filepath.Join(storage.BasePath(), "gitrepository", ns, "gone")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("artifact directory missing: %v", err)
	}
	if err := env.Client.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return client.IgnoreNotFound(err) == nil && err != nil, "object still present"
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("artifact directory survived deletion: %v", err)
	}
}
