package ssa_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// stagedSet is a CRD and one of its custom resources, a Namespace and
// objects in it, and a ClusterRole: a set that only applies in one call
// because Apply writes and waits for the definitions first.
func stagedSet(group, ns, greeting string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  namespace: %[2]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: podinfo}
  template:
    metadata:
      labels: {app: podinfo}
    spec:
      containers:
      - name: podinfo
        image: ghcr.io/stefanprodan/podinfo:6.7.0
---
apiVersion: %[1]s/v1
kind: Widget
metadata:
  name: gizmo
  namespace: %[2]s
spec:
  size: 3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: podinfo
  namespace: %[2]s
data:
  greeting: %[3]s
---
apiVersion: v1
kind: Service
metadata:
  name: podinfo
  namespace: %[2]s
spec:
  selector: {app: podinfo}
  ports:
  - port: 80
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[2]s-widget-viewer
rules:
- apiGroups: [%[1]s]
  resources: [widgets]
  verbs: [get, list]
---
apiVersion: v1
kind: Namespace
metadata:
  name: %[2]s
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`, group, ns, greeting)
}

func deleteAfter(t *testing.T, objs []*unstructured.Unstructured) {
	t.Cleanup(func() {
		c := testenv.Get(t).Client
		for _, o := range objs {
			if o.GetNamespace() == "" {
				if err := c.Delete(context.Background(), o.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
					t.Logf("deleting %s: %v", o.GetName(), err)
				}
			}
		}
	})
}

func TestApplyStagesAndNoOpReapply(t *testing.T) {
	m, writes := newManager(t)
	ctx := context.Background()
	ns := uniqueName("staged")
	group := ns + ".example.com"
	owner := &ssa.Owner{Name: "apps", Namespace: "flux-system"}
	opts := ssa.ApplyOptions{Owner: owner}
	objs := objects(t, stagedSet(group, ns, "hello"))
	deleteAfter(t, objs)

	cs, err := m.Apply(ctx, objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"CustomResourceDefinition/widgets." + group + " created",
		"Namespace/" + ns + " created",
		"ClusterRole/" + ns + "-widget-viewer created",
		"ConfigMap/" + ns + "/podinfo created",
		"Service/" + ns + "/podinfo created",
		"Deployment/" + ns + "/podinfo created",
		"Widget/" + ns + "/gizmo created",
	}, "\n")
	if diff := cmp.Diff(want, cs.String()); diff != "" {
		t.Errorf("first apply (-want +got):\n%s", diff)
	}
	widget := get(t, group+"/v1", "Widget", ns, "gizmo")
	if diff := cmp.Diff(owner.Labels(), widget.GetLabels()); diff != "" {
		t.Errorf("owner labels (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		if o.GetLabels() != nil {
			t.Errorf("Apply changed its input %s", o.GetName())
		}
	}

	// The same set again: all unchanged, and not one write.
	before := writes.writes.Load()
	cs, err = m.Apply(ctx, objects(t, stagedSet(group, ns, "hello")), opts)
	if err != nil {
		t.Fatal(err)
	}
	for subject, action := range actions(cs) {
		if action != ssa.Unchanged {
			t.Errorf("second apply: %s %s, want unchanged", subject, action)
		}
	}
	if n := writes.writes.Load() - before; n != 0 {
		t.Errorf("second apply made %d writes, want 0", n)
	}
	if got := cs.Changes(); got != "" {
		t.Errorf("Changes() = %q, want empty", got)
	}

	// One field changes: that object alone is configured.
	before = writes.writes.Load()
	cs, err = m.Apply(ctx, objects(t, stagedSet(group, ns, "bonjour")), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.Changes(), "ConfigMap/"+ns+"/podinfo configured"; got != want {
		t.Errorf("Changes() = %q, want %q", got, want)
	}
	if n := writes.writes.Load() - before; n != 1 {
		t.Errorf("third apply made %d writes, want 1", n)
	}
	cm := get(t, "v1", "ConfigMap", ns, "podinfo")
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); got != "bonjour" {
		t.Errorf("greeting = %q, want bonjour", got)
	}
}

// TestApplyOneStageFailsAsAWhole checks that an invalid object stops its
// stage before anything of it is written.
func TestApplyOneStageFailsAsAWhole(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	objs := objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: good, namespace: %[1]s}
data: {a: "1"}
---
apiVersion: v1
kind: Service
metadata: {name: bad, namespace: %[1]s}
spec:
  ports:
  - port: 700000
`, ns))
	_, err := m.Apply(context.Background(), objs, ssa.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "Service/"+ns+"/bad dry-run failed") {
		t.Fatalf("err = %v, want a dry-run failure naming Service/%s/bad", err, ns)
	}
	var cm unstructured.Unstructured
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	if err := testenv.Get(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "good"}, &cm); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap good: %v, want NotFound", err)
	}
}

