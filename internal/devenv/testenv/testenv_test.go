package testenv

import (
	"context"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/controlplane"
)

func TestMain(m *testing.M) { Main(m) }

// TestDeploymentBecomesAvailable proves the whole control plane works: the
// controller manager creates the ReplicaSet and pods, the scheduler binds
// them to the kwok node, kwok makes them Ready, and the Deployment reaches
// Available (kstatus Current).
func TestDeploymentBecomesAvailable(t *testing.T) {
	env := Get(t)
	ns := env.Namespace(t)
	labels := map[string]string{"app": "podinfo"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "podinfo", Image: "ghcr.io/stefanprodan/podinfo:6.7.0",
				}}},
			},
		},
	}
	if err := env.Client.Create(context.Background(), deploy); err != nil {
		t.Fatal(err)
	}
	env.WaitForCurrent(t, deploy, DefaultTimeout)
	if deploy.Status.AvailableReplicas != 2 {
		t.Errorf("available replicas = %d, want 2", deploy.Status.AvailableReplicas)
	}
	var pods corev1.PodList
	if err := env.Client.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != controlplane.NodeName {
			t.Errorf("pod %s on node %q, want %q", p.Name, p.Spec.NodeName, controlplane.NodeName)
		}
	}
}

// TestUnschedulablePodStaysInProgress shows how tests make a workload that
// never becomes healthy: a node selector no node matches.
func TestUnschedulablePodStaysInProgress(t *testing.T) {
	env := Get(t)
	ns := env.Namespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"no-such": "node"},
			Containers:   []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err.Error()
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return true, ""
			}
		}
		return false, "pod not yet marked unschedulable"
	})
	res, err := env.Status(pod)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == "Current" {
		t.Errorf("unschedulable pod is Current")
	}
}

func TestNamespaceName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, name := range []string{
		"TestFoo",
		"TestFoo/sub_test#01",
		"Test_With.Many/Odd Characters And A Very Long Name That Goes On And On",
		"Test-",
	} {
		got := namespaceName(name)
		if len(got) > 63 || !valid.MatchString(got) {
			t.Errorf("namespaceName(%q) = %q, not a DNS-1123 label", name, got)
		}
	}
	if first, second := namespaceName("TestA"), namespaceName("TestA"); first == second {
		t.Error("namespace names are not unique")
	}
}
