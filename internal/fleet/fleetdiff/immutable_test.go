package fleetdiff

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("decoding %q: %v", manifest, err)
	}
	return u
}

func TestImmutableChanges(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		want          []string
	}{
		{"deployment selector",
			"apiVersion: apps/v1\nkind: Deployment\nspec:\n  selector: {matchLabels: {app: a}}\n  replicas: 1",
			"apiVersion: apps/v1\nkind: Deployment\nspec:\n  selector: {matchLabels: {app: b}}\n  replicas: 1",
			[]string{"spec.selector"}},
		{"deployment replicas and image (near miss)",
			"apiVersion: apps/v1\nkind: Deployment\nspec:\n  selector: {matchLabels: {app: a}}\n  replicas: 1\n  template: {spec: {containers: [{name: a, image: a:1}]}}",
			"apiVersion: apps/v1\nkind: Deployment\nspec:\n  selector: {matchLabels: {app: a}}\n  replicas: 3\n  template: {spec: {containers: [{name: a, image: a:2}]}}",
			nil},
		{"daemonset selector",
			"apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  selector: {matchLabels: {app: a}}",
			"apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  selector: {matchLabels: {app: a, tier: x}}",
			[]string{"spec.selector"}},
		{"statefulset claim templates and service name",
			"apiVersion: apps/v1\nkind: StatefulSet\nspec:\n  serviceName: db\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]",
			"apiVersion: apps/v1\nkind: StatefulSet\nspec:\n  serviceName: db2\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 2Gi}}}}]",
			[]string{"spec.volumeClaimTemplates", "spec.serviceName"}},
		{"statefulset template (near miss)",
			"apiVersion: apps/v1\nkind: StatefulSet\nspec:\n  serviceName: db\n  template: {metadata: {labels: {v: '1'}}}",
			"apiVersion: apps/v1\nkind: StatefulSet\nspec:\n  serviceName: db\n  template: {metadata: {labels: {v: '2'}}}",
			nil},
		{"job template",
			"apiVersion: batch/v1\nkind: Job\nspec:\n  template: {spec: {containers: [{name: a, image: a:1}]}}",
			"apiVersion: batch/v1\nkind: Job\nspec:\n  template: {spec: {containers: [{name: a, image: a:2}]}}",
			[]string{"spec.template"}},
		{"service cluster IP changed",
			"apiVersion: v1\nkind: Service\nspec:\n  clusterIP: 10.0.0.1",
			"apiVersion: v1\nkind: Service\nspec:\n  clusterIP: 10.0.0.2",
			[]string{"spec.clusterIP"}},
		{"service made headless",
			"apiVersion: v1\nkind: Service\nspec:\n  ports: [{port: 80}]",
			"apiVersion: v1\nkind: Service\nspec:\n  clusterIP: None\n  ports: [{port: 80}]",
			[]string{"spec.clusterIP"}},
		{"service stops setting its IP (near miss: the allocated one stays)",
			"apiVersion: v1\nkind: Service\nspec:\n  clusterIP: 10.0.0.1",
			"apiVersion: v1\nkind: Service\nspec: {}",
			nil},
		{"service type and ports (near miss)",
			"apiVersion: v1\nkind: Service\nspec:\n  type: ExternalName\n  externalName: a.example.com",
			"apiVersion: v1\nkind: Service\nspec:\n  type: ClusterIP\n  ports: [{port: 81}]",
			nil},
		{"claim class and modes",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  storageClassName: fast\n  accessModes: [ReadWriteOnce]",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  storageClassName: slow\n  accessModes: [ReadWriteMany]",
			[]string{"spec.storageClassName", "spec.accessModes"}},
		{"claim grows (near miss)",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  resources: {requests: {storage: 1Gi}}",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  resources: {requests: {storage: 2Gi}}",
			nil},
		{"claim shrinks",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  resources: {requests: {storage: 2Gi}}",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  resources: {requests: {storage: 1500Mi}}",
			[]string{"spec.resources.requests.storage (shrunk)"}},
		{"immutable configmap data",
			"apiVersion: v1\nkind: ConfigMap\nimmutable: true\ndata: {a: '1'}",
			"apiVersion: v1\nkind: ConfigMap\nimmutable: true\ndata: {a: '2'}",
			[]string{"data"}},
		{"immutable secret made mutable",
			"apiVersion: v1\nkind: Secret\nimmutable: true\ndata: {a: MQ==}",
			"apiVersion: v1\nkind: Secret\ndata: {a: MQ==}",
			[]string{"immutable"}},
		{"mutable configmap data (near miss)",
			"apiVersion: v1\nkind: ConfigMap\ndata: {a: '1'}",
			"apiVersion: v1\nkind: ConfigMap\nimmutable: true\ndata: {a: '2'}",
			nil},
		{"rolebinding roleRef",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nroleRef: {kind: Role, name: a}\nsubjects: [{kind: User, name: x}]",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nroleRef: {kind: ClusterRole, name: a}\nsubjects: [{kind: User, name: y}]",
			[]string{"roleRef"}},
		{"storage class parameters",
			"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nprovisioner: p\nparameters: {type: a}",
			"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nprovisioner: p\nparameters: {type: b}",
			[]string{"parameters"}},
		{"a kind without immutable fields (near miss)",
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nspec: {ingressClassName: a}",
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nspec: {ingressClassName: b}",
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := immutableChanges(obj(t, tc.before), obj(t, tc.after))
			if !slices.Equal(got, tc.want) {
				t.Errorf("immutableChanges = %q, want %q", got, tc.want)
			}
		})
	}
}
