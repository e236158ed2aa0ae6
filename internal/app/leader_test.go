package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// The lease timings of the leader-election tests: short, so a takeover
// after a kill is seconds, with Flux's proportions (35s/30s/5s).
const (
	testLease = 6 * time.Second
	testRenew = 5 * time.Second
	testRetry = time.Second
)

// replicas starts n weir-controller processes of one Deployment: one
// binary, --enable-leader-election, the Lease in ns (RUNTIME_NAMESPACE, as
// Flux's manifests set it), each with its own storage, as each Pod of a
// Deployment has its own emptyDir. The first is started and holds the
// Lease before the others start, so it is the leader.
func replicas(t *testing.T, env *testenv.Env, ns string, n int, extra ...string) []*controllerProcess {
	t.Helper()
	bin := buildController(t)
	var ps []*controllerProcess
	for i := range n {
		p := newControllerProcessOf(t, env, bin, "source,kustomize")
		p.env = append(p.env, "RUNTIME_NAMESPACE="+ns)
		for j, a := range p.args {
			if a == "--enable-leader-election=false" {
				p.args[j] = "--enable-leader-election=true"
			}
		}
		p.args = append(p.args, "--leader-election-lease-duration="+testLease.String(),
			"--leader-election-renew-deadline="+testRenew.String(),
			"--leader-election-retry-period="+testRetry.String())
		p.args = append(p.args, extra...)
		p.start()
		if i == 0 {
			waitLeader(t, env, ns, "", p)
		}
		ps = append(ps, p)
	}
	return ps
}

// leaseOf reads the Lease the replicas share.
func leaseOf(ctx context.Context, env *testenv.Env, ns string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "weir-source-kustomize"}, lease)
	return lease, err
}

// waitLeader waits until the Lease has a holder other than previous, and
// that holder's process is want: its controllers started, which only the
// leader's do.
func waitLeader(t *testing.T, env *testenv.Env, ns, previous string, want *controllerProcess) {
	t.Helper()
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		lease, err := leaseOf(ctx, env, ns)
		if err != nil {
			return false, err.Error()
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" || *lease.Spec.HolderIdentity == previous {
			return false, fmt.Sprintf("lease held by %q", ptrString(lease.Spec.HolderIdentity))
		}
		return want.logContains(workersStarted), "the expected replica has not started its controllers"
	})
}

// deleteWhileRunning deletes ks when the test ends, before the replicas
// are killed (cleanups run last registered first), and waits until a live
// replica removed its finalizer: a Kustomization left with a finalizer
// and no controller would be reconciled by the next test's controllers,
// against a storage server that is gone.
func deleteWhileRunning(t *testing.T, env *testenv.Env, ks *kustomizev1.Kustomization) {
	t.Helper()
	t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), ks); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", ks.Name, err)
			return
		}
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(ks), &kustomizev1.Kustomization{})
			return apierrors.IsNotFound(err), "Kustomization still there"
		})
	})
}

// workersStarted is the log line of a controller starting its workers,
// which a replica does once it leads.
const workersStarted = `"msg":"Starting workers"`

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (p *controllerProcess) logContains(s string) bool {
	b, err := os.ReadFile(p.log)
	return err == nil && strings.Contains(string(b), s)
}

