package objectview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// workload is a Kustomization whose inventory holds a Deployment; the
// test writes the ReplicaSet and Pod a controller manager would.
const workload = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: NS}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: repo}}
status:
  inventory:
    entries:
    - {id: NS_web_apps_Deployment, v: v1}
`

// ownedWorkload creates the Deployment web, its ReplicaSet and a Pod of
// it with one restart, the owner references as the controllers set them.
func ownedWorkload(t *testing.T, ns string) {
	t.Helper()
	env := testenv.Get(t)
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/stefanprodan/podinfo:6.7.0"}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
	}}
	// No controller manager runs here to make the ServiceAccount a Pod
	// needs.
	env.Create(t, d, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d9c", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: d.Spec.Selector, Template: d.Spec.Template}}
	env.Create(t, rs)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-5d9c-x7k2p", Namespace: ns, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: spec}
	pod.Spec.NodeName = "gone" // a node that is not there to serve logs
	env.Create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, RestartCount: 1}}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// TestTreeDownToPods: the Deployment of an inventory has its ReplicaSet
// and Pod below it (phase, ready, restarts, containers); a user who may
// not list Pods gets a sentence on the Deployment instead.
func TestTreeDownToPods(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, workload)
	ownedWorkload(t, ns)
	ref := Ref{Kind: "Kustomization", Namespace: ns, Name: "apps"}
	d, err := Get(context.Background(), env.Client, env.Config, ref)
	if err != nil {
		t.Fatal(err)
	}
	deploy := d.Tree.Children[0]
	if len(deploy.Children) != 1 || deploy.Children[0].Kind != "ReplicaSet" || len(deploy.Children[0].Children) != 1 {
		t.Fatalf("below the Deployment: %+v, want its ReplicaSet and its Pod", deploy.Children)
	}
	pod := deploy.Children[0].Children[0]
	want := PodStatus{Phase: "Running", Ready: "1/1", Restarts: 1, Containers: []string{"web"}}
	if pod.Name != "web-5d9c-x7k2p" || pod.Pod == nil || pod.Pod.Phase != want.Phase || pod.Pod.Ready != want.Ready ||
		pod.Pod.Restarts != want.Restarts || strings.Join(pod.Pod.Containers, ",") != "web" {
		t.Errorf("pod %s: %+v, want %+v", pod.Name, pod.Pod, want)
	}

	grant(t, ns, "erin", "kustomize.toolkit.fluxcd.io", []string{"kustomizations"}, []string{"get"})
	grant(t, ns, "erin", "apps", []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, []string{"get", "list"})
	c, cfg := as(t, "erin")
	d, err = Get(context.Background(), c, cfg, ref)
	if err != nil {
		t.Fatal(err)
	}
	deploy = d.Tree.Children[0]
	if wantErr := "you may not list pods in " + ns + ", so what runs below is not shown"; deploy.ChildrenError != wantErr || len(deploy.Children) != 0 {
		t.Errorf("erin's Deployment: children %v, %q; want none and %q", deploy.Children, deploy.ChildrenError, wantErr)
	}
}

// TestPodLogs reads a Pod's logs: the API server cannot reach the node of
// the Pod, said as a sentence; a user without pods/log is told
// so; a Pod the user may not read is an error.
func TestPodLogs(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ownedWorkload(t, ns)
	grant(t, ns, "frank", "", []string{"pods"}, []string{"get"})
	_, frankCfg := as(t, "frank")
	tests := []struct {
		name string
		as   func() (*ContainerLog, error)
		want string
	}{
		{"admin", func() (*ContainerLog, error) {
			return firstLog(PodLogs(context.Background(), env.Config, ns, "web-5d9c-x7k2p", 5))
		},
			"The log of container web could not be read from its node: "},
		{"frank", func() (*ContainerLog, error) {
			return firstLog(PodLogs(context.Background(), frankCfg, ns, "web-5d9c-x7k2p", 5))
		},
			"You may not read the logs of pod " + ns + "/web-5d9c-x7k2p (pods/log): pods \"web-5d9c-x7k2p\" is forbidden: User \"frank\" cannot get resource \"pods/log\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.as()
			if err != nil {
				t.Fatal(err)
			}
			if l.Container != "web" || !strings.HasPrefix(l.Error, tt.want) || len(l.Lines) != 0 {
				t.Errorf("log = %+v, want the sentence %q…", l, tt.want)
			}
		})
	}
	_, nobodyCfg := as(t, "nobody")
	if _, err := PodLogs(context.Background(), nobodyCfg, ns, "web-5d9c-x7k2p", 5); err == nil {
		t.Error("a user who may not read the pod: no error")
	}
}

func firstLog(logs []ContainerLog, err error) (*ContainerLog, error) {
	if err != nil {
		return nil, err
	}
	if len(logs) != 1 {
		return nil, fmt.Errorf("%d container logs, want 1: %+v", len(logs), logs)
	}
	return &logs[0], nil
}
