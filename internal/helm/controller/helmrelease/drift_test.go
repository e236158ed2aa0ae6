package helmrelease

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// secretTemplate renders a Secret holding .Values.password.
const secretTemplate = `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-creds
stringData:
  password: {{ .Values.password | default "chart-default-pw" | quote }}
`

// driftChart is newChart's ConfigMap and Deployment, and a Secret.
func driftChart() *chartv2.Chart {
	ch := newChart("1.0.0")
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/secret.yaml", Data: []byte(secretTemplate), ModTime: ch.ModTime})
	return ch
}

// driftRelease installs a release of driftChart with the given drift
// detection, waits until it is Ready, and checks its inventory.
func (f *fixture) driftRelease(name string, dd *helmv2.DriftDetection) *helmv2.HelmRelease {
	f.t.Helper()
	f.publish(driftChart())
	hr := f.helmRelease(name, func(s *helmv2.HelmReleaseSpec) {
		s.DriftDetection = dd
		s.Values = &helmv2.Values{Raw: []byte(`{"password":"original-pw-1234"}`)}
	})
	f.env.Create(f.t, hr)
	f.waitReady(hr, f.installed(name))
	want := []helmv2.ResourceRef{
		{ID: f.ns + "_" + name + "-app__ConfigMap", Version: "v1"},
		{ID: f.ns + "_" + name + "-creds__Secret", Version: "v1"},
		{ID: f.ns + "_" + name + "_apps_Deployment", Version: "v1"},
	}
	if hr.Status.Inventory == nil || !sameRefs(hr.Status.Inventory.Entries, want) {
		f.t.Errorf("inventory = %+v, want %+v", hr.Status.Inventory, want)
	}
	return hr
}

func (f *fixture) installed(name string) string {
	return fmt.Sprintf("Helm install succeeded for release %s/%s.v1 with chart app@1.0.0", f.ns, name)
}

func sameRefs(got, want []helmv2.ResourceRef) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[helmv2.ResourceRef]bool{}
	for _, r := range got {
		seen[r] = true
	}
	for _, r := range want {
		if !seen[r] {
			return false
		}
	}
	return true
}

// edit changes a live object as a person with kubectl would.
func (f *fixture) edit(obj client.Object, change func()) {
	f.t.Helper()
	ctx := context.Background()
	if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.t.Fatal(err)
	}
	change()
	if err := f.env.Client.Update(ctx, obj, client.FieldOwner("kubectl-edit")); err != nil {
		f.t.Fatal(err)
	}
}

// eventMessage waits for an event about hr with reason whose message
// starts with prefix, and returns the message.
func (f *fixture) eventMessage(hr *helmv2.HelmRelease, reason, prefix string) string {
	f.t.Helper()
	var msg string
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var list corev1.EventList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == hr.Name && ev.Reason == reason && strings.HasPrefix(ev.Message, prefix) {
				msg = ev.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("no event %s %q", reason, prefix)
	})
	return msg
}

// eventMessagesWith waits until the events about hr with reason whose
// message starts with prefix, taken together, hold every one of wants,
// and returns their messages joined. A run the controller began while the
// test was still tampering (queued by a source's status, say) reports
// part of the drift, the next run the rest: the test asserts what was
// reported, not how it was split across runs.
func (f *fixture) eventMessagesWith(hr *helmv2.HelmRelease, reason, prefix string, wants []string) string {
	f.t.Helper()
	var joined string
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var list corev1.EventList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		var msgs []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == hr.Name && ev.Reason == reason && strings.HasPrefix(ev.Message, prefix) {
				msgs = append(msgs, ev.Message)
			}
		}
		joined = strings.Join(msgs, "\n")
		for _, want := range wants {
			if !strings.Contains(joined, want) {
				return false, fmt.Sprintf("%s events lack %q:\n%s", reason, want, joined)
			}
		}
		return true, ""
	})
	return joined
}

