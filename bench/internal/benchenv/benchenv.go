// Package benchenv starts weir's controllers for the benchmarks: the real
// assembly (internal/app.Run) with its artifact storage in a temporary
// directory served on a free port of 127.0.0.1.
package benchenv

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// ProfileLabel and ProfileLabelControllers label the goroutines of the
// controllers (and every goroutine they start) in CPU profiles, apart from
// the benchmark's own client, Git server and floor:
//
//	go tool pprof -tagfocus weir=controllers cpu.out
const (
	ProfileLabel            = "weir"
	ProfileLabelControllers = "controllers"
)

// Start runs the controllers weir-controller's defaults select, changed by
// tune, against cfg until ctx ends. Logs below error level are dropped.
func Start(ctx context.Context, cfg *rest.Config, tune func(*app.Options)) error {
	_, err := Run(ctx, cfg, tune)
	return err
}

// Run is Start that also returns a channel closed once the controllers
// have stopped after ctx ended: a benchmark restarts them with a second
// Run (controller names may repeat in the process).
func Run(ctx context.Context, cfg *rest.Config, tune func(*app.Options)) (<-chan struct{}, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	dir, err := os.MkdirTemp("", "weir-bench-storage-")
	if err != nil {
		return nil, fmt.Errorf("creating the artifact storage: %w", err)
	}
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.HealthAddr, opts.LogLevel = "0", "0", "error"
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = dir, addr, addr
	opts.SkipNameValidation = true
	tune(&opts)
	done := make(chan struct{})
	go pprof.Do(ctx, pprof.Labels(ProfileLabel, ProfileLabelControllers), func(ctx context.Context) {
		defer close(done)
		if err := app.Run(ctx, counting(cfg), opts); err != nil {
			fmt.Fprintf(os.Stderr, "controllers: %v\n", err)
		}
		os.RemoveAll(dir)
	})
	return done, nil
}

// Main is a benchmark package's TestMain: without -bench it runs the
// (absent) tests and starts nothing; with it, a control plane with a kwok
// node and the given controllers at --concurrent=concurrency (none: the
// benchmark starts them with Run).
func Main(m *testing.M, controllers []string, concurrency int) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	testenv.Main(m, func(o *testenv.Options) {
		if len(controllers) == 0 {
			return // the benchmark starts them
		}
		o.Setup = func(ctx context.Context, env *testenv.Env) error {
			return Start(ctx, env.Config, func(o *app.Options) {
				o.Controllers = controllers
				o.Concurrent = concurrency
			})
		}
	})
}

// CreateRepository creates the GitRepository "fleet" in ns, following the
// main branch of url hourly: benchmarks push and ask for reconciles
// themselves.
func CreateRepository(b *testing.B, env *testenv.Env, ns, url string) *sourcev1.GitRepository {
	b.Helper()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet"},
		Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	if err := env.Client.Create(context.Background(), repo); err != nil {
		b.Fatal(err)
	}
	return repo
}

// StartWeir runs weir's named controllers against env at
// --concurrent=concurrency until the returned stop is called (b's cleanup
// calls it too); stop returns once they have stopped.
func StartWeir(b testing.TB, env *testenv.Env, controllers []string, concurrency int) (stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, err := Run(ctx, env.Config, func(o *app.Options) {
		o.Controllers = controllers
		o.Concurrent = concurrency
	})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	b.Cleanup(stop)
	return stop
}

// DeleteNamespace deletes ns and waits until it is gone, so that what is
// measured next neither shares the node with its objects nor is loaded by
// their deletion.
func DeleteNamespace(b testing.TB, env *testenv.Env, ns string, timeout time.Duration) {
	b.Helper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(context.Background(), namespace); err != nil && !apierrors.IsNotFound(err) {
		b.Fatalf("deleting namespace %s: %v", ns, err)
	}
	testenv.Eventually(b, timeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), fmt.Sprintf("namespace %s still there (%v)", ns, err)
	})
}

// WaitArtifact waits until repo has an artifact other than old and
// returns its revision.
func WaitArtifact(b testing.TB, env *testenv.Env, repo *sourcev1.GitRepository, old string) string {
	b.Helper()
	rev := ""
	testenv.Eventually(b, 5*time.Minute, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
			return false, err.Error()
		}
		if a := repo.Status.Artifact; a != nil && a.Revision != old {
			rev = a.Revision
			return true, ""
		}
		return false, "no new artifact"
	})
	return rev
}
