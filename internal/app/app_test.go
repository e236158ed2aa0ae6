package app

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.AuditPolicy = statusWritesAudit })
}

// TestRunHonoursKubeconfigAndServesArtifacts runs weir-controller's Run the
// way the binary does: the cluster comes from $KUBECONFIG, flags from
// Options. A GitRepository becomes Ready and its artifact URL, built from
// --storage-adv-addr, serves the file.
func TestRunHonoursKubeconfigAndServesArtifacts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	t.Setenv("KUBECONFIG", env.ControlPlane.KubeconfigPath())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	opts := DefaultOptions()
	opts.Controllers = []string{"source"}
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), addr, addr
	runInBackground(t, cfg, opts)

	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	sha := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		},
	}
	if err := env.Client.Create(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
			return false, err.Error()
		}
		c := conditions.Get(repo, meta.ReadyCondition)
		return conditions.IsReady(repo) && repo.Status.Artifact.Revision == "main@sha1:"+sha, repr(c)
	})
	resp, err := http.Get(repo.Status.Artifact.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Error(err)
	}
	if resp.StatusCode != http.StatusOK || repo.Status.Artifact.URL[:len("http://"+addr)] != "http://"+addr {
		t.Errorf("GET %s: %s", repo.Status.Artifact.URL, resp.Status)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func repr(c *metav1.Condition) string {
	if c == nil {
		return "no Ready condition"
	}
	return string(c.Status) + " " + c.Reason + ": " + c.Message
}

// runInBackground runs Run until the test ends, then checks it returned
// no error.
func runInBackground(t *testing.T, cfg *rest.Config, opts Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
