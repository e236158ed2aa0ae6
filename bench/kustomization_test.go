package bench

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// fleet is a Git repository with a GitRepository in a fresh namespace.
type fleet struct {
	b    *testing.B
	env  *testenv.Env
	ns   string
	srv  *gitserver.Server
	repo *sourcev1.GitRepository
}

func newFleet(b *testing.B, files map[string]string) *fleet {
	b.Helper()
	env := testenv.Get(b)
	f := &fleet{b: b, env: env, ns: env.Namespace(b), srv: gitserver.New(b, gitserver.Options{})}
	f.srv.InitRepo(b, "fleet.git")
	f.srv.Commit(b, "fleet.git", gitserver.Commit{Files: files})
	f.repo = newRepo(f.ns, "fleet", f.srv.HTTPURL("fleet.git"))
	if err := env.Client.Create(context.Background(), f.repo); err != nil {
		b.Fatal(err)
	}
	waitHandled(b, env, f.repo, "")
	return f
}

// push commits and returns the revision once the GitRepository stored it.
func (f *fleet) push(files map[string]string) string {
	f.b.Helper()
	sha := f.srv.Commit(f.b, "fleet.git", gitserver.Commit{Files: files})
	token := "push-" + sha
	patch := client.MergeFrom(f.repo.DeepCopy())
	f.repo.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token}
	if err := f.env.Client.Patch(context.Background(), f.repo, patch); err != nil {
		f.b.Fatal(err)
	}
	waitHandled(f.b, f.env, f.repo, token)
	return "main@sha1:" + sha
}

func (f *fleet) kustomization(name, path string, change func(*kustomizev1.KustomizationSpec)) *kustomizev1.Kustomization {
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      path, Prune: true, TargetNamespace: f.ns,
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 5 * time.Minute},
		},
	}
	if change != nil {
		change(&k.Spec)
	}
	if err := f.env.Client.Create(context.Background(), k); err != nil {
		f.b.Fatal(err)
	}
	return k
}

// waitApplied polls until every Kustomization in the namespace (want of
// them) is Ready at revision.
func (f *fleet) waitApplied(want int, revision string) {
	f.b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for {
		var list kustomizev1.KustomizationList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			f.b.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			k := &list.Items[i]
			if conditions.IsReady(k) && (revision == "" || k.Status.LastAppliedRevision == revision) {
				done++
			}
		}
		if done == want {
			return
		}
		select {
		case <-ctx.Done():
			f.b.Fatalf("timed out: %d of %d Kustomizations ready at %s", done, want, revision)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func configMap(name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  value: %q\n", name, value)
}

// BenchmarkDependsOnChain measures the time from a commit stored by the
// source to the last of a dependsOn chain of N Kustomizations (one
// ConfigMap each, wait: true) Ready at the new revision, with Flux's
// default --requeue-dependency of 30 s: dependents follow through watches.
func BenchmarkDependsOnChain(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("chain-%d", n), func(b *testing.B) {
			files := func(v string) map[string]string {
				m := map[string]string{}
				for i := range n {
					m[fmt.Sprintf("chain/%02d/cm.yaml", i)] = configMap(fmt.Sprintf("link-%02d", i), v)
				}
				return m
			}
			f := newFleet(b, files("initial"))
			for i := range n {
				f.kustomization(fmt.Sprintf("link-%02d", i), fmt.Sprintf("./chain/%02d", i), func(s *kustomizev1.KustomizationSpec) {
					s.Wait = true
					if i > 0 {
						s.DependsOn = []meta.DependencyReference{{Name: fmt.Sprintf("link-%02d", i-1)}}
					}
				})
			}
			f.waitApplied(n, f.repo.Status.Artifact.Revision)
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				rev := f.push(files(fmt.Sprint(i)))
				start := time.Now()
				f.waitApplied(n, rev)
				total += time.Since(start)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/rollout")
		})
	}
}

