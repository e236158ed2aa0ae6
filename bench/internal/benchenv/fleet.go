package benchenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
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

// WaitFleetReady waits until want Kustomizations in ns are Ready at an
// applied revision. It follows a watch rather than listing them every
// PollInterval: the list of N Kustomizations, decoded N times a minute in
// the measured process, grew with N × duration (0.8 CPU-s of a fan-out
// of 200, most of the harness's share at 1,000), while the watch decodes
// each status patch once.
func WaitFleetReady(b *testing.B, env *testenv.Env, ns string, want int) {
	b.Helper()
	WaitFleet(b, env, ns, want, func(*kustomizev1.Kustomization) bool { return true })
}

// WaitFleet is WaitFleetReady counting only the Ready Kustomizations that
// also satisfy ok (lastHandledReconcileAt is a request's, for example).
func WaitFleet(b *testing.B, env *testenv.Env, ns string, want int, ok func(*kustomizev1.Kustomization) bool) {
	b.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	f := &fleetWatch{c: wc, ns: ns, ok: ok, ready: map[string]bool{}}
	for f.count() < want {
		if err := f.follow(ctx, want); err != nil {
			b.Fatalf("%d of %d Kustomizations ready: %v", f.count(), want, err)
		}
	}
}

// fleetWatch follows which Kustomizations of a namespace are Ready.
type fleetWatch struct {
	c     client.WithWatch
	ns    string
	ok    func(*kustomizev1.Kustomization) bool
	ready map[string]bool
}

func (f *fleetWatch) count() int { return len(f.ready) }

func (f *fleetWatch) see(k *kustomizev1.Kustomization) {
	if conditions.IsReady(k) && k.Status.LastAppliedRevision != "" && f.ok(k) {
		f.ready[k.Name] = true
	} else {
		delete(f.ready, k.Name)
	}
}

// follow lists the Kustomizations once, then follows their watch until
// want are Ready, the watch ends (the caller lists again) or ctx does.
func (f *fleetWatch) follow(ctx context.Context, want int) error {
	var list kustomizev1.KustomizationList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	clear(f.ready)
	for i := range list.Items {
		f.see(&list.Items[i])
	}
	if f.count() >= want {
		return nil
	}
	return FollowKustomizations(ctx, f.c, list.ResourceVersion, func(t watch.EventType, k *kustomizev1.Kustomization) bool {
		if t == watch.Deleted {
			delete(f.ready, k.Name)
		} else {
			f.see(k)
		}
		return f.count() >= want
	}, client.InNamespace(f.ns))
}

// FollowKustomizations watches the Kustomizations opts select from
// resourceVersion and hands each event to see until see says done (nil),
// the watch ends or fails (nil too: the caller reads again and follows
// from there), or ctx ends (its error).
func FollowKustomizations(ctx context.Context, c client.WithWatch, resourceVersion string,
	see func(watch.EventType, *kustomizev1.Kustomization) (done bool), opts ...client.ListOption) error {
	return Follow(ctx, c, &kustomizev1.KustomizationList{}, resourceVersion, see, opts...)
}

// Follow is FollowKustomizations for the objects of any list type: it
// watches list's kind from resourceVersion and hands each event whose
// object is a T to see.
func Follow[T client.Object](ctx context.Context, c client.WithWatch, list client.ObjectList, resourceVersion string,
	see func(watch.EventType, T) (done bool), opts ...client.ListOption) error {
	opts = append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
	w, err := c.Watch(ctx, list, opts...)
	if err != nil {
		return fmt.Errorf("watching: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			obj, isT := ev.Object.(T)
			if !ok || !isT { // closed, or a watch error (410 Gone…)
				return nil
			}
			if see(ev.Type, obj) {
				return nil
			}
		}
	}
}
