package benchenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/testenv"
)

// FleetApp is the application of issue 16's fleets: four objects
// (ConfigMap, Secret, ServiceAccount, a one-replica Deployment) under
// app/, which every Kustomization applies with a name prefix of its own.
var FleetApp = map[string]string{
	"app/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
		"resources: [configmap.yaml, secret.yaml, serviceaccount.yaml, deployment.yaml]\n",
	"app/configmap.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  greeting: hello\n",
	"app/secret.yaml":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret\nstringData:\n  token: t0ken\n",
	"app/serviceaccount.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n",
	"app/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: bench}
spec:
  replicas: 1
  selector:
    matchLabels: {app: bench}
  template:
    metadata:
      labels: {app: bench}
    spec:
      serviceAccountName: app
      containers:
      - name: app
        image: registry.local/bench/app:1.0.0
`,
}

// FleetName is the name of the i-th Kustomization of a fleet.
func FleetName(i int) string { return fmt.Sprintf("ks-%04d", i) }

// CreateFleetKustomization creates a Kustomization of FleetApp as `flux
// create kustomization --wait` writes it, with a name prefix of its own.
func CreateFleetKustomization(b *testing.B, env *testenv.Env, ns, name string) {
	b.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./app", Prune: true, Wait: true, TargetNamespace: ns, NamePrefix: name + "-",
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if err := env.Client.Create(context.Background(), k); err != nil {
		b.Fatal(err)
	}
}

// WaitFleetReady polls until want Kustomizations in ns are Ready.
func WaitFleetReady(b *testing.B, env *testenv.Env, ns string, want int) {
	b.Helper()
	Poll(b, 30*time.Minute, func(ctx context.Context) (bool, string) {
		var list kustomizev1.KustomizationList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		done := 0
		for i := range list.Items {
			if conditions.IsReady(&list.Items[i]) && list.Items[i].Status.LastAppliedRevision != "" {
				done++
			}
		}
		return done == want, fmt.Sprintf("%d of %d Kustomizations ready", done, want)
	})
}