// clientSideApplied creates a ConfigMap the way `kubectl apply` without
// --server-side does: an Update by kubectl-client-side-apply that leaves
// the last-applied-configuration annotation.
func clientSideApplied(t *testing.T, ns, name string, data map[string]any) {
	t.Helper()
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"annotations": map[string]any{
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"ConfigMap"}`,
			},
		},
		"data": data,
	}}
	if err := testenv.Get(t).Client.Create(context.Background(), cm, client.FieldOwner("kubectl-client-side-apply")); err != nil {
		t.Fatal(err)
	}
}

func managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	return out
}

func TestApplyTakesOverClientSideApply(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	clientSideApplied(t, ns, "settings", map[string]any{"a": "1", "extra": "x"})

	cs, err := m.Apply(context.Background(), objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %s}
data: {a: "1"}
`, ns)), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.String(), "ConfigMap/"+ns+"/settings configured"; got != want {
		t.Errorf("change set %q, want %q", got, want)
	}
	cm := get(t, "v1", "ConfigMap", ns, "settings")
	if diff := cmp.Diff(map[string]any{"a": "1"}, cm.Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if _, ok := cm.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Error("last-applied-configuration annotation kept")
	}
	if diff := cmp.Diff([]string{"kustomize-controller/Apply"}, managers(cm)); diff != "" {
		t.Errorf("managers (-want +got):\n%s", diff)
	}
}

func TestApplyMergeKeepsOtherManagersFields(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	clientSideApplied(t, ns, "settings", map[string]any{"a": "1", "extra": "x"})

	_, err := m.Apply(context.Background(), objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: %s
  annotations: {kustomize.toolkit.fluxcd.io/ssa: merge}
data: {a: "2"}
`, ns)), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := get(t, "v1", "ConfigMap", ns, "settings")
	if diff := cmp.Diff(map[string]any{"a": "2", "extra": "x"}, cm.Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if !slices.Contains(managers(cm), "kubectl-client-side-apply/Update") {
		t.Errorf("managers %v: kubectl-client-side-apply was taken over", managers(cm))
	}
}

func TestApplyOverrideManagers(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	c := testenv.Get(t).Client
	for _, name := range []string{"kept", "taken"} {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"data":     map[string]any{"a": "1", "extra": "x"},
		}}
		if err := c.Create(context.Background(), cm, client.FieldOwner("helm")); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(name string) []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: \"1\"}\n", name, ns))
	}
	if _, err := m.Apply(context.Background(), manifest("kept"), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(context.Background(), manifest("taken"), ssa.ApplyOptions{OverrideManagers: []string{"helm"}}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, "v1", "ConfigMap", ns, "kept").Object["data"]; !cmp.Equal(got, map[string]any{"a": "1", "extra": "x"}) {
		t.Errorf("without --override-manager: data %v, want helm's field kept", got)
	}
	if got := get(t, "v1", "ConfigMap", ns, "taken").Object["data"]; !cmp.Equal(got, map[string]any{"a": "1"}) {
		t.Errorf("with --override-manager=helm: data %v, want helm's field removed", got)
	}
}

// edit changes data.a of a ConfigMap as another tool would, with an Update
// by manager "drifter".
func edit(t *testing.T, ns, name, value string) {
	t.Helper()
	cm := get(t, "v1", "ConfigMap", ns, name)
	if err := unstructured.SetNestedField(cm.Object, value, "data", "a"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Get(t).Client.Update(context.Background(), cm, client.FieldOwner("drifter")); err != nil {
		t.Fatal(err)
	}
}

func dataA(t *testing.T, ns, name string) string {
	t.Helper()
	v, _, _ := unstructured.NestedString(get(t, "v1", "ConfigMap", ns, name).Object, "data", "a")
	return v
}

func TestApplyIfNotPresent(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	manifest := func(value string) []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: seed
  namespace: %s
  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}
data: {a: "%s"}
`, ns, value))
	}
	cs, err := m.Apply(context.Background(), manifest("1"), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.String(); got != "ConfigMap/"+ns+"/seed created" {
		t.Errorf("first apply: %q", got)
	}
	edit(t, ns, "seed", "edited")
	cs, err = m.Apply(context.Background(), manifest("2"), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.String(); got != "ConfigMap/"+ns+"/seed skipped" {
		t.Errorf("second apply: %q", got)
	}
	if got := dataA(t, ns, "seed"); got != "edited" {
		t.Errorf("data.a = %q, want the edit kept", got)
	}
}

func TestApplySkips(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	if _, err := m.Apply(ctx, objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored-in-cluster, namespace: %[1]s}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: disabled-in-cluster, namespace: %[1]s}
data: {a: "1"}
`, ns)), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, annotation := range map[string]string{
		"ignored-in-cluster":  kustomizev1.SSAAnnotation + "=Ignore",
		"disabled-in-cluster": kustomizev1.ReconcileAnnotation + "=disabled",
	} {
		cm := get(t, "v1", "ConfigMap", ns, name)
		k, v, _ := strings.Cut(annotation, "=")
		cm.SetAnnotations(map[string]string{k: v})
		if err := unstructured.SetNestedField(cm.Object, "edited", "data", "a"); err != nil {
			t.Fatal(err)
		}
		if err := testenv.Get(t).Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
			t.Fatal(err)
		}
	}

	cs, err := m.Apply(ctx, objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: ignored
  namespace: %[1]s
  annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored-in-cluster, namespace: %[1]s}
data: {a: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: disabled-in-cluster, namespace: %[1]s}
data: {a: "2"}
`, ns)), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ssa.Action{
		"ConfigMap/" + ns + "/disabled-in-cluster": ssa.Skipped,
		"ConfigMap/" + ns + "/ignored":             ssa.Skipped,
		"ConfigMap/" + ns + "/ignored-in-cluster":  ssa.Skipped,
	}
	if diff := cmp.Diff(want, actions(cs)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if len(cs.Objects()) != 0 || len(cs.Skipped()) != 3 {
		t.Errorf("Objects() = %v, Skipped() = %v", cs.Objects(), cs.Skipped())
	}
	var cm unstructured.Unstructured
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	if err := testenv.Get(t).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ignored"}, &cm); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap ignored: %v, want NotFound", err)
	}
	for _, name := range []string{"ignored-in-cluster", "disabled-in-cluster"} {
		if got := dataA(t, ns, name); got != "edited" {
			t.Errorf("%s: data.a = %q, want the edit kept", name, got)
		}
	}
}

