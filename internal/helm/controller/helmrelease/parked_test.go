package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// unschedulable is the values of a release whose Deployment never rolls
// out (no node matches it).
var unschedulable = &helmv2.Values{Raw: []byte(`{"unschedulable":true}`)}

// waitHeld waits until release name's revision v is held in storage in
// status, as Helm's storage shows a release while its waiter waits, and
// hr shows the action in progress with Flux's message.
func (f *fixture) waitHeld(hr *helmv2.HelmRelease, name string, v int, status rcommon.Status, progress string) {
	f.t.Helper()
	store := helmStorage(f.t, f.env, f.ns)
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		rls, err := store.Get(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v))
		if err != nil {
			return false, err.Error()
		}
		if got := rls.(*releasev1.Release).Info.Status; got != status {
			return false, fmt.Sprintf("v%d is %s", v, got)
		}
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		ready, reconciling := conditions.Get(hr, meta.ReadyCondition), conditions.Get(hr, meta.ReconcilingCondition)
		return ready != nil && ready.Status == metav1.ConditionUnknown && ready.Message == progress &&
				reconciling != nil && reconciling.Status == metav1.ConditionTrue,
			fmt.Sprintf("conditions %v", describe(hr))
	})
}

// TestParkedWaitFreesTheWorker: the harness runs 4 workers. Five
// releases whose Deployments never roll out would hold all of them in
// Helm's waiter; parked, their workers are free, and a sixth release is
// installed and Ready while the five still wait (Ready Unknown with
// Flux's progress message, their revisions pending-install in storage).
func TestParkedWaitFreesTheWorker(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	slow := make([]*helmv2.HelmRelease, 5)
	for i := range slow {
		slow[i] = f.helmRelease(fmt.Sprintf("slow-%d", i), func(s *helmv2.HelmReleaseSpec) {
			s.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
			s.Values = unschedulable
		})
		f.env.Create(t, slow[i])
	}
	for i, hr := range slow {
		f.waitHeld(hr, fmt.Sprintf("slow-%d", i), 1, rcommon.StatusPendingInstall, "Running 'install' action with timeout of 10m0s")
	}

	fast := f.helmRelease("fast", nil)
	start := time.Now()
	f.env.Create(t, fast)
	f.waitReady(fast, fmt.Sprintf("Helm install succeeded for release %s/fast.v1 with chart app@1.0.0", f.ns))
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the sixth release took %s", took)
	}
	if c := conditions.Get(fast, helmv2.ReleasedCondition); c == nil || c.Reason != helmv2.InstallSucceededReason {
		t.Errorf("Released = %+v", c)
	}
	if h := fast.Status.History.Latest(); h == nil || h.Version != 1 || h.Status != "deployed" || h.Action != "install" {
		t.Errorf("history = %v", historyOf(fast))
	}
	f.env.AssertEvent(t, fast, helmv2.InstallSucceededReason,
		fmt.Sprintf("Helm install succeeded for release %s/fast.v1 with chart app@1.0.0", f.ns))
	rls, err := helmStorage(t, f.env, f.ns).Get("sh.helm.release.v1.fast.v1")
	if err != nil {
		t.Fatal(err)
	}
	if info := rls.(*releasev1.Release).Info; info.Status != rcommon.StatusDeployed || info.Description != "Install complete" {
		t.Errorf("fast.v1 in storage: %s %q", info.Status, info.Description)
	}
	for i, hr := range slow {
		f.waitHeld(hr, fmt.Sprintf("slow-%d", i), 1, rcommon.StatusPendingInstall, "Running 'install' action with timeout of 10m0s")
		if len(hr.Status.History) != 0 {
			t.Errorf("%s history = %v, want none until the wait ends", hr.Name, historyOf(hr))
		}
	}
}

