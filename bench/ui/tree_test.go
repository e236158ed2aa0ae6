package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/uiserver"
	"github.com/weir-gitops/weir/internal/ui/server"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// Of the inventory of BenchmarkObjectPage's Kustomization, one object in
// deploymentEvery is a Deployment with one ReplicaSet of podsPerSet Pods;
// the others are ConfigMaps.
const (
	deploymentEvery = 5
	podsPerSet      = 2
)

// BenchmarkObjectPage reports the object page of one Kustomization whose
// inventory holds N objects (WEIR_BENCH_UI_OBJECTS, default 500), a fifth
// of them Deployments each with a ReplicaSet and two Pods (written
// directly, owner references set as the controllers set them): its first
// render (the route to every tree node drawn) beside the same API calls
// made directly plus a blank page load, the page's own /api/objects call,
// and the live update of its state beside a plain watch.
func BenchmarkObjectPage(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_UI_OBJECTS", []int{500}) {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			ns := env.Namespace(b)
			k := createWorkloads(b, env, ns, n)
			nodes := n + (n/deploymentEvery)*(1+podsPerSet)
			ctx := tab(b)
			s := uiserver.Start(b, server.Options{Mode: server.Local, Config: env.Config, Assets: web.FS()})
			path := fmt.Sprintf("/objects/Kustomization/%s/%s", ns, k.Name)
			for b.Loop() {
				blank := timed(ctx, b, `document.readyState === 'complete'`, chromedp.Navigate("about:blank"))
				timed(ctx, b, loaded, chromedp.Navigate(s.LoginURL()))
				render := timed(ctx, b, fmt.Sprintf(`%s && document.querySelectorAll('[data-testid=tree-node]').length === %d`, loaded, nodes),
					route(path))
				floor := treeFloor(b, env, k)
				api := apiTime(b, s, "/api/objects/Kustomization/"+ns+"/"+k.Name)
				b.ReportMetric(render.Seconds(), "s/object-page")
				b.ReportMetric(api.Seconds(), "s/object-api")
				b.ReportMetric(floor.Seconds(), "s/api-floor")
				b.ReportMetric(render.Seconds()/(floor+blank).Seconds(), "x-object-page-floor")
				b.Logf("a Kustomization of %d objects (%d tree nodes with ReplicaSets and Pods): first render %v, its /api/objects %v; "+
					"floor: the same API calls %v + blank page %v (%.1fx); load %s", n, nodes, render, api, floor, blank,
					render.Seconds()/(floor+blank).Seconds(), benchenv.LoadAverage())
				measureChanges(ctx, b, env, k, []livePage{{"big-object", path, `document.getElementById('object-state')`}})
			}
		})
	}
}

// createWorkloads writes the Kustomization and the n objects of its
// inventory (with the ReplicaSets and Pods below its Deployments), ten
// workers at a time.
func createWorkloads(b *testing.B, env *testenv.Env, ns string, n int) *kustomizev1.Kustomization {
	b.Helper()
	ctx := context.Background()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./big", Prune: true, Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	// No controller manager runs here to make the ServiceAccount the Pods
	// need.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	for _, obj := range []client.Object{k, sa} {
		if err := env.Client.Create(ctx, obj); err != nil {
			b.Fatal(err)
		}
	}
	entries := make([]kustomizev1.ResourceRef, n)
	var g errgroup.Group
	g.SetLimit(10)
	for i := range n {
		if i%deploymentEvery == 0 {
			entries[i] = kustomizev1.ResourceRef{ID: fmt.Sprintf("%s_web-%04d_apps_Deployment", ns, i), Version: "v1"}
			g.Go(func() error { return createDeployment(ctx, env.Client, ns, fmt.Sprintf("web-%04d", i)) })
			continue
		}
		entries[i] = kustomizev1.ResourceRef{ID: fmt.Sprintf("%s_cm-%04d__ConfigMap", ns, i), Version: "v1"}
		g.Go(func() error {
			return env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i), Namespace: ns}})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	k.Status.ObservedGeneration = k.Generation
	k.Status.Conditions = ready(k.Generation, "ReconciliationSucceeded", "Applied revision: "+revision)
	k.Status.LastAppliedRevision, k.Status.LastAttemptedRevision = revision, revision
	k.Status.Inventory = &kustomizev1.ResourceInventory{Entries: entries}
	if err := env.Client.Status().Update(ctx, k); err != nil {
		b.Fatal(err)
	}
	return k
}

// createDeployment writes a Deployment, a ReplicaSet it controls and the
// Pods of that, Running and ready.
func createDeployment(ctx context.Context, c client.Client, ns, name string) error {
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "podinfo"}}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	if err := c.Create(ctx, d); err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	controller := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-5d9c", Namespace: ns, OwnerReferences: controller("Deployment", name, d.UID)},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: tmpl}}
	if err := c.Create(ctx, rs); err != nil {
		return fmt.Errorf("creating %s: %w", rs.Name, err)
	}
	for j := range podsPerSet {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", rs.Name, j), Namespace: ns, Labels: labels,
			OwnerReferences: controller("ReplicaSet", rs.Name, rs.UID)},
			Spec: tmpl.Spec}
		if err := c.Create(ctx, p); err != nil {
			return fmt.Errorf("creating %s: %w", p.Name, err)
		}
	}
	return nil
}

// treeFloor is the Kubernetes API calls the object page's tree needs,
// made directly: the Kustomization, each inventory object (eight at a
// time, as the tree reads them) and the lists of the namespace's
// workloads and Pods.
func treeFloor(b *testing.B, env *testenv.Env, k *kustomizev1.Kustomization) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for _, e := range k.Status.Inventory.Entries {
		g.Go(func() error {
			var obj client.Object = &corev1.ConfigMap{}
			name := e.ID[len(k.Namespace)+1:]
			if e.ID[len(e.ID)-len("Deployment"):] == "Deployment" {
				obj = &appsv1.Deployment{}
				name = name[:len("web-0000")]
			} else {
				name = name[:len("cm-0000")]
			}
			return env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: name}, obj)
		})
	}
	for _, l := range []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{},
		&appsv1.ReplicaSetList{}, &corev1.PodList{}} {
		g.Go(func() error { return env.Client.List(ctx, l, client.InNamespace(k.Namespace)) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// apiTime is one GET of path by a logged-in plain HTTP client.
func apiTime(b *testing.B, s *uiserver.Running, path string) time.Duration {
	b.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(s.LoginURL())
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	start := time.Now()
	resp, err = c.Get(s.Base + path)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %s", path, resp.Status)
	}
	return time.Since(start)
}