// TestApplyCorrectsDrift shows drift correction: a re-apply of the same
// manifest after another tool changed the object puts the manifest's
// values back, which is what each reconcile interval does.
func TestApplyCorrectsDrift(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	manifest := func() []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: untouched, namespace: %[1]s}
data: {a: "1"}
`, ns))
	}
	if _, err := m.Apply(ctx, manifest(), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	edit(t, ns, "settings", "tampered")

	cs, err := m.Apply(ctx, manifest(), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.Changes(), "ConfigMap/"+ns+"/settings configured"; got != want {
		t.Errorf("Changes() = %q, want %q", got, want)
	}
	if got := dataA(t, ns, "settings"); got != "1" {
		t.Errorf("data.a = %q after re-apply, want 1", got)
	}
	cs, err = m.Apply(ctx, manifest(), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.Changes(); got != "" {
		t.Errorf("re-apply after the correction: %q, want no changes", got)
	}
}

func TestApplyImmutableField(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	job := func(image string) []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: %s}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: migrate, image: "%s"}
`, ns, image))
	}
	if _, err := m.Apply(ctx, job("busybox:1.36"), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	before := get(t, "batch/v1", "Job", ns, "migrate").GetUID()

	_, err := m.Apply(ctx, job("busybox:1.37"), ssa.ApplyOptions{})
	var immutable *ssa.ImmutableFieldError
	if !errors.As(err, &immutable) {
		t.Fatalf("err = %v, want an ImmutableFieldError", err)
	}
	if !slices.Contains(immutable.Fields, "spec.template") ||
		!strings.HasPrefix(err.Error(), "Job/"+ns+"/migrate dry-run failed: immutable field spec.template changed") {
		t.Errorf("err = %v, fields %v: want Job/%s/migrate and spec.template named", err, immutable.Fields, ns)
	}

	cs, err := m.Apply(ctx, job("busybox:1.37"), ssa.ApplyOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.String(), "Job/"+ns+"/migrate created"; got != want {
		t.Errorf("forced apply: %q, want %q", got, want)
	}
	after := get(t, "batch/v1", "Job", ns, "migrate")
	if after.GetUID() == before {
		t.Error("the Job was not recreated")
	}
	containers, _, _ := unstructured.NestedSlice(after.Object, "spec", "template", "spec", "containers")
	if image := containers[0].(map[string]any)["image"]; image != "busybox:1.37" {
		t.Errorf("image = %v, want busybox:1.37", image)
	}
}

// TestApplyForceAnnotation changes a Service's clusterIP, which the server
// refuses with "may not change once set", and lets the object's own
// annotation allow the recreation.
func TestApplyForceAnnotation(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	service := func(clusterIP, annotations string) []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %s
  annotations: {%s}
spec:
  clusterIP: %s
  ports:
  - port: 80
`, ns, annotations, clusterIP))
	}
	if _, err := m.Apply(ctx, service("10.0.0.201", ""), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Apply(ctx, service("10.0.0.202", ""), ssa.ApplyOptions{})
	var immutable *ssa.ImmutableFieldError
	if !errors.As(err, &immutable) {
		t.Fatalf("err = %v, want an ImmutableFieldError", err)
	}
	t.Logf("immutable error: %v", err)
	cs, err := m.Apply(ctx, service("10.0.0.202", "kustomize.toolkit.fluxcd.io/force: enabled"), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.String(), "Service/"+ns+"/web created"; got != want {
		t.Errorf("apply with the force annotation: %q, want %q", got, want)
	}
	if ip, _, _ := unstructured.NestedString(get(t, "v1", "Service", ns, "web").Object, "spec", "clusterIP"); ip != "10.0.0.202" {
		t.Errorf("clusterIP = %s, want 10.0.0.202", ip)
	}
}

// TestApplyCustomStage puts Roles in a stage of their own: they are written
// before the ServiceAccounts that Flux's kind order would put first.
func TestApplyCustomStage(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	manifest := fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: app, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}
subjects:
- {kind: ServiceAccount, name: app, namespace: %[1]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: app, namespace: %[1]s}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
`, ns)
	for _, tc := range []struct {
		custom []schema.GroupKind
		want   []string
	}{
		{nil, []string{"ServiceAccount", "Role", "RoleBinding"}},
		{[]schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "Role"}}, []string{"Role", "ServiceAccount", "RoleBinding"}},
	} {
		cs, err := m.Apply(context.Background(), objects(t, manifest), ssa.ApplyOptions{CustomStageKinds: tc.custom})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range cs.Entries {
			got = append(got, e.ObjMetadata.GroupKind.Kind)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("custom stage kinds %v: order (-want +got):\n%s", tc.custom, diff)
		}
	}
}