// TestLeaderKilledMidApplyStandbyFinishes runs two replicas with leader
// election and kills the leader with SIGKILL while the first apply of a
// Kustomization of 1,500 ConfigMaps is writing them. The standby takes the
// Lease once it expires, rebuilds the GitRepository's artifact in its own
// storage (the dead leader's is gone with its Pod) and finishes the apply:
// every ConfigMap applied once by the kustomize-controller field manager,
// the inventory whole, nothing orphaned.
func TestLeaderKilledMidApplyStandbyFinishes(t *testing.T) {
	const count = 1500
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ps := replicas(t, env, ns, 2)
	leader, standby := ps[0], ps[1]
	first, err := leaseOf(context.Background(), env, ns)
	if err != nil {
		t.Fatal(err)
	}
	holder := ptrString(first.Spec.HolderIdentity)

	ks := configMapsKustomization(t, env, ns, count, 5*time.Minute)
	deleteWhileRunning(t, env, ks)
	key := client.ObjectKeyFromObject(ks)
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(context.Context) (bool, string) {
		return env.OwnedConfigMaps(t, ns, key) > 0, "no ConfigMap applied yet"
	})
	if standby.logContains(workersStarted) {
		t.Fatal("the standby started its controllers while the leader was alive")
	}
	leader.kill()
	killed := time.Now()
	atKill := env.OwnedConfigMaps(t, ns, key)

	waitLeader(t, env, ns, holder, standby)
	tookOver := time.Since(killed)
	t.Logf("%d of %d ConfigMaps applied at the kill; the standby held the lease %.1fs after it (lease duration %s)",
		atKill, count, tookOver.Seconds(), testLease)
	if limit := testLease + 2*testRetry + 3*time.Second; tookOver > limit {
		t.Errorf("the standby took %s to take over, more than the lease duration and two retry periods (%s)", tookOver, limit)
	}

	waitReconciled(t, env, ks, "")
	t.Logf("the Kustomization was Ready with all %d ConfigMaps %.1fs after the kill", count, time.Since(killed).Seconds())
	if n := env.OwnedConfigMaps(t, ns, key); n != count {
		t.Errorf("%d ConfigMaps after the takeover, want %d", n, count)
	}
	if n := len(ks.Status.Inventory.Entries); n != count {
		t.Errorf("inventory holds %d entries, want %d", n, count)
	}
	repo := &sourcev1.GitRepository{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ks.Spec.SourceRef.Name}, repo); err != nil {
		t.Fatal(err)
	}
	if a := repo.Status.Artifact; a == nil || !strings.Contains(a.URL, standby.addr) {
		t.Errorf("the GitRepository's artifact is not served by the new leader (%s): %+v", standby.addr, a)
	}
	assertAppliedOnceByKustomize(t, env, ns, count)
}

// assertAppliedOnceByKustomize checks every ConfigMap of the namespace the
// Kustomization applied has one field manager, the kustomize
// controller's, applying: a replica that wrote through another path (an
// update, a second manager) would show.
func assertAppliedOnceByKustomize(t *testing.T, env *testenv.Env, ns string, count int) {
	t.Helper()
	var list corev1.ConfigMapList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{kustomizev1.GroupVersion.Group + "/name": "many"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != count {
		t.Fatalf("%d labelled ConfigMaps, want %d", len(list.Items), count)
	}
	for _, cm := range list.Items {
		if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "kustomize-controller" ||
			cm.ManagedFields[0].Operation != "Apply" {
			t.Fatalf("ConfigMap %s has managers %+v, want one Apply by kustomize-controller", cm.Name, cm.ManagedFields)
		}
	}
}

// TestLeaderStoppedReleasesTheLease stops the leader gracefully (SIGTERM,
// as a rolling update does): with --leader-election-release-on-cancel
// (Flux's default, true) it gives the Lease up, so the standby takes over
// at its next retry instead of waiting out the lease duration, and
// reconciles what the leader had not.
func TestLeaderStoppedReleasesTheLease(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ps := replicas(t, env, ns, 2, "--leader-election-lease-duration=60s", "--leader-election-renew-deadline=50s")
	leader, standby := ps[0], ps[1]
	first, err := leaseOf(context.Background(), env, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(leader.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	_ = leader.cmd.Wait()
	leader.cmd = nil
	waitLeader(t, env, ns, ptrString(first.Spec.HolderIdentity), standby)
	tookOver := time.Since(stopped)
	t.Logf("the standby held the released lease %.1fs after SIGTERM (lease duration 60s)", tookOver.Seconds())
	if tookOver > 30*time.Second {
		t.Errorf("the standby took %s: the lease was not released at shutdown", tookOver)
	}
	ks := configMapsKustomization(t, env, ns, 3, time.Minute)
	deleteWhileRunning(t, env, ks)
	waitReconciled(t, env, ks, "")
}
