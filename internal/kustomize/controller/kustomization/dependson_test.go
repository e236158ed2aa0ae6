package kustomization

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// childKustomization is the manifest of a Kustomization the root applies.
func childKustomization(ns, name, path string, dependsOn ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
spec:
  interval: 1h
  path: %s
  prune: true
  wait: true
  targetNamespace: %s
  sourceRef:
    kind: GitRepository
    name: fleet
  postBuild:
    substituteFrom:
    - kind: ConfigMap
      name: cluster-vars
`, name, path, ns)
	if len(dependsOn) > 0 {
		b.WriteString("  dependsOn:\n")
		for _, d := range dependsOn {
			fmt.Fprintf(&b, "  - name: %s\n", d)
		}
	}
	return b.String()
}

// TestSeed003NewVariableRollsOutInOrder is the incident of seed 003: a root
// Kustomization (wait: false) owns the cluster-vars ConfigMap and creates
// platform (dependsOn the root) and two waves (dependsOn platform), all
// substituting from cluster-vars in strict mode. One commit adds a variable
// to cluster-vars and its first use in a wave. Because a dependent never
// builds a revision its dependency has not applied, no Kustomization may
// ever report a substitution failure, and all end at the new revision —
// promptly, although --requeue-dependency is an hour.
func TestSeed003NewVariableRollsOutInOrder(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	files := map[string]string{
		"clusters/dev/kustomization.yaml": "resources:\n- cluster-vars.yaml\n- platform.yaml\n- waves.yaml\n",
		"clusters/dev/cluster-vars.yaml":  configMapYAML("cluster-vars", "cluster_name", "dev"),
		"clusters/dev/platform.yaml":      childKustomization(ns, "platform", "./platform", "flux-system"),
		"clusters/dev/waves.yaml": childKustomization(ns, "wave-1", "./apps/wave-1", "platform") + "---\n" +
			childKustomization(ns, "wave-2", "./apps/wave-2", "platform"),
		"platform/cm.yaml":    configMapYAML("platform", "cluster", "${cluster_name}"),
		"apps/wave-1/cm.yaml": configMapYAML("wave-1", "cluster", "${cluster_name}"),
		"apps/wave-2/cm.yaml": configMapYAML("wave-2", "cluster", "${cluster_name}"),
	}
	f, sha := newFixtureIn(t, env, ns, files)
	root := f.kustomization("flux-system", "./clusters/dev", nil) // wait: false
	f.env.Create(t, root)
	names := []string{"flux-system", "platform", "wave-1", "wave-2"}
	f.waitAllApplied(names, "main@sha1:"+sha)

	watch := f.watchFailures(names)
	start := time.Now()
	sha = f.push(gitserver.Commit{Files: map[string]string{
		"clusters/dev/cluster-vars.yaml": strings.Replace(configMapYAML("cluster-vars", "cluster_name", "dev"),
			"\ndata:\n", "\ndata:\n  log_level: \"debug\"\n", 1),
		"apps/wave-1/cm.yaml": configMapYAML("wave-1", "cluster", "${cluster_name}") + "  level: ${log_level}\n",
	}, Message: "add log_level and use it in wave-1"})
	f.waitAllApplied(names, "main@sha1:"+sha)
	t.Logf("new revision applied by all %d Kustomizations %s after the source stored it", len(names), time.Since(start).Round(time.Millisecond))

	if got := f.configMap("wave-1").Data["level"]; got != "debug" {
		t.Errorf("wave-1 level = %q, want debug", got)
	}
	if failures := watch(); len(failures) > 0 {
		t.Errorf("Kustomizations reported failures during the rollout:\n%s", strings.Join(failures, "\n"))
	}
}

func TestDependencyCycleIsReported(t *testing.T) {
	f, _ := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("a", "k", "v")})
	a := f.kustomization("a", "./app", func(s *kustomizev1.KustomizationSpec) { s.DependsOn = []meta.DependencyReference{{Name: "b"}} })
	b := f.kustomization("b", "./app", func(s *kustomizev1.KustomizationSpec) { s.DependsOn = []meta.DependencyReference{{Name: "a"}} })
	f.env.Create(t, a, b)
	// a may first see b missing; b's creation queues a again at once.
	want := fmt.Sprintf("dependency cycle: %s/a -> %s/b -> %s/a", f.ns, f.ns, f.ns)
	testenv.Eventually(t, testenv.DefaultTimeout, func(_ context.Context) (bool, string) {
		ready := f.waitFailed(a, "", meta.DependencyNotReadyReason)
		return ready.Message == want, ready.Message
	})
	if s := conditions.Get(a, meta.StalledCondition); s == nil || s.Reason != meta.DependencyNotReadyReason {
		t.Errorf("Stalled = %+v, want True with DependencyNotReady", s)
	}
	if !f.absent("a") {
		t.Error("a member of a cycle applied its objects")
	}

	// Breaking the cycle lets both through, without waiting for a timer.
	f.env.Update(t, b, func() { b.Spec.DependsOn = nil })
	f.waitApplied(b, f.repo.Status.Artifact.Revision)
	f.waitApplied(a, f.repo.Status.Artifact.Revision)
}

// newFixtureIn is newFixture for a namespace the caller already has.
func newFixtureIn(t *testing.T, env *testenv.Env, ns string, files map[string]string) (*fixture, string) {
	t.Helper()
	f := &fixture{t: t, env: env, ns: ns, srv: gitserver.New(t, gitserver.Options{})}
	f.srv.InitRepo(t, "fleet.git")
	sha := f.srv.Commit(t, "fleet.git", gitserver.Commit{Files: files, Message: "first"})
	f.repo = newGitRepository(ns, f.srv.HTTPURL("fleet.git"))
	env.Create(t, f.repo)
	f.waitSource("main@sha1:" + sha)
	return f, sha
}

// waitAllApplied waits until every named Kustomization is Ready at revision.
func (f *fixture) waitAllApplied(names []string, revision string) {
	f.t.Helper()
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		for _, name := range names {
			var k kustomizev1.Kustomization
			if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &k); err != nil {
				return false, err.Error()
			}
			if !conditions.IsReady(&k) || k.Status.LastAppliedRevision != revision {
				r := conditions.Get(&k, meta.ReadyCondition)
				if r == nil {
					return false, name + ": no Ready condition"
				}
				return false, fmt.Sprintf("%s: %s %s (applied %s)", name, r.Reason, r.Message, k.Status.LastAppliedRevision)
			}
		}
		return true, ""
	})
}

// watchFailures polls the named Kustomizations every 20 ms in the
// background and returns a function that stops and lists every failure
// reason other than waiting for a dependency, plus any BuildFailed event.
func (f *fixture) watchFailures(names []string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var failures []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, name := range names {
				var k kustomizev1.Kustomization
				if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &k); err != nil {
					continue
				}
				if r := conditions.Get(&k, meta.ReadyCondition); r != nil && r.Status == "False" &&
					r.Reason != meta.DependencyNotReadyReason {
					mu.Lock()
					failures = append(failures, name+": "+r.Reason+": "+r.Message)
					mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() []string {
		cancel()
		<-done
		var events corev1.EventList
		if err := f.env.Client.List(context.Background(), &events, client.InNamespace(f.ns)); err == nil {
			for _, e := range events.Items {
				if e.Type == corev1.EventTypeWarning {
					failures = append(failures, "event "+e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
				}
			}
		}
		return failures
	}
}

// TestLabelledConfigMapChangeReconcilesAtOnce changes a substituteFrom
// ConfigMap labelled reconcile.fluxcd.io/watch: Enabled: the Kustomization
// (interval one hour) applies the new value without a reconcile request.
func TestLabelledConfigMapChangeReconcilesAtOnce(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/cm.yaml": configMapYAML("greeting", "text", "hello ${name}")})
	vars := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "vars", Namespace: f.ns, Labels: map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}},
		Data:       map[string]string{"name": "world"},
	}
	f.env.Create(t, vars)
	k := f.kustomization("app", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.PostBuild = &kustomizev1.PostBuild{SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "vars"}}}
	})
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if got := f.configMap("greeting").Data["text"]; got != "hello world" {
		t.Fatalf("text = %q", got)
	}
	f.env.Update(t, vars, func() { vars.Data["name"] = "weir" })
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		got := f.configMap("greeting").Data["text"]
		return got == "hello weir", "text = " + got
	})
}