// TestApplyBeforeWrite checks that BeforeWrite hears of each stage's writes
// before any of them reaches the cluster, is not called for a stage that
// writes nothing, and that its error stops the stage.
func TestApplyBeforeWrite(t *testing.T) {
	m, _ := newManager(t)
	ctx := context.Background()
	ns := uniqueName("before")
	manifest := fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: %[1]s}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: %[1]s}
data: {k: "1"}
`, ns)
	objs := objects(t, manifest)
	deleteAfter(t, objs)
	var calls []string
	record := func(ctx context.Context, writes []ssa.ChangeSetEntry) error {
		var call []string
		for _, w := range writes {
			call = append(call, w.String())
			if w.Action == ssa.Created && w.ObjMetadata.GroupKind.Kind == "ConfigMap" {
				if err := testenv.Get(t).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.ObjMetadata.Name},
					&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}); !apierrors.IsNotFound(err) {
					t.Errorf("%s exists before BeforeWrite returned: %v", w.ObjMetadata, err)
				}
			}
		}
		calls = append(calls, strings.Join(call, ", "))
		return nil
	}
	if _, err := m.Apply(ctx, objs, ssa.ApplyOptions{BeforeWrite: record}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace/" + ns + " created", "ConfigMap/" + ns + "/a created, ConfigMap/" + ns + "/b created"}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("BeforeWrite calls (-want +got):\n%s", diff)
	}

	calls = nil
	changed := objects(t, strings.Replace(manifest, "name: b, namespace: "+ns+"}\ndata: {k: \"1\"}", "name: b, namespace: "+ns+"}\ndata: {k: \"2\"}", 1))
	if _, err := m.Apply(ctx, changed, ssa.ApplyOptions{BeforeWrite: record}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap/" + ns + "/b configured"}, calls); diff != "" {
		t.Errorf("BeforeWrite calls of a reapply (-want +got):\n%s", diff)
	}

	boom := errors.New("boom")
	extra := objects(t, manifest+fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: %s}\n", ns))
	_, err := m.Apply(ctx, extra, ssa.ApplyOptions{BeforeWrite: func(context.Context, []ssa.ChangeSetEntry) error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want BeforeWrite's", err)
	}
	if err := testenv.Get(t).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap c written although BeforeWrite failed: %v", err)
	}
}
