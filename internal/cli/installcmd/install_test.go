package installcmd_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/install/manifests"
)

// One control plane with a kwok node (so that Deployments become ready)
// and no CRDs: install puts them in, uninstall takes them out.
func TestMain(m *testing.M) {
	testenv.Main(m, func(o *testenv.Options) { o.SkipCRDs = true })
}

// elideCRDs replaces the spec of every CRD in a YAML stream with a marker:
// the schemas are generated from api/ and checked by config/crd's tests;
// here only their presence and labels matter.
func elideCRDs(stream string) string {
	docs := strings.Split(stream, "\n---\n")
	for i, d := range docs {
		if strings.Contains(d, "\nkind: CustomResourceDefinition\n") {
			if at := strings.Index(d, "\nspec:\n"); at >= 0 {
				docs[i] = d[:at] + "\nspec: {} # elided by the test"
			}
		}
	}
	return strings.Join(docs, "\n---\n")
}

func TestExport(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"export-split.golden", nil},
		{"export-single.golden", []string{"--layout=single", "--components=source-controller,kustomize-controller",
			"--components-extra=image-reflector-controller", "--network-policy=false", "--watch-all-namespaces=false",
			"--log-level=debug", "--registry=registry.example/weir/", "--image-pull-secret=regcred",
			"--toleration-keys=infra,gpu", "--cluster-domain=cluster.example", "-n", "gitops"}},
		{"export-ui.golden", []string{"--components=kustomize-controller", "--components-extra=ui", "--network-policy=false"}},
		// Flux's sharding: the main source, kustomize and helm controllers
		// skip labelled objects, each shard runs its own copies.
		{"export-shards-split.golden", []string{"--shards=shard1,shard2", "--network-policy=false"}},
		{"export-shards-single.golden", []string{"--layout=single", "--shards=shard1", "--network-policy=false"}},
		// Automatic sharding: three active replicas of the source,
		// kustomize and helm controllers, each advertising its pod IP.
		{"export-shard-auto.golden", []string{"--shard-mode=auto", "--replicas=3", "--network-policy=false"}},
		{"export-shard-auto-single.golden", []string{"--layout=single", "--shard-mode=auto", "--replicas=2", "--network-policy=false"}},
	}
	for _, tc := range cases {
		res := clitest.Run(t, append([]string{"install", "--export"}, tc.args...)...)
		if res.Code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.golden, res.Code, res.Stderr)
		}
		if res.Stderr != "" {
			t.Errorf("%s: --export printed on stderr: %s", tc.golden, res.Stderr)
		}
		clitest.AssertGolden(t, tc.golden, elideCRDs(res.Stdout))
	}

	res := clitest.Run(t, "install", "--export", "--components=helm-controller")
	if res.Code != 0 || !strings.Contains(res.Stdout, "\n  name: helm-controller\n") || !strings.Contains(res.Stdout, "--controllers=helm") {
		t.Errorf("helm only: exit %d, stderr %s", res.Code, res.Stderr)
	}
	res = clitest.Run(t, "install", "--export", "--components-extra=source-watcher")
	if res.Code != 0 || !strings.Contains(res.Stdout, "\n  name: source-watcher\n") || !strings.Contains(res.Stdout, "--controllers=source-watcher") ||
		!strings.Contains(res.Stdout, "--storage-adv-addr=source-watcher.$(RUNTIME_NAMESPACE).svc.cluster.local.") {
		t.Errorf("source-watcher: exit %d, stderr %s", res.Code, res.Stderr)
	}
	res = clitest.Run(t, "install", "--export", "--shards=shard1,Shard_2")
	if res.Code != 1 || !strings.Contains(res.Stderr, `invalid shard name "Shard_2"`) {
		t.Errorf("bad shard: exit %d, stderr %s", res.Code, res.Stderr)
	}
	res = clitest.Run(t, "install", "--export", "--shards=shard1,shard1")
	if res.Code != 1 || !strings.Contains(res.Stderr, `shard "shard1" is given twice`) {
		t.Errorf("duplicate shard: exit %d, stderr %s", res.Code, res.Stderr)
	}
	for _, tc := range []struct{ args, want string }{
		{"--replicas=2", "--replicas=2 needs --shard-mode=auto"},
		{"--shard-mode=manual", `unknown shard mode "manual": want off or auto`},
		{"--shard-mode=auto --replicas=0", "--replicas=0: want at least 1"},
	} {
		res = clitest.Run(t, append([]string{"install", "--export"}, strings.Fields(tc.args)...)...)
		if res.Code != 1 || !strings.Contains(res.Stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %s; want %q", tc.args, res.Code, res.Stderr, tc.want)
		}
	}
	res = clitest.Run(t, "install", "--export", "--layout=both")
	if res.Code != 1 || !strings.Contains(res.Stderr, `unknown layout "both"`) {
		t.Errorf("bad layout: exit %d, stderr %s", res.Code, res.Stderr)
	}
}

