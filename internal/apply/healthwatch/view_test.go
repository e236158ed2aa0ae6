package healthwatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

// TestStatusView: the cache keeps what kstatus reads and nothing else, and
// kstatus computes the same status from the view as from the object.
func TestStatusView(t *testing.T) {
	tests := []struct {
		name, object, view string
	}{
		{
			name: "Deployment rolling out",
			object: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
  uid: u1
  resourceVersion: "7"
  generation: 2
  labels: {app: web}
  annotations: {deployment.kubernetes.io/revision: "2", kubectl.kubernetes.io/last-applied-configuration: "{}"}
  managedFields: [{manager: kustomize-controller, operation: Apply}]
  ownerReferences: [{apiVersion: v1, kind: X, name: x, uid: u0}]
spec:
  replicas: 3
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web:2}]}}
status:
  observedGeneration: 2
  replicas: 3
  updatedReplicas: 1
  readyReplicas: 2
  availableReplicas: 2
  conditions: [{type: Progressing, status: "True", reason: ReplicaSetUpdated}]
`,
			view: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, uid: u1, resourceVersion: "7", generation: 2, labels: {app: web}}
spec: {replicas: 3, progressDeadlineSeconds: 600}
status:
  observedGeneration: 2
  replicas: 3
  updatedReplicas: 1
  readyReplicas: 2
  availableReplicas: 2
  conditions: [{type: Progressing, status: "True", reason: ReplicaSetUpdated}]
`,
		},
		{
			name: "StatefulSet with a partition",
			object: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: apps, generation: 1}
spec:
  replicas: 2
  serviceName: db
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}
  template: {spec: {containers: [{name: db, image: db:1}]}}
status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, currentReplicas: 1, updatedReplicas: 1, currentRevision: a, updateRevision: b}
`,
			view: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: apps, generation: 1}
spec: {replicas: 2, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}}
status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, currentReplicas: 1, updatedReplicas: 1, currentRevision: a, updateRevision: b}
`,
		},
		{
			name: "custom resource being deleted",
			object: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: apps, generation: 4, deletionTimestamp: "2026-12-01T10:00:00Z", finalizers: [example.com/x]}
spec: {size: 3}
status: {observedGeneration: 4, conditions: [{type: Ready, status: "True"}]}
`,
			view: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: apps, generation: 4, deletionTimestamp: "2026-12-01T10:00:00Z"}
status: {observedGeneration: 4, conditions: [{type: Ready, status: "True"}]}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, want := parse(t, tt.object), parse(t, tt.view)
			got := statusView(obj)
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			full, err := status.Compute(obj)
			if err != nil {
				t.Fatal(err)
			}
			fromView, err := status.Compute(got)
			if err != nil {
				t.Fatal(err)
			}
			if full.Status != fromView.Status || full.Message != fromView.Message {
				t.Errorf("kstatus from the view = %s %q, from the object %s %q", fromView.Status, fromView.Message, full.Status, full.Message)
			}
		})
	}
}

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestHasManagedFields(t *testing.T) {
	entry := metav1.ManagedFieldsEntry{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply}
	withFields := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
	withFields.SetManagedFields([]metav1.ManagedFieldsEntry{entry})
	tests := []struct {
		name string
		obj  metav1.Object
		want bool
	}{
		{"unstructured with", withFields, true},
		{"unstructured without", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}, false},
		{"unstructured empty list", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{}}}}, false},
		{"unstructured no metadata", &unstructured.Unstructured{Object: map[string]any{}}, false},
		{"typed with", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{entry}}}, true},
		{"typed without", &metav1.PartialObjectMetadata{}, false},
	}
	for _, tt := range tests {
		if got := hasManagedFields(tt.obj); got != tt.want {
			t.Errorf("%s: hasManagedFields = %v, want %v", tt.name, got, tt.want)
		}
	}
}
