package controllers

import (
	"context"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// unreachable is a GitRepository whose fetch fails at once (nothing listens
// on port 1), so a Ready condition proves a reconcile without a Git server.
func unreachable(ns string) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "nowhere", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: "http://127.0.0.1:1/nowhere.git", Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		},
	}
}

func waitNotReady(t *testing.T, env *testenv.Env, repo *sourcev1.GitRepository) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
			return false, err.Error()
		}
		c := conditions.Get(repo, meta.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse, "no Ready=False condition yet"
	})
}

// TestRunReconciles starts source and kustomize: the source controller
// reconciles a GitRepository and serves artifacts on StorageAddr.
func TestRunReconciles(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	r := Run(t, Options{Controllers: []string{"source", "kustomize"}})
	repo := unreachable(ns)
	env.Create(t, repo)
	waitNotReady(t, env, repo)

	resp, err := http.Get("http://" + r.StorageAddr + "/")
	if err != nil {
		t.Fatalf("artifact server: %v", err)
	}
	resp.Body.Close()
}

// TestDeploymentBoundsTheRun checks that the controllers wait for their
// Deployment and stop once it is deleted, as its pods would.
func TestDeploymentBoundsTheRun(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	deploy := deployment(ns)
	r := Run(t, Options{Controllers: []string{"source"}, Deployment: client.ObjectKeyFromObject(deploy)})
	repo := unreachable(ns)
	env.Create(t, repo)

	time.Sleep(300 * time.Millisecond)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(repo), repo); err != nil {
		t.Fatal(err)
	}
	if len(repo.Status.Conditions) > 0 {
		t.Fatalf("reconciled before the Deployment existed: %v", repo.Status.Conditions)
	}

	env.Create(t, deploy)
	waitNotReady(t, env, repo)

	if err := env.Client.Delete(context.Background(), deploy); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(testenv.DefaultTimeout):
		t.Fatal("the controllers still run after their Deployment was deleted")
	}
	if err := r.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func deployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "weir-controller"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "weir-controller", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "weir"}}},
			},
		},
	}
}

func TestTailLast(t *testing.T) {
	for _, tt := range []struct {
		written string
		n       int
		want    string
	}{
		{"", 3, ""},
		{"a\n", 3, "a"},
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\nc\n", 5, "a\nb\nc"},
	} {
		l := &tail{max: 1 << 10}
		if _, err := l.Write([]byte(tt.written)); err != nil {
			t.Fatal(err)
		}
		if got := l.last(tt.n); got != tt.want {
			t.Errorf("last(%d) of %q = %q, want %q", tt.n, tt.written, got, tt.want)
		}
	}
	l := &tail{max: 4}
	for range 5 {
		if _, err := l.Write([]byte("abc\n")); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.buf) > 8 || l.last(1) != "abc" {
		t.Errorf("after trimming: %q", l.buf)
	}
}