// resourceVersions returns the resourceVersion of every object of objs as
// stored in the cluster.
func resourceVersions(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	env := testenv.Get(t)
	out := map[string]string{}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		out[o.GetKind()+"/"+o.GetName()] = got.GetResourceVersion()
	}
	return out
}

func TestInstallCheckUninstall(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()

	res := clitest.Run(t, "check", "--pre")
	if res.Code != 0 {
		t.Fatalf("check --pre: exit %d: %s", res.Code, res.Stderr)
	}
	clitest.AssertGolden(t, "check-pre.golden", res.Output())

	res = clitest.Run(t, "check")
	if res.Code != 1 {
		t.Errorf("check before install: exit %d, want 1", res.Code)
	}
	clitest.AssertGolden(t, "check-not-installed.golden", res.Output())

	start := time.Now()
	res = clitest.Run(t, "install")
	if res.Code != 0 {
		t.Fatalf("install: exit %d: %s", res.Code, res.Stderr)
	}
	t.Logf("install took %s", time.Since(start).Round(time.Millisecond))
	clitest.AssertGolden(t, "install.golden", res.Output())

	res = clitest.Run(t, "check")
	if res.Code != 0 {
		t.Errorf("check: exit %d: %s", res.Code, res.Stderr)
	}
	clitest.AssertGolden(t, "check.golden", res.Output())

	// `install --export`, applied from a directory, is what install applied:
	// server-side apply of the same content changes nothing.
	res = clitest.Run(t, "install", "--export")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gotk-components.yaml"), []byte(res.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	exported, err := manifests.Decode([]byte(res.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	before := resourceVersions(t, exported)
	res = clitest.Run(t, "install", "--manifests", dir)
	if res.Code != 0 {
		t.Fatalf("install --manifests: exit %d: %s", res.Code, res.Stderr)
	}
	after := resourceVersions(t, exported)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed when the exported manifests were applied (resourceVersion %s -> %s)", k, v, after[k])
		}
	}

	// Workloads applied by Kustomizations that prune, and a real kustomize
	// controller that has put its finalizer on them.
	applyWorkload(t)
	runKustomizeController(t)
	testenv.Eventually(t, 30*time.Second, func(context.Context) (bool, string) {
		return hasFinalizer(t, "apps") && hasFinalizer(t, "canary"), "the controller has not added its finalizer"
	})
	// The control: with its finalizer in place, deleting a Kustomization
	// makes the controller delete what it applied.
	if err := env.Client.Delete(ctx, &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: "flux-system"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "canary-config"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), "the controller did not prune canary-config"
	})

	res = clitest.Run(t, "uninstall", "--dry-run")
	if res.Code != 0 {
		t.Fatalf("uninstall --dry-run: exit %d: %s", res.Code, res.Stderr)
	}
	clitest.AssertGolden(t, "uninstall-dry-run.golden", res.Output())
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "source-controller", Namespace: "flux-system"}, &corev1.ServiceAccount{}); err != nil {
		t.Errorf("dry run deleted the source-controller ServiceAccount: %v", err)
	}

	res = clitest.RunIO(ctx, t, "n\n", nil, nil, "uninstall")
	if res.Code != 1 || !strings.Contains(res.Stderr, "aborting") {
		t.Errorf("uninstall answered no: exit %d: %s", res.Code, res.Stderr)
	}

	start = time.Now()
	res = clitest.Run(t, "uninstall", "-s")
	if res.Code != 0 {
		t.Fatalf("uninstall: exit %d: %s", res.Code, res.Stderr)
	}
	t.Logf("uninstall took %s", time.Since(start).Round(time.Millisecond))
	clitest.AssertGolden(t, "uninstall.golden", stableUninstall(res.Output()))

	// The workload survives; weir's CRDs (and with them its objects), RBAC
	// and namespace are gone.
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "apps-config"}, &cm); err != nil || cm.DeletionTimestamp != nil {
		t.Errorf("the applied ConfigMap did not survive uninstall: %v %v", err, cm.DeletionTimestamp)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) (bool, string) {
		var crds apiextensionsv1.CustomResourceDefinitionList
		if err := env.Client.List(ctx, &crds); err != nil {
			return false, err.Error()
		}
		if len(crds.Items) > 0 {
			return false, "CRDs left: " + crds.Items[0].Name
		}
		err := env.Client.Get(ctx, client.ObjectKey{Name: "flux-system"}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), "namespace flux-system still there"
	})
	var roles rbacv1.ClusterRoleList
	if err := env.Client.List(ctx, &roles, client.MatchingLabels{"app.kubernetes.io/part-of": "flux"}); err != nil || len(roles.Items) != 0 {
		t.Errorf("cluster roles left: %v %d", err, len(roles.Items))
	}
}

