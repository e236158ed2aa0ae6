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
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestInstallUpgradeUninstall follows one release through its life:
// install, an inline values change, a valuesFrom Secret change, deletion.
func TestInstallUpgradeUninstall(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	values := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "app-values", Namespace: f.ns},
		StringData: map[string]string{"values.yaml": "tag: v1\n"},
	}
	f.env.Create(t, values)
	hr := f.helmRelease("app", func(s *helmv2.HelmReleaseSpec) {
		s.ValuesFrom = []helmv2.ValuesReference{{Kind: "Secret", Name: "app-values"}}
		s.Values = &helmv2.Values{Raw: []byte(`{"greeting":"hi"}`)}
	})
	f.env.Create(t, hr)

	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))
	if got := f.storageSecrets("app"); !slices.Equal(got, []string{"sh.helm.release.v1.app.v1"}) {
		t.Errorf("storage Secrets = %v", got)
	}
	if c := conditions.Get(hr, helmv2.ReleasedCondition); c == nil || c.Reason != helmv2.InstallSucceededReason {
		t.Errorf("Released = %+v", c)
	}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns}}
	f.env.WaitForCurrent(t, deploy, testenv.DefaultTimeout)
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), deploy); err != nil {
		t.Fatal(err)
	}
	if deploy.Labels[release.OriginNameLabel] != "app" || deploy.Labels[release.OriginNamespaceLabel] != f.ns {
		t.Errorf("Deployment labels = %v, want Flux's origin labels", deploy.Labels)
	}
	st := hr.Status
	if len(st.History) != 1 || st.History[0].Version != 1 || st.History[0].Status != "deployed" || st.History[0].Action != "install" ||
		st.LastAttemptedRevision != "1.0.0" || st.LastAttemptedReleaseAction != helmv2.ReleaseActionInstall ||
		st.LastAttemptedConfigDigest != st.History[0].ConfigDigest || st.LastAttemptedValuesChecksum == "" || st.StorageNamespace != f.ns {
		t.Errorf("status after install = %+v, history %+v", st, st.History.Latest())
	}
	if d := st.LastAttemptedReleaseActionDuration; d == nil || d.Duration <= 0 {
		t.Errorf("lastAttemptedReleaseActionDuration = %v, want the install's duration", d)
	}
	if got := f.configMap("app-app").Data["greeting"]; got != "hi" {
		t.Errorf("greeting = %q", got)
	}
	f.env.AssertEvent(t, hr, helmv2.InstallSucceededReason, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))

	f.env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"greeting":"hello again"}`)} })
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v2 with chart app@1.0.0", f.ns))
	if got := f.configMap("app-app").Data["greeting"]; got != "hello again" {
		t.Errorf("greeting after upgrade = %q", got)
	}
	if len(hr.Status.History) != 2 || hr.Status.History[1].Status != "superseded" {
		t.Errorf("history after upgrade = %v", historyOf(hr))
	}

	f.env.Update(t, values, func() { values.StringData = map[string]string{"values.yaml": "tag: v2\n"} })
	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v3 with chart app@1.0.0", f.ns))
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), deploy); err != nil {
		t.Fatal(err)
	}
	if img := deploy.Spec.Template.Spec.Containers[0].Image; img != "example.com/app:v2" {
		t.Errorf("image after valuesFrom change = %s", img)
	}

	// Nothing changed: a reconcile makes no new revision.
	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v3 with chart app@1.0.0", f.ns))
	if got := len(f.storageSecrets("app")); got != 3 {
		t.Errorf("%d storage Secrets after an idle reconcile, want 3", got)
	}

	if err := f.env.Client.Delete(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	f.waitGone(hr)
	f.waitGone(deploy)
	f.waitGone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-app", Namespace: f.ns}})
	if got := f.storageSecrets("app"); len(got) != 0 {
		t.Errorf("storage Secrets after uninstall = %v", got)
	}
}

func historyOf(hr *helmv2.HelmRelease) []string {
	out := []string{}
	for _, s := range hr.Status.History {
		out = append(out, fmt.Sprintf("v%d:%s", s.Version, s.Status))
	}
	return out
}

// TestKeepHistory: deleting a HelmRelease with keepHistory removes the
// objects and leaves the release records, marked uninstalled.
func TestKeepHistory(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("kept", func(s *helmv2.HelmReleaseSpec) {
		s.Uninstall = &helmv2.Uninstall{KeepHistory: true}
	})
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/kept.v1 with chart app@1.0.0", f.ns))
	if err := f.env.Client.Delete(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	f.waitGone(hr)
	f.waitGone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept-app", Namespace: f.ns}})
	var secret corev1.Secret
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "sh.helm.release.v1.kept.v1"}, &secret); err != nil {
		t.Fatalf("release record gone with keepHistory: %v", err)
	}
	if secret.Labels["status"] != "uninstalled" {
		t.Errorf("record status = %q, want uninstalled", secret.Labels["status"])
	}
}

// TestFailedUpgradeRollsBackThenStalls: an upgrade whose Deployment never
// becomes available fails; it is rolled back and retried once, rolled
// back again (remediateLastFailure), and then the release is Stalled.
func TestFailedUpgradeRollsBackThenStalls(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("flaky", func(s *helmv2.HelmReleaseSpec) {
		s.Upgrade = &helmv2.Upgrade{
			Timeout:     &metav1.Duration{Duration: 3 * time.Second},
			Remediation: &helmv2.UpgradeRemediation{Retries: 1},
		}
	})
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/flaky.v1 with chart app@1.0.0", f.ns))

	f.env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"unschedulable":true}`)} })
	stalled := f.waitCondition(hr, meta.StalledCondition, metav1.ConditionTrue, release.RetriesExceededReason)
	want := fmt.Sprintf("Failed to upgrade after 2 attempt(s); fix the cause, then run 'weir reconcile hr flaky -n %s --reset'", f.ns)
	if stalled.Message != want {
		t.Errorf("Stalled message = %q, want %q", stalled.Message, want)
	}
	if ready := conditions.Get(hr, meta.ReadyCondition); ready.Status != metav1.ConditionFalse || ready.Reason != release.RetriesExceededReason {
		t.Errorf("Ready = %+v", ready)
	}
	if c := conditions.Get(hr, helmv2.RemediatedCondition); c == nil || c.Status != metav1.ConditionTrue || c.Reason != helmv2.RollbackSucceededReason {
		t.Errorf("Remediated = %+v", c)
	}
	if hr.Status.UpgradeFailures != 2 || hr.Status.ObservedGeneration != hr.Generation {
		t.Errorf("upgradeFailures = %d, observedGeneration %d of %d", hr.Status.UpgradeFailures, hr.Status.ObservedGeneration, hr.Generation)
	}
	// v1 install, v2 failed, v3 rollback, v4 failed, v5 rollback.
	latest := hr.Status.History.Latest()
	if latest == nil || latest.Version != 5 || latest.Status != "deployed" || latest.Action != "rollback" {
		t.Errorf("history = %v", historyOf(hr))
	}
	f.env.AssertEventPrefix(t, hr, helmv2.UpgradeFailedReason,
		fmt.Sprintf("Helm upgrade failed for release %s/flaky with chart app@1.0.0: ", f.ns))
	f.env.AssertEvent(t, hr, helmv2.RollbackSucceededReason,
		fmt.Sprintf("Helm rollback to previous release %s/flaky.v1 with chart app@1.0.0 succeeded", f.ns))

	// A fix (new values) resets the counters and upgrades.
	f.env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"greeting":"fixed"}`)} })
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/flaky.v6 with chart app@1.0.0", f.ns))
	if hr.Status.UpgradeFailures != 0 || conditions.Get(hr, helmv2.RemediatedCondition) != nil {
		t.Errorf("after the fix: upgradeFailures %d, Remediated %+v", hr.Status.UpgradeFailures, conditions.Get(hr, helmv2.RemediatedCondition))
	}
}

// helmStorage opens the Helm storage Secrets of namespace ns as the SDK
// does, to play a controller killed mid-action or a person running helm.
func helmStorage(t *testing.T, env *testenv.Env, ns string) *driver.Secrets {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return driver.NewSecrets(cs.CoreV1().Secrets(ns))
}

// TestPendingReleaseIsUnlocked plays a controller killed during an
// upgrade: the newest record is left pending-upgrade. The next reconcile
// unlocks it, says so in an event, and upgrades.
func TestPendingReleaseIsUnlocked(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("stuck", nil)
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/stuck.v1 with chart app@1.0.0", f.ns))

	store := helmStorage(t, f.env, f.ns)
	rls, err := store.Get("sh.helm.release.v1.stuck.v1")
	if err != nil {
		t.Fatal(err)
	}
	pending := *rls.(*releasev1.Release)
	info := *pending.Info
	info.Status = rcommon.StatusPendingUpgrade
	pending.Info, pending.Version = &info, 2
	if err := store.Create("sh.helm.release.v1.stuck.v2", &pending); err != nil {
		t.Fatal(err)
	}

	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/stuck.v3 with chart app@1.0.0", f.ns))
	f.env.AssertEvent(t, hr, pendingReleaseReason,
		fmt.Sprintf("Unlocked Helm release %s/stuck.v2 with chart app@1.0.0 in pending-upgrade state", f.ns))
	unlocked, err := store.Get("sh.helm.release.v1.stuck.v2")
	if err != nil {
		t.Fatal(err)
	}
	if r := unlocked.(*releasev1.Release); r.Info.Status != rcommon.StatusSuperseded && r.Info.Status != rcommon.StatusFailed {
		t.Errorf("v2 status = %s", r.Info.Status)
	}
}

// TestAdoptsReleaseInstalledOutside: a release installed with the Helm SDK
// under the same name is upgraded, not reinstalled.
func TestAdoptsReleaseInstalledOutside(t *testing.T) {
	f := newFixture(t)
	ch := newChart("1.0.0")
	f.publish(ch)
	hr := f.helmRelease("byhand", nil)
	helm, err := release.NewClient(f.env.Config, release.Options{Name: "byhand", Namespace: f.ns, StorageNamespace: f.ns, MaxHistory: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := helm.Install(context.Background(), hr, ch, map[string]any{"greeting": "by hand"}, false); err != nil {
		t.Fatal(err)
	}

	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/byhand.v2 with chart app@1.0.0", f.ns))
	if got := f.configMap("byhand-app").Data["greeting"]; got != "hello" {
		t.Errorf("greeting = %q, want the chart default", got)
	}
	if got := f.storageSecrets("byhand"); len(got) != 2 {
		t.Errorf("storage Secrets = %v", got)
	}
}

// TestFailedInstallIsUninstalledThenStalls: an install that never becomes
// ready is uninstalled and tried once more (retries: 1), then the release
// is Stalled; install remediation does not remediate the last failure by
// default, so the failed record stays for a person to look at.
func TestFailedInstallIsUninstalledThenStalls(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("broken", func(s *helmv2.HelmReleaseSpec) {
		s.Install = &helmv2.Install{
			Timeout:     &metav1.Duration{Duration: 3 * time.Second},
			Remediation: &helmv2.InstallRemediation{Retries: 1},
		}
		s.Values = &helmv2.Values{Raw: []byte(`{"unschedulable":true}`)}
		s.Timeout = &metav1.Duration{Duration: 3 * time.Second}
	})
	f.env.Create(t, hr)
	stalled := f.waitCondition(hr, meta.StalledCondition, metav1.ConditionTrue, release.RetriesExceededReason)
	if want := fmt.Sprintf("Failed to install after 2 attempt(s); fix the cause, then run 'weir reconcile hr broken -n %s --reset'", f.ns); stalled.Message != want {
		t.Errorf("Stalled = %q, want %q", stalled.Message, want)
	}
	if c := conditions.Get(hr, helmv2.RemediatedCondition); c == nil || c.Reason != helmv2.UninstallSucceededReason {
		t.Errorf("Remediated = %+v", c)
	}
	if got := f.storageSecrets("broken"); !slices.Equal(got, []string{"sh.helm.release.v1.broken.v1"}) {
		t.Errorf("storage Secrets = %v, want the failed v1", got)
	}
	if hr.Status.InstallFailures != 2 || hr.Status.LastAttemptedReleaseAction != helmv2.ReleaseActionInstall {
		t.Errorf("installFailures %d, last action %s", hr.Status.InstallFailures, hr.Status.LastAttemptedReleaseAction)
	}

	// `weir reconcile hr --reset` clears the counters: one more attempt,
	// an upgrade over the failed release (Flux's rule: a failed release
	// not counted against this desired state is upgraded).
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		token := time.Now().Format(time.RFC3339Nano)
		hr.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token, meta.ResetRequestAnnotation: token}
		return f.env.Client.Update(ctx, hr) == nil, "conflict"
	})
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		stalled := conditions.Get(hr, meta.StalledCondition)
		return hr.Status.LastHandledResetAt == hr.Annotations[meta.ResetRequestAnnotation] && stalled != nil &&
				strings.HasPrefix(stalled.Message, "Failed to upgrade after 1 attempt(s)"),
			fmt.Sprintf("reset handled %q, conditions %v", hr.Status.LastHandledResetAt, describe(hr))
	})
	if hr.Status.InstallFailures != 0 || hr.Status.UpgradeFailures != 1 {
		t.Errorf("after the reset: installFailures %d, upgradeFailures %d", hr.Status.InstallFailures, hr.Status.UpgradeFailures)
	}
}

// TestRetryOnFailure: the failed upgrade is left in place (no rollback)
// and tried again after retryInterval.
func TestRetryOnFailure(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("retry", func(s *helmv2.HelmReleaseSpec) {
		s.Upgrade = &helmv2.Upgrade{
			Timeout:  &metav1.Duration{Duration: 2 * time.Second},
			Strategy: &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure), RetryInterval: &metav1.Duration{Duration: time.Second}},
		}
	})
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/retry.v1 with chart app@1.0.0", f.ns))
	f.env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"unschedulable":true}`)} })
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(_ context.Context) (bool, string) {
		return len(f.storageSecrets("retry")) >= 3, fmt.Sprintf("storage %v", f.storageSecrets("retry"))
	})
	// Between attempts the retry shows progress (Ready=Unknown); after
	// one it is the failure.
	f.waitCondition(hr, meta.ReadyCondition, metav1.ConditionFalse, helmv2.UpgradeFailedReason)
	if conditions.Get(hr, helmv2.RemediatedCondition) != nil || conditions.IsTrue(hr, meta.StalledCondition) {
		t.Errorf("RetryOnFailure remediated or stalled: %+v", hr.Status.Conditions)
	}
}