// BenchmarkManyKustomizations is the shape of fluxcd/flux-benchmark: 1,000
// Kustomizations of 4 objects each on one GitRepository. It reports the
// time until all are Ready, API requests per Kustomization and the test
// process's peak RSS (controllers included).
func BenchmarkManyKustomizations(b *testing.B) {
	const count = 1000
	f := newFleet(b, map[string]string{
		"app/a.yaml": configMap("a", "1"), "app/b.yaml": configMap("b", "2"),
		"app/c.yaml": configMap("c", "3"), "app/d.yaml": configMap("d", "4"),
	})
	for b.Loop() {
		before := benchenv.Requests()
		start := time.Now()
		for i := range count {
			f.kustomization(fmt.Sprintf("ks-%04d", i), "./app", func(s *kustomizev1.KustomizationSpec) {
				s.NamePrefix = fmt.Sprintf("ks-%04d-", i)
			})
		}
		f.waitApplied(count, f.repo.Status.Artifact.Revision)
		b.ReportMetric(time.Since(start).Seconds(), "s/all-ready")
		b.ReportMetric(float64(benchenv.Requests()-before)/count, "api-requests/ks")
	}
	b.ReportMetric(float64(maxRSS(syscall.RUSAGE_SELF))/1024, "MiB-peak-rss")
}

// BenchmarkLargeKustomization applies one Kustomization of 1,500
// ConfigMaps: cold apply, a no-op re-reconcile (nothing changed: dry-run
// only), and a commit that changes one object.
func BenchmarkLargeKustomization(b *testing.B) {
	const objects = 1500
	files := func(changed string) map[string]string {
		m := map[string]string{}
		for i := range objects {
			v := "1"
			if i == 0 {
				v = changed
			}
			m[fmt.Sprintf("big/cm-%04d.yaml", i)] = configMap(fmt.Sprintf("cm-%04d", i), v)
		}
		return m
	}
	f := newFleet(b, files("initial"))
	var k *kustomizev1.Kustomization
	b.Run("cold-apply", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			k = f.kustomization(fmt.Sprintf("big-%d", i), "./big", func(s *kustomizev1.KustomizationSpec) {
				s.NamePrefix = fmt.Sprintf("b%d-", i)
			})
			f.waitApplied(i+1, f.repo.Status.Artifact.Revision)
			b.ReportMetric(time.Since(start).Seconds(), "s/apply")
		}
	})
	b.Run("no-op-reconcile", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			token := fmt.Sprintf("noop-%d", i)
			patch := client.MergeFrom(k.DeepCopy())
			k.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token}
			if err := f.env.Client.Patch(context.Background(), k, patch); err != nil {
				b.Fatal(err)
			}
			waitToken(b, f, k, token)
		}
	})
	b.Run("one-object-change", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			rev := f.push(files(fmt.Sprint(i)))
			waitRevision(b, f, k, rev)
		}
	})
	if msg := conditions.Get(k, meta.ReadyCondition).Message; !strings.HasPrefix(msg, "Applied revision") {
		b.Fatalf("large Kustomization not ready: %s", msg)
	}
}

func waitToken(b *testing.B, f *fleet, k *kustomizev1.Kustomization, token string) {
	b.Helper()
	poll(b, f, k, func() bool { return k.Status.LastHandledReconcileAt == token && conditions.IsReady(k) })
}

func waitRevision(b *testing.B, f *fleet, k *kustomizev1.Kustomization, rev string) {
	b.Helper()
	poll(b, f, k, func() bool { return k.Status.LastAppliedRevision == rev && conditions.IsReady(k) })
}

func poll(b *testing.B, f *fleet, k *kustomizev1.Kustomization, done func() bool) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			b.Fatal(err)
		}
		if done() {
			return
		}
		select {
		case <-ctx.Done():
			b.Fatalf("timed out waiting for %s", k.Name)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
