package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		// Plain `go test ./...` runs no benchmark: start nothing.
		os.Exit(m.Run())
	}
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

func startControllers(ctx context.Context, env *testenv.Env) error {
	return benchenv.Start(ctx, env.Config, func(o *app.Options) {
		o.Controllers = []string{"source", "kustomize"}
	})
}

// syntheticRepo fills a bare repository on srv with `commits` commits whose
// first adds `files` small files and each later one changes ten of them,
// using git fast-import (seconds, not minutes).
func syntheticRepo(b *testing.B, srv *gitserver.Server, repo string, files, commits int) {
	b.Helper()
	srv.InitRepo(b, repo)
	cmd := exec.Command("git", "--git-dir", filepath.Join(srv.Dir(), repo), "fast-import", "--quiet")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	for c := 0; c < commits; c++ {
		msg := fmt.Sprintf("commit %d", c)
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n", 1700000000+c, len(msg), msg)
		first, count := 0, files
		if c > 0 {
			first, count = (c*10)%files, 10
		}
		for i := first; i < first+count; i++ {
			content := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  rev: \"%d\"\n", i%files, c)
			fmt.Fprintf(w, "M 100644 inline apps/dir-%03d/file-%05d.yaml\ndata %d\n%s\n", (i%files)/100, i%files, len(content), content)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v", err)
	}
}

// BenchmarkGitRepository measures, on a repository of 20,000 files and
// 2,000 commits served over smart HTTP: a cold reconcile (new object →
// Ready with its artifact stored), `git clone --depth 1` of the same
// repository for comparison, and a no-op poll (reconcile request handled
// with nothing new upstream).
func BenchmarkGitRepository(b *testing.B) {
	env := testenv.Get(b)
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	start := time.Now()
	syntheticRepo(b, srv, "big.git", 20000, 2000)
	b.Logf("synthetic repository built in %s", time.Since(start).Round(time.Millisecond))
	url := srv.HTTPURL("big.git")

	b.Run("cold-reconcile", func(b *testing.B) {
		before := maxRSS(syscall.RUSAGE_SELF)
		for i := 0; b.Loop(); i++ {
			obj := newRepo(ns, fmt.Sprintf("cold-%d", i), url)
			if err := env.Client.Create(context.Background(), obj); err != nil {
				b.Fatal(err)
			}
			waitHandled(b, env, obj, "")
		}
		b.ReportMetric(float64(maxRSS(syscall.RUSAGE_SELF)-before)/1024, "MiB-peak-rss-growth")
	})
	b.Run("git-clone-depth-1", func(b *testing.B) {
		for b.Loop() {
			dir := b.TempDir()
			cmd := exec.Command("git", "clone", "--quiet", "--depth", "1", "--branch", "main", url, dir)
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git clone: %v\n%s", err, out)
			}
		}
		b.ReportMetric(float64(maxRSS(syscall.RUSAGE_CHILDREN))/1024, "MiB-peak-rss-git")
	})
	b.Run("no-op-poll", func(b *testing.B) {
		obj := newRepo(ns, "poll", url)
		if err := env.Client.Create(context.Background(), obj); err != nil {
			b.Fatal(err)
		}
		waitHandled(b, env, obj, "")
		packs := srv.UploadPacks()
		for i := 0; b.Loop(); i++ {
			token := fmt.Sprintf("poll-%d", i)
			patch := client.MergeFrom(obj.DeepCopy())
			obj.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token}
			if err := env.Client.Patch(context.Background(), obj, patch); err != nil {
				b.Fatal(err)
			}
			waitHandled(b, env, obj, token)
		}
		b.ReportMetric(float64(srv.UploadPacks()-packs), "object-downloads")
	})
}

func newRepo(ns, name, url string) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: url, Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Timeout:   &metav1.Duration{Duration: 5 * time.Minute},
		},
	}
}

// waitHandled polls until obj is Ready (and, with a token, has handled it).
func waitHandled(b *testing.B, env *testenv.Env, obj *sourcev1.GitRepository, token string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			b.Fatal(err)
		}
		if conditions.IsReady(obj) && (token == "" || obj.Status.LastHandledReconcileAt == token) {
			return
		}
		if c := conditions.Get(obj, meta.ReadyCondition); c != nil && c.Status == metav1.ConditionFalse {
			b.Fatalf("reconcile failed: %s", c.Message)
		}
		select {
		case <-ctx.Done():
			b.Fatal("timed out waiting for the GitRepository")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// maxRSS returns the peak resident set size in KiB.
func maxRSS(who int) int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return ru.Maxrss
}