// TestParkedWaitTimesOut: a release that never rolls out fails when the
// install timeout passes, with the error Helm's kstatus waiter returns,
// recorded in storage as Helm records it; with no retries left the
// HelmRelease stalls, as before.
func TestParkedWaitTimesOut(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("never", func(s *helmv2.HelmReleaseSpec) {
		s.Install = &helmv2.Install{Timeout: &metav1.Duration{Duration: 3 * time.Second}}
		s.Values = unschedulable
	})
	f.env.Create(t, hr)
	f.waitCondition(hr, meta.StalledCondition, metav1.ConditionTrue, release.RetriesExceededReason)

	released := conditions.Get(hr, helmv2.ReleasedCondition)
	prefix := fmt.Sprintf("Helm install failed for release %s/never with chart app@1.0.0: resource Deployment/%s/never not ready. status: InProgress, message: ", f.ns, f.ns)
	if released == nil || released.Reason != helmv2.InstallFailedReason || !strings.HasPrefix(released.Message, prefix) ||
		!strings.HasSuffix(released.Message, "\ncontext deadline exceeded") {
		t.Errorf("Released = %+v, want %q…\\ncontext deadline exceeded", released, prefix)
	}
	f.env.AssertEventPrefix(t, hr, helmv2.InstallFailedReason, prefix)
	if hr.Status.InstallFailures != 1 {
		t.Errorf("installFailures = %d", hr.Status.InstallFailures)
	}
	rls, err := helmStorage(t, f.env, f.ns).Get("sh.helm.release.v1.never.v1")
	if err != nil {
		t.Fatal(err)
	}
	info := rls.(*releasev1.Release).Info
	if want := fmt.Sprintf("Release %q failed: resource Deployment/%s/never not ready", "never", f.ns); info.Status != rcommon.StatusFailed ||
		!strings.HasPrefix(info.Description, want) {
		t.Errorf("v1 in storage: %s %q, want failed %q…", info.Status, info.Description, want)
	}
	if h := hr.Status.History.Latest(); h == nil || h.Version != 1 || h.Status != "failed" || h.Action != "install" {
		t.Errorf("history = %v", historyOf(hr))
	}
	// The parked wait is part of the action: its duration covers the
	// 3 s timeout, not only Helm's call.
	if d := hr.Status.LastAttemptedReleaseActionDuration; d == nil || d.Duration < 3*time.Second {
		t.Errorf("lastAttemptedReleaseActionDuration = %v, want at least the 3s install timeout", d)
	}
}

// TestParkedWaitResumesAfterRestart plays a controller restarted while
// an install waits: its parked waits are gone with its memory. The next
// reconcile finds the held revision (pending-install, the HelmRelease
// still showing the install in progress), judges its objects again, and,
// once the Deployment rolls out (fixed by hand), marks it deployed: one
// revision in storage, no second install.
func TestParkedWaitResumesAfterRestart(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("resumed", func(s *helmv2.HelmReleaseSpec) {
		s.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		s.Values = unschedulable
	})
	f.env.Create(t, hr)
	f.waitHeld(hr, "resumed", 1, rcommon.StatusPendingInstall, "Running 'install' action with timeout of 10m0s")

	key := client.ObjectKeyFromObject(hr)
	reconciler.unpark(key)
	if reconciler.waits.get(key) != nil {
		t.Fatal("the parked wait is still in memory")
	}
	deploy := &appsv1.Deployment{}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "resumed"}, deploy); err != nil {
			return false, err.Error()
		}
		patch := client.MergeFrom(deploy.DeepCopy())
		deploy.Spec.Template.Spec.NodeSelector = nil
		err := f.env.Client.Patch(ctx, deploy, patch)
		return err == nil, fmt.Sprint(err)
	})
	// What a restarted controller does first: reconcile every HelmRelease.
	f.env.RequestReconcile(t, hr)

	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/resumed.v1 with chart app@1.0.0", f.ns))
	if got := f.storageSecrets("resumed"); !slices.Equal(got, []string{"sh.helm.release.v1.resumed.v1"}) {
		t.Errorf("storage Secrets = %v, want v1 only", got)
	}
	rls, err := helmStorage(t, f.env, f.ns).Get("sh.helm.release.v1.resumed.v1")
	if err != nil {
		t.Fatal(err)
	}
	if info := rls.(*releasev1.Release).Info; info.Status != rcommon.StatusDeployed || info.Description != "Install complete" {
		t.Errorf("v1 in storage: %s %q", info.Status, info.Description)
	}
	if len(hr.Status.History) != 1 || hr.Status.History[0].Action != "install" || hr.Status.InstallFailures != 0 {
		t.Errorf("history %v, installFailures %d", historyOf(hr), hr.Status.InstallFailures)
	}
}