// TestDriftEnabledCorrects: with mode enabled, hand edits to a Deployment
// and a ConfigMap and a deleted Secret are reported and corrected, and
// Ready stays True.
func TestDriftEnabledCorrects(t *testing.T) {
	f := newFixture(t)
	hr := f.driftRelease("fixed", &helmv2.DriftDetection{Mode: helmv2.DriftDetectionEnabled})
	if c := conditions.Get(hr, helmv2.DriftedCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != helmv2.NoDriftDetectedReason {
		t.Errorf("Drifted after install = %+v", c)
	}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "fixed", Namespace: f.ns}}
	f.edit(deploy, func() { deploy.Spec.Replicas = ptr.To[int32](3) })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fixed-app", Namespace: f.ns}}
	f.edit(cm, func() { cm.Data["greeting"] = "tampered" })
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fixed-creds", Namespace: f.ns}}
	if err := f.env.Client.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}

	f.env.RequestReconcile(t, hr)
	c := f.waitCondition(hr, helmv2.DriftedCondition, metav1.ConditionFalse, driftCorrectedReason)
	rel := fmt.Sprintf("%s/fixed.v1", f.ns)
	detected := f.eventMessagesWith(hr, helmv2.DriftDetectedReason, "Cluster state of release "+rel+" has drifted from the desired state:\n", []string{
		"Secret/" + f.ns + "/fixed-creds removed",
		"ConfigMap/" + f.ns + "/fixed-app changed (0 additions, 1 changes, 0 removals)",
		"Deployment/" + f.ns + "/fixed changed (0 additions, 1 changes, 0 removals)",
		"-  greeting: tampered\n+  greeting: hello",
		"-  replicas: 3\n+  replicas: 1",
	})
	corrected := f.eventMessagesWith(hr, driftCorrectedReason, "Cluster state of release "+rel+" has been corrected:\n", []string{
		"Secret/" + f.ns + "/fixed-creds created", "ConfigMap/" + f.ns + "/fixed-app configured", "Deployment/" + f.ns + "/fixed configured",
	})
	// The condition is the last run's: it names what that run corrected.
	if !strings.Contains(c.Message, "has been corrected:") {
		t.Errorf("Drifted condition after correction: %s", c.Message)
	}
	if strings.Contains(detected+corrected+c.Message, "original-pw-1234") {
		t.Error("the Secret's value is in the report")
	}
	if r := conditions.Get(hr, meta.ReadyCondition); r == nil || r.Status != metav1.ConditionTrue || r.Message != f.installed("fixed") {
		t.Errorf("Ready = %+v", r)
	}

	ctx := context.Background()
	for _, obj := range []client.Object{deploy, cm, secret} {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("%T %s after correction: %v", obj, obj.GetName(), err)
		}
	}
	if *deploy.Spec.Replicas != 1 || cm.Data["greeting"] != "hello" || string(secret.Data["password"]) != "original-pw-1234" {
		t.Errorf("not corrected: replicas %d, greeting %q, password %q", *deploy.Spec.Replicas, cm.Data["greeting"], secret.Data["password"])
	}

	// Corrected: the next check finds nothing, and makes no new revision.
	f.env.RequestReconcile(t, hr)
	f.waitCondition(hr, helmv2.DriftedCondition, metav1.ConditionFalse, helmv2.NoDriftDetectedReason)
	if got := len(f.storageSecrets("fixed")); got != 1 {
		t.Errorf("%d storage Secrets, want 1: drift correction is no Helm upgrade", got)
	}
}

// TestDriftWarnReports: with mode warn, an ignored field and an object
// annotated driftDetection: disabled are not drift; a Secret value changed
// by hand is reported with a masked diff and left as it is.
func TestDriftWarnReports(t *testing.T) {
	f := newFixture(t)
	hr := f.driftRelease("warned", &helmv2.DriftDetection{
		Mode:   helmv2.DriftDetectionWarn,
		Ignore: []meta.IgnoreRule{{Paths: []string{"/spec/replicas"}, Target: &meta.Selector{Kind: "Deployment"}}},
	})
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "warned", Namespace: f.ns}}
	f.edit(deploy, func() { deploy.Spec.Replicas = ptr.To[int32](2) })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "warned-app", Namespace: f.ns}}
	f.edit(cm, func() {
		cm.Annotations[helmv2.DriftDetectionMetadataKey] = "disabled"
		cm.Data["greeting"] = "mine now"
	})
	f.env.RequestReconcile(t, hr)
	f.env.WaitHandled(t, hr)
	if c := conditions.Get(hr, helmv2.DriftedCondition); c == nil || c.Reason != helmv2.NoDriftDetectedReason {
		t.Errorf("Drifted after ignored edits = %+v", c)
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "warned-creds", Namespace: f.ns}}
	f.edit(secret, func() { secret.Data["password"] = []byte("stolen-pw-5678") })
	f.env.RequestReconcile(t, hr)
	c := f.waitCondition(hr, helmv2.DriftedCondition, metav1.ConditionTrue, helmv2.DriftDetectedReason)
	prefix := fmt.Sprintf("Cluster state of release %s/warned.v1 has drifted from the desired state:\n", f.ns)
	event := f.eventMessage(hr, helmv2.DriftDetectedReason, prefix)
	for _, msg := range []string{c.Message, event} {
		for _, want := range []string{
			prefix + "Secret/" + f.ns + "/warned-creds changed (0 additions, 1 changes, 0 removals)\n\n",
			"--- Secret/" + f.ns + "/warned-creds (cluster)\n+++ Secret/" + f.ns + "/warned-creds (release)\n",
			"-  password: '***** (before)'\n+  password: '***** (after)'",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("report lacks %q:\n%s", want, msg)
			}
		}
		for _, secretValue := range []string{"stolen-pw-5678", "original-pw-1234",
			base64.StdEncoding.EncodeToString([]byte("stolen-pw-5678")), base64.StdEncoding.EncodeToString([]byte("original-pw-1234"))} {
			if strings.Contains(msg, secretValue) {
				t.Errorf("report shows a Secret value:\n%s", msg)
			}
		}
		if strings.Contains(msg, "Deployment/") || strings.Contains(msg, "ConfigMap/") {
			t.Errorf("report names an ignored object:\n%s", msg)
		}
	}
	if r := conditions.Get(hr, meta.ReadyCondition); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", r)
	}
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["password"]) != "stolen-pw-5678" {
		t.Error("warn mode corrected the Secret")
	}
}

