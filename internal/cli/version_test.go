package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/version"
)

// TestVersion: `weir version` prints, as `flux version` does, the client
// and every container of the namespace's Flux Deployments by image name
// and tag, and the distribution the namespace's labels name; --client
// reads nothing from the cluster; -o json prints the same map.
func TestVersion(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	var nsObj corev1.Namespace
	if err := env.Client.Get(ctx, ctrlclient.ObjectKey{Name: ns}, &nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels = map[string]string{"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/version": "v2.9.0"}
	if err := env.Client.Update(ctx, &nsObj); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "weir", "app.kubernetes.io/part-of": "flux"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "weir-controller", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "manager", Image: "127.0.0.1:5000/weir-gitops/weir-controller:v9.9.9"},
					{Name: "sidecar", Image: "registry.local/tools/sidecar@sha256:0123"},
				}},
			},
		},
	}
	if err := env.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}

	r := weir(t, "version", "-n", ns)
	want := "distribution: flux-v2.9.0\nsidecar: sha256:0123\nweir: " + version.Version + "\nweir-controller: v9.9.9\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("weir version: exit %d, stdout:\n%s\nwant:\n%s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}

	r = weir(t, "version", "-n", ns, "-o", "json")
	var info map[string]string
	if err := json.Unmarshal([]byte(r.Stdout), &info); err != nil || info["weir-controller"] != "v9.9.9" || info["weir"] != version.Version {
		t.Errorf("weir version -o json: %v %v\n%s", err, info, r.Output())
	}

	r = weir(t, "version", "--client", "-n", ns, "--server", "https://127.0.0.1:1")
	if r.Code != 0 || r.Stdout != "weir: "+version.Version+"\n" {
		t.Errorf("weir version --client: exit %d\n%s", r.Code, r.Output())
	}

	empty := env.Namespace(t)
	r = weir(t, "version", "-n", empty)
	if r.Code == 0 || !strings.Contains(r.Stderr, "no deployments found in "+empty+" namespace") {
		t.Errorf("weir version in a namespace without Flux: exit %d\n%s", r.Code, r.Output())
	}

	r = weir(t, "version", "--client", "-o", "toml")
	if r.Code == 0 || !strings.Contains(r.Stderr, "--output must be json or yaml") {
		t.Errorf("weir version -o toml: exit %d\n%s", r.Code, r.Output())
	}
}