// TestSingleLayout installs the single layout in a namespace of its own,
// checks it and uninstalls it keeping the namespace. It runs after
// TestInstallCheckUninstall, which leaves no CRDs behind.
func TestSingleLayout(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	for _, step := range []struct {
		golden string
		args   []string
	}{
		{"single-install.golden", []string{"install", "--layout=single", "--network-policy=false", "-n", "weir-system",
			"--registry-creds=bot:t0ken", "--image-pull-secret=regcred"}},
		{"single-check.golden", []string{"check", "-n", "weir-system"}},
		{"single-uninstall.golden", []string{"uninstall", "--keep-namespace", "--silent", "-n", "weir-system"}},
	} {
		res := clitest.Run(t, step.args...)
		if res.Code != 0 {
			t.Fatalf("%v: exit %d: %s", step.args, res.Code, res.Stderr)
		}
		clitest.AssertGolden(t, step.golden, res.Output())
		switch step.golden {
		case "single-install.golden":
			var pull corev1.Secret
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: "weir-system", Name: "regcred"}, &pull)
			if err != nil || pull.Type != corev1.SecretTypeDockerConfigJson || strings.Contains(res.Output(), "t0ken") {
				t.Errorf("--registry-creds: %v, type %q", err, pull.Type)
			}
		case "single-check.golden":
			checkUnschedulable(t)
		}
	}
	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "weir-system"}, &ns); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("--keep-namespace: namespace weir-system: %v, deleting: %v", err, ns.DeletionTimestamp)
	}
	var sas corev1.ServiceAccountList
	if err := env.Client.List(ctx, &sas, client.InNamespace("weir-system"), client.MatchingLabels{"app.kubernetes.io/part-of": "flux"}); err != nil || len(sas.Items) != 0 {
		t.Errorf("service accounts left: %v %d", err, len(sas.Items))
	}
}