func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		text string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"a\nbb\nccc\ndddd", 8, "a\nbb\n… 2 more lines not shown"},
		{"line1\nline2", 3, "… 2 more lines not shown"},
	} {
		if got := bounded(tc.text, tc.max); got != tc.want {
			t.Errorf("bounded(%q, %d) = %q, want %q", tc.text, tc.max, got, tc.want)
		}
	}
}

// TestInventory: status.inventory follows the release's manifest with drift
// detection off (and no Drifted condition): an upgrade to a chart without
// the Secret drops it.
func TestInventory(t *testing.T) {
	f := newFixture(t)
	hr := f.driftRelease("listed", nil)
	if c := conditions.Get(hr, helmv2.DriftedCondition); c != nil {
		t.Errorf("Drifted with drift detection off: %+v", c)
	}
	f.publish(newChart("1.1.0"))
	f.env.RequestReconcile(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/listed.v2 with chart app@1.1.0", f.ns))
	want := []helmv2.ResourceRef{
		{ID: f.ns + "_listed-app__ConfigMap", Version: "v1"},
		{ID: f.ns + "_listed_apps_Deployment", Version: "v1"},
	}
	if hr.Status.Inventory == nil || !sameRefs(hr.Status.Inventory.Entries, want) {
		t.Errorf("inventory after upgrade = %+v, want %+v", hr.Status.Inventory, want)
	}
}

func TestInventoryOf(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	got := inventoryOf([]*unstructured.Unstructured{
		obj("v1", "ServiceAccount", "apps", "app"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "app:reader"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		obj("v1", "ServiceAccount", "apps", "app"),
	})
	want := []helmv2.ResourceRef{
		{ID: "apps_app__ServiceAccount", Version: "v1"},
		{ID: "_app__reader_rbac.authorization.k8s.io_ClusterRole", Version: "v1"},
		{ID: "_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition", Version: "v1"},
	}
	if !cmp.Equal(got.Entries, want) {
		t.Errorf("inventoryOf: %s", cmp.Diff(want, got.Entries))
	}
	if got := inventoryOf(nil); got == nil || got.Entries == nil || len(got.Entries) != 0 {
		t.Errorf("empty manifest: %+v, want empty entries", got)
	}
}

// TestDriftCorrectionFailed: a correction the API server refuses (an
// admission policy denies recreating the Secret) is reported with Flux's
// DriftCorrectionFailed event, naming what was corrected nonetheless, and
// Drifted stays True.
func TestDriftCorrectionFailed(t *testing.T) {
	f := newFixture(t)
	hr := f.driftRelease("refused", &helmv2.DriftDetection{Mode: helmv2.DriftDetectionEnabled})
	f.denySecretCreation("refused-creds")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "refused-creds", Namespace: f.ns}}
	if err := f.env.Client.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "refused-app", Namespace: f.ns}}
	f.edit(cm, func() { cm.Data["greeting"] = "tampered" })

	f.env.RequestReconcile(t, hr)
	c := f.waitCondition(hr, helmv2.DriftedCondition, metav1.ConditionTrue, helmv2.DriftDetectedReason)
	prefix := fmt.Sprintf("Failed to partially correct cluster state of release %s/refused.v1:\nSecret/%s/refused-creds creation failure: ", f.ns, f.ns)
	msg := f.eventMessage(hr, driftCorrectionFailedReason, prefix)
	if want := "\n\nSuccessful corrections:\nConfigMap/" + f.ns + "/refused-app configured"; !strings.HasSuffix(msg, want) || !strings.HasPrefix(c.Message, prefix) {
		t.Errorf("DriftCorrectionFailed event:\n%s\ncondition:\n%s", msg, c.Message)
	}
	if got := f.configMap("refused-app").Data["greeting"]; got != "hello" {
		t.Errorf("greeting = %q: the ConfigMap was not corrected", got)
	}
	if r := conditions.Get(hr, meta.ReadyCondition); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", r)
	}
}

// denySecretCreation installs a ValidatingAdmissionPolicy that refuses to
// create a Secret of that name in the fixture's namespace, and waits until
// the API server enforces it.
func (f *fixture) denySecretCreation(name string) {
	f.t.Helper()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + f.ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: fmt.Sprintf("object.metadata.name != %q", name), Message: "denied by the test"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + f.ns},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.ns},
			}},
		},
	}
	f.env.Create(f.t, policy, binding)
	f.t.Cleanup(func() {
		_ = f.env.Client.Delete(context.Background(), binding)
		_ = f.env.Client.Delete(context.Background(), policy)
	})
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
		err := f.env.Client.Create(ctx, probe, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "denied by the test"), fmt.Sprintf("policy not enforced yet: %v", err)
	})
}