// checkUnschedulable moves the controller's pods to a node that does not
// exist: check then reports the Deployment not ready once --timeout has
// passed, and fails; made schedulable while check waits, it passes.
func checkUnschedulable(t *testing.T) {
	t.Helper()
	env := testenv.Get(t)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "weir-controller", Namespace: "weir-system"}}
	patch := []byte(`{"spec":{"template":{"spec":{"nodeSelector":{"weir.test/nowhere":"true"}}}}}`)
	if err := env.Client.Patch(context.Background(), d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	res := clitest.Run(t, "check", "-n", "weir-system", "--timeout", "3s", "--poll-interval", "500ms")
	if res.Code != 1 || !strings.Contains(res.Stderr, "✗ weir-controller: deployment not ready") ||
		!strings.Contains(res.Stderr, "✗ check failed") {
		t.Errorf("check with an unschedulable controller: exit %d\n%s", res.Code, res.Stderr)
	}

	// check waits, polling every --poll-interval until --timeout, as flux
	// check does: the Deployment made schedulable again while it waits
	// ends the check in success.
	done := make(chan clitest.Result, 1)
	go func() {
		done <- clitest.Run(t, "check", "-n", "weir-system", "--timeout", "2m", "--poll-interval", "250ms")
	}()
	time.Sleep(time.Second) // let check read the Deployment not ready first
	unpatch := []byte(`{"spec":{"template":{"spec":{"nodeSelector":null}}}}`)
	if err := env.Client.Patch(context.Background(), d, client.RawPatch(types.MergePatchType, unpatch)); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if res.Code != 0 || !strings.Contains(res.Stderr, "✔ weir-controller: deployment ready") {
		t.Errorf("check while the controller becomes schedulable: exit %d\n%s", res.Code, res.Stderr)
	}
}

// applyWorkload creates what a kustomize controller would have applied: a
// ConfigMap per Kustomization in namespace apps, labelled with its owner and
// listed in the inventory of a Kustomization with prune: true, and their
// GitRepository, holding weir's finalizer.
func applyWorkload(t *testing.T) {
	t.Helper()
	env := testenv.Get(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}); err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.Decode([]byte(`
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: apps, namespace: flux-system, finalizers: [finalizers.fluxcd.io]}
spec: {interval: 1m, url: "https://127.0.0.1/apps.git", ref: {branch: main}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, objs[0]); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"apps", "canary"} {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config", Namespace: "apps", Labels: map[string]string{
				"kustomize.toolkit.fluxcd.io/name": name, "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
			}},
			Data: map[string]string{"greeting": "hello"},
		}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		ks := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{
				Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./apps", Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "apps"},
			},
		}
		if err := env.Client.Create(ctx, ks); err != nil {
			t.Fatal(err)
		}
		ks.Status.Inventory = &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{
			{ID: "apps_" + name + "-config__ConfigMap", Version: "v1"},
		}}
		if err := env.Client.Status().Update(ctx, ks); err != nil {
			t.Fatal(err)
		}
	}
}

// runKustomizeController runs weir's kustomize controller in the test
// process, standing in for the kustomize-controller pod kwok only pretends
// to run, and stops it, as the kubelet would, once that Deployment is being
// deleted.
func runKustomizeController(t *testing.T) {
	t.Helper()
	controllers.Run(t, controllers.Options{
		Controllers: []string{"kustomize"},
		Deployment:  client.ObjectKey{Namespace: "flux-system", Name: "kustomize-controller"},
	})
}

func hasFinalizer(t *testing.T, name string) bool {
	t.Helper()
	var ks kustomizev1.Kustomization
	if err := testenv.Get(t).Client.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: name}, &ks); err != nil {
		return false
	}
	return slices.Contains(ks.Finalizers, "finalizers.fluxcd.io")
}

// stableUninstall drops the finalizer releases of uninstall's second pass
// from its output: whether the controller put one back before it stopped
// depends on timing.
func stableUninstall(out string) string {
	var lines []string
	second := false
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.Contains(l, "deleting components") {
			second = true
		}
		if second && strings.Contains(l, "finalizers deleted") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "")
}
