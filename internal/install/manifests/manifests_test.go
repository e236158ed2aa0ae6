package manifests_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/api/meta"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/install/manifests"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

func names(objs []*unstructured.Unstructured, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o.GetName())
		}
	}
	return out
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

func args(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	a, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
	return a
}

func TestControllersExist(t *testing.T) {
	for _, c := range []string{manifests.SourceController, manifests.KustomizeController, manifests.HelmController,
		manifests.NotificationController, manifests.ImageReflectorController, manifests.ImageAutomationController, manifests.UI} {
		if !slices.Contains(app.AllControllers(), manifests.Controller(c)) {
			t.Errorf("%s runs --controllers=%s, which weir-controller does not know", c, manifests.Controller(c))
		}
	}
}

func TestSelected(t *testing.T) {
	o := manifests.DefaultOptions("v1.0.0")
	o.ComponentsExtra = []string{"image-automation-controller", "image-reflector-controller", "source-watcher"}
	run, skipped, err := o.Selected()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller",
		"image-reflector-controller", "image-automation-controller", "source-watcher"}, run); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	o.Components = []string{"kustomize-controler"}
	if _, _, err := o.Selected(); err == nil || !strings.Contains(err.Error(), `unknown component "kustomize-controler"`) {
		t.Errorf("misspelt component: %v", err)
	}
	o.Components = nil
	o.ComponentsExtra = nil
	if _, err := manifests.Generate(o); err == nil {
		t.Error("Generate with no component succeeded")
	}
}

func TestSplitLayout(t *testing.T) {
	o := manifests.DefaultOptions("v1.2.3")
	o.Namespace = "gitops"
	o.ClusterDomain = "example.internal"
	o.TolerationKeys = []string{"node-role"}
	o.ImagePullSecret = "regcred"
	objs, err := manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller"}, names(objs, "Deployment")); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"crd-controller-gitops", "flux-edit-gitops", "flux-view-gitops"}, names(objs, "ClusterRole")); diff != "" {
		t.Errorf("cluster roles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"allow-egress", "allow-scraping", "allow-webhooks"}, names(objs, "NetworkPolicy")); diff != "" {
		t.Errorf("network policies (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l["app.kubernetes.io/part-of"] != "flux" || l["app.kubernetes.io/instance"] != "gitops" || l["app.kubernetes.io/version"] != "v1.2.3" {
			t.Errorf("%s %s labels: %v", o.GetKind(), o.GetName(), l)
		}
		if o.GetKind() == "CustomResourceDefinition" && !strings.Contains(o.GetName(), ".source.") &&
			!strings.Contains(o.GetName(), ".kustomize.") && !strings.Contains(o.GetName(), ".helm.") && !strings.Contains(o.GetName(), ".notification.") {
			t.Errorf("CRD %s of a component weir does not run", o.GetName())
		}
	}
	src := find(t, objs, "Deployment", "source-controller")
	want := []string{"--events-addr=http://notification-controller.$(RUNTIME_NAMESPACE).svc.example.internal./", "--watch-all-namespaces=true", "--log-level=info", "--log-encoding=json", "--enable-leader-election",
		"--storage-path=/data", "--storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.example.internal.", "--controllers=source"}
	if diff := cmp.Diff(want, args(t, src)); diff != "" {
		t.Errorf("source-controller args (-want +got):\n%s", diff)
	}
	if l := src.GetLabels(); l["control-plane"] != "controller" || l["app.kubernetes.io/component"] != "source-controller" {
		t.Errorf("source-controller labels: %v", l)
	}
	if img, _, _ := unstructured.NestedSlice(src.Object, "spec", "template", "spec", "containers"); img[0].(map[string]any)["image"] != "ghcr.io/weir-gitops/weir-controller:v1.2.3" {
		t.Errorf("image: %v", img[0].(map[string]any)["image"])
	}
	tol, _, _ := unstructured.NestedSlice(src.Object, "spec", "template", "spec", "tolerations")
	pull, _, _ := unstructured.NestedSlice(src.Object, "spec", "template", "spec", "imagePullSecrets")
	if len(tol) != 1 || len(pull) != 1 {
		t.Errorf("tolerations %v, image pull secrets %v", tol, pull)
	}
	ks := find(t, objs, "Deployment", "kustomize-controller")
	if a := args(t, ks); a[len(a)-1] != "--controllers=kustomize" || slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--storage") }) {
		t.Errorf("kustomize-controller args: %v", a)
	}
	svc := find(t, objs, "Service", "source-controller")
	if sel, _, _ := unstructured.NestedString(svc.Object, "spec", "selector", "app"); sel != "source-controller" {
		t.Errorf("service selects app=%s", sel)
	}
	nc := find(t, objs, "Deployment", "notification-controller")
	// Flux's notification-controller args exactly (it listens on its
	// --events-addr default, :9090, and --receiverAddr's, :9292), then
	// weir's selection.
	wantNC := []string{"--watch-all-namespaces=true", "--log-level=info", "--log-encoding=json", "--enable-leader-election", "--controllers=notification"}
	if diff := cmp.Diff(wantNC, args(t, nc)); diff != "" {
		t.Errorf("notification-controller args (-want +got):\n%s", diff)
	}
	events := find(t, objs, "Service", "notification-controller")
	if port, _, _ := unstructured.NestedSlice(events.Object, "spec", "ports"); len(port) != 1 || port[0].(map[string]any)["targetPort"] != "http" {
		t.Errorf("notification-controller Service ports %v, want 80 → http", port)
	}
	hook := find(t, objs, "Service", "webhook-receiver")
	sel, _, _ := unstructured.NestedString(hook.Object, "spec", "selector", "app")
	ports, _, _ := unstructured.NestedSlice(hook.Object, "spec", "ports")
	if sel != "notification-controller" || len(ports) != 1 || ports[0].(map[string]any)["targetPort"] != "http-webhook" {
		t.Errorf("webhook-receiver Service: selects app=%s, ports %v", sel, ports)
	}
	crb := find(t, objs, "ClusterRoleBinding", "cluster-reconciler-gitops")
	subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
	if len(subjects) != 2 || subjects[0].(map[string]any)["name"] != "kustomize-controller" || subjects[1].(map[string]any)["name"] != "helm-controller" {
		t.Errorf("cluster-reconciler subjects: %v", subjects)
	}
	checkHelmController(t, objs)
}

// checkHelmController compares the split layout's helm-controller with
// Flux's: its args (--events-addr first, then config/manager's), ports,
// probes, the ten minutes' grace its Helm actions get, and no Service.
func checkHelmController(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	hc := find(t, objs, "Deployment", "helm-controller")
	want := []string{"--events-addr=http://notification-controller.$(RUNTIME_NAMESPACE).svc.example.internal./", "--watch-all-namespaces=true",
		"--log-level=info", "--log-encoding=json", "--enable-leader-election", "--controllers=helm"}
	if diff := cmp.Diff(want, args(t, hc)); diff != "" {
		t.Errorf("helm-controller args (-want +got):\n%s", diff)
	}
	if grace, _, _ := unstructured.NestedInt64(hc.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); grace != 600 {
		t.Errorf("helm-controller terminationGracePeriodSeconds = %d, want Flux's 600", grace)
	}
	cs, _, _ := unstructured.NestedSlice(hc.Object, "spec", "template", "spec", "containers")
	c := cs[0].(map[string]any)
	var ports []string
	for _, p := range c["ports"].([]any) {
		ports = append(ports, p.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"http-prom", "healthz"}, ports); diff != "" {
		t.Errorf("helm-controller ports (-want +got):\n%s", diff)
	}
	live, _, _ := unstructured.NestedString(c, "livenessProbe", "httpGet", "path")
	ready, _, _ := unstructured.NestedString(c, "readinessProbe", "httpGet", "path")
	if live != "/healthz" || ready != "/readyz" {
		t.Errorf("helm-controller probes %q %q", live, ready)
	}
	if slices.Contains(names(objs, "Service"), "helm-controller") {
		t.Error("a helm-controller Service; Flux's has none")
	}
}

func TestSingleLayout(t *testing.T) {
	o := manifests.DefaultOptions("v1.2.3")
	o.Layout = manifests.LayoutSingle
	o.NetworkPolicy = false
	objs, err := manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"weir-controller"}, names(objs, "Deployment")); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	if n := names(objs, "NetworkPolicy"); len(n) != 0 {
		t.Errorf("network policies with NetworkPolicy=false: %v", n)
	}
	d := find(t, objs, "Deployment", "weir-controller")
	if a := args(t, d); a[len(a)-1] != "--controllers=source,kustomize,helm,notification" {
		t.Errorf("args: %v", a)
	}
	if grace, _, _ := unstructured.NestedInt64(d.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); grace != 600 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 600 (helm-controller's, for running Helm actions)", grace)
	}
	svc := find(t, objs, "Service", "source-controller")
	if sel, _, _ := unstructured.NestedString(svc.Object, "spec", "selector", "app"); sel != "weir-controller" {
		t.Errorf("source-controller Service selects app=%s, want the single Deployment's pods", sel)
	}
	if a := args(t, d); !slices.Contains(a, "--events-listen-addr=:9091") || !strings.HasPrefix(a[0], "--events-addr=http://notification-controller.") {
		t.Errorf("single layout args: %v", a)
	}
	events := find(t, objs, "Service", "notification-controller")
	if port, _, _ := unstructured.NestedSlice(events.Object, "spec", "ports"); len(port) != 1 || port[0].(map[string]any)["targetPort"] != "http-events" {
		t.Errorf("notification-controller Service ports %v, want 80 → http-events", port)
	}
	hook := find(t, objs, "Service", "webhook-receiver")
	if sel, _, _ := unstructured.NestedString(hook.Object, "spec", "selector", "app"); sel != "weir-controller" {
		t.Errorf("webhook-receiver Service selects app=%s, want the single Deployment's pods", sel)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	objs, err := manifests.Generate(manifests.DefaultOptions("v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(manifests.Header("v1.0.0", []string{"source-controller"}))
	if err := manifests.Encode(&buf, objs); err != nil {
		t.Fatal(err)
	}
	back, err := manifests.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(objs) {
		t.Fatalf("decoded %d objects, want %d", len(back), len(objs))
	}
	// Numbers come back as JSON numbers: compare in that form.
	var want map[string]any
	data, err := json.Marshal(objs[len(objs)-1].Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back[len(back)-1].Object); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestAcceptedByAPIServer applies every generated object of both layouts,
// with every option set, as a server-side dry run against the real API
// server: schema, defaulting and admission accept them.
func TestAcceptedByAPIServer(t *testing.T) {
	env := testenv.Get(t)
	for _, layout := range []manifests.Layout{manifests.LayoutSplit, manifests.LayoutSingle} {
		t.Run(string(layout), func(t *testing.T) {
			ns := env.Namespace(t)
			o := manifests.DefaultOptions("v1.2.3")
			o.Namespace, o.Layout = ns, layout
			o.ComponentsExtra = []string{"image-reflector-controller", "image-automation-controller", "ui"}
			o.TolerationKeys, o.ImagePullSecret, o.WatchAllNamespaces, o.LogLevel = []string{"a", "b"}, "regcred", false, "debug"
			o.Shards = []string{"shard1", "shard2"}
			objs, err := manifests.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, obj := range objs {
				//nolint:staticcheck // server-side apply of unstructured objects
				err := env.Client.Patch(ctx, obj.DeepCopy(), client.Apply, client.FieldOwner("flux"), client.ForceOwnership, client.DryRunAll)
				if err != nil {
					t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
		})
	}
}

func TestPullSecret(t *testing.T) {
	base := manifests.DefaultOptions("v1.2.3")
	tests := []struct {
		name    string
		creds   string
		secret  string
		wantErr string
	}{
		{name: "no credentials"},
		{name: "credentials", creds: "bot:t0k:en", secret: "regcred"},
		{name: "no pull secret name", creds: "bot:t0ken", wantErr: "requires --image-pull-secret"},
		{name: "no colon", creds: "bot", secret: "regcred", wantErr: "format 'user:password'"},
		{name: "empty password", creds: "bot:", secret: "regcred", wantErr: "format 'user:password'"},
	}
	for _, tt := range tests {
		o := base
		o.RegistryCredential, o.ImagePullSecret = tt.creds, tt.secret
		got, err := o.PullSecret()
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "t0ken") {
				t.Errorf("%s: error %v, want one containing %q and no password", tt.name, err, tt.wantErr)
			}
			continue
		case err != nil:
			t.Fatalf("%s: %v", tt.name, err)
		case tt.creds == "":
			if got != nil {
				t.Errorf("%s: got a Secret", tt.name)
			}
			continue
		}
		if got.GetName() != "regcred" || got.GetNamespace() != "flux-system" || got.Object["type"] != "kubernetes.io/dockerconfigjson" ||
			got.GetLabels()[meta.PartOfLabel] != meta.PartOfValue {
			t.Errorf("%s: Secret %v", tt.name, got.Object)
		}
		data, _, _ := unstructured.NestedString(got.Object, "data", ".dockerconfigjson")
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"auths":{"ghcr.io":{"username":"bot","password":"t0k:en","auth":"` +
			base64.StdEncoding.EncodeToString([]byte("bot:t0k:en")) + `"}}}`
		if string(raw) != want {
			t.Errorf("%s: .dockerconfigjson = %s, want %s", tt.name, raw, want)
		}
	}
}

// TestImageComponents: --components-extra=image-reflector-controller,
// image-automation-controller gives Flux's two Deployments in the split
// layout, the reflector with its /data volume, and runs both inside
// weir-controller in the single layout.
func TestImageComponents(t *testing.T) {
	o := manifests.DefaultOptions("v1.2.3")
	o.ComponentsExtra = []string{manifests.ImageReflectorController, manifests.ImageAutomationController}
	objs, err := manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller",
		"image-reflector-controller", "image-automation-controller"}, names(objs, "Deployment")); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	reflector := find(t, objs, "Deployment", manifests.ImageReflectorController)
	a := args(t, reflector)
	for _, want := range []string{"--storage-path=/data", "--controllers=image-reflector",
		"--events-addr=http://notification-controller.$(RUNTIME_NAMESPACE).svc.cluster.local./"} {
		if !slices.Contains(a, want) {
			t.Errorf("image-reflector-controller args %v lack %s", a, want)
		}
	}
	if vols, _, _ := unstructured.NestedSlice(reflector.Object, "spec", "template", "spec", "volumes"); len(vols) != 2 {
		t.Errorf("image-reflector-controller volumes %v, want data and tmp", vols)
	}
	automation := args(t, find(t, objs, "Deployment", manifests.ImageAutomationController))
	if !slices.Contains(automation, "--controllers=image-automation") || slices.Contains(automation, "--storage-path=/data") {
		t.Errorf("image-automation-controller args %v", automation)
	}
	crds := names(objs, "CustomResourceDefinition")
	for _, want := range []string{"imagerepositories.image.toolkit.fluxcd.io", "imagepolicies.image.toolkit.fluxcd.io",
		"imageupdateautomations.image.toolkit.fluxcd.io"} {
		if !slices.Contains(crds, want) {
			t.Errorf("CRD %s missing", want)
		}
	}

	o.Layout = manifests.LayoutSingle
	objs, err = manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	single := args(t, find(t, objs, "Deployment", manifests.SingleName))
	if want := "--controllers=source,kustomize,helm,notification,image-reflector,image-automation"; !slices.Contains(single, want) {
		t.Errorf("weir-controller args %v lack %s", single, want)
	}
}

// TestUIComponent: --components-extra=ui adds the weir-ui Deployment,
// Service and ServiceAccount in both layouts, with a ClusterRole that can
// only review tokens, impersonate and write Events, bound to nothing else.
func TestUIComponent(t *testing.T) {
	for _, layout := range []manifests.Layout{manifests.LayoutSplit, manifests.LayoutSingle} {
		t.Run(string(layout), func(t *testing.T) {
			o := manifests.DefaultOptions("v1.2.3")
			o.Layout, o.ComponentsExtra = layout, []string{manifests.UI}
			objs, err := manifests.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			a := args(t, find(t, objs, "Deployment", manifests.UIName))
			if !slices.Contains(a, "--controllers=ui") || !slices.Contains(a, "--ui-addr=:9080") ||
				slices.Contains(a, "--enable-leader-election") || slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--events-addr") }) {
				t.Errorf("weir-ui args %v", a)
			}
			find(t, objs, "ServiceAccount", manifests.UIName)
			svc := find(t, objs, "Service", manifests.UIName)
			if sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector"); sel["app"] != manifests.UIName {
				t.Errorf("weir-ui Service selects %v", sel)
			}
			role := find(t, objs, "ClusterRole", manifests.UIName+"-flux-system")
			rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
			var verbs []string
			for _, r := range rules {
				v, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
				verbs = append(verbs, v...)
			}
			slices.Sort(verbs)
			if diff := cmp.Diff([]string{"create", "create", "impersonate", "impersonate", "patch"}, verbs); diff != "" {
				t.Errorf("weir-ui ClusterRole verbs (-want +got):\n%s", diff)
			}
			for _, b := range []string{"crd-controller-flux-system", "cluster-reconciler-flux-system"} {
				subjects, _, _ := unstructured.NestedSlice(find(t, objs, "ClusterRoleBinding", b).Object, "subjects")
				for _, s := range subjects {
					if s.(map[string]any)["name"] == manifests.UIName {
						t.Errorf("%s binds weir-ui", b)
					}
				}
			}
		})
	}
}

// TestSourceWatcher: in the split layout source-watcher is a Deployment of
// its own that stores and serves its artifacts behind its own Service, as
// Flux's; in the single layout it shares source-controller's.
func TestSourceWatcher(t *testing.T) {
	for _, tt := range []struct {
		layout       manifests.Layout
		deployments  []string
		services     []string
		advertisedAs string
	}{
		{manifests.LayoutSplit, []string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller", "source-watcher"},
			[]string{"notification-controller", "source-controller", "source-watcher", "webhook-receiver"}, "source-watcher"},
		{manifests.LayoutSingle, []string{"weir-controller"},
			[]string{"notification-controller", "source-controller", "webhook-receiver"}, "source-controller"},
	} {
		t.Run(string(tt.layout), func(t *testing.T) {
			o := manifests.DefaultOptions("v1.2.3")
			o.Layout = tt.layout
			o.ComponentsExtra = []string{"source-watcher"}
			objs, err := manifests.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.deployments, names(objs, "Deployment")); diff != "" {
				t.Errorf("deployments (-want +got):\n%s", diff)
			}
			got := names(objs, "Service")
			slices.Sort(got)
			if diff := cmp.Diff(tt.services, got); diff != "" {
				t.Errorf("services (-want +got):\n%s", diff)
			}
			d := find(t, objs, "Deployment", tt.deployments[len(tt.deployments)-1])
			a := args(t, d)
			if !slices.Contains(a, "--storage-adv-addr="+tt.advertisedAs+".$(RUNTIME_NAMESPACE).svc.cluster.local.") || !slices.Contains(a, "--storage-path=/data") {
				t.Errorf("%s args %v", d.GetName(), a)
			}
			// flux install with source-watcher turns the ExternalArtifact
			// gate on for the controllers that read ExternalArtifacts.
			for _, name := range tt.deployments {
				a := args(t, find(t, objs, "Deployment", name))
				reads := name == "kustomize-controller" || name == "helm-controller" || name == "weir-controller"
				if got := slices.Contains(a, "--feature-gates=ExternalArtifact=true"); got != reads {
					t.Errorf("%s: ExternalArtifact gate %v, want %v: %v", name, got, reads, a)
				}
			}
		})
	}
}

// TestShardsPartition: with --shards, every object is reconciled by exactly
// one Deployment per sharded controller, chosen by its
// sharding.fluxcd.io/key label, in both layouts; the others see all.
func TestShardsPartition(t *testing.T) {
	for _, tt := range []struct {
		layout manifests.Layout
		// runs maps a --controllers value to the Deployments running it.
		runs map[string][]string
	}{
		{manifests.LayoutSplit, map[string][]string{
			"source":       {"source-controller", "source-controller-shard1", "source-controller-shard2"},
			"kustomize":    {"kustomize-controller", "kustomize-controller-shard1", "kustomize-controller-shard2"},
			"helm":         {"helm-controller", "helm-controller-shard1", "helm-controller-shard2"},
			"notification": {"notification-controller"},
		}},
		{manifests.LayoutSingle, map[string][]string{
			"source":       {"weir-controller", "weir-controller-shard1", "weir-controller-shard2"},
			"kustomize":    {"weir-controller", "weir-controller-shard1", "weir-controller-shard2"},
			"helm":         {"weir-controller", "weir-controller-shard1", "weir-controller-shard2"},
			"notification": {"weir-controller"},
		}},
	} {
		t.Run(string(tt.layout), func(t *testing.T) {
			o := manifests.DefaultOptions("v1.2.3")
			o.Layout, o.Shards = tt.layout, []string{"shard1", "shard2"}
			objs, err := manifests.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, objLabels := range []map[string]string{nil, {meta.ShardKeyLabel: "shard1"}, {meta.ShardKeyLabel: "shard2"}} {
				for controller, deployments := range tt.runs {
					var got []string
					for _, name := range deployments {
						if selects(t, args(t, find(t, objs, "Deployment", name)), objLabels) {
							got = append(got, name)
						}
					}
					want := 1
					if controller == "notification" && objLabels != nil && tt.layout == manifests.LayoutSingle {
						// Not sharded, yet the one process's selector is
						// the main shard's: labelled Alerts go unseen.
						want = 0
					}
					if len(got) != want {
						t.Errorf("%s of an object labelled %v: run by %v", controller, objLabels, got)
					}
				}
			}
			for _, name := range names(objs, "Service") {
				if !strings.HasPrefix(name, "source-controller-") {
					continue
				}
				svc := find(t, objs, "Service", name)
				sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
				shard := strings.TrimPrefix(name, "source-controller-")
				want := map[string]string{"app": map[manifests.Layout]string{manifests.LayoutSplit: "source-controller", manifests.LayoutSingle: "weir-controller"}[tt.layout] + "-" + shard}
				if diff := cmp.Diff(want, sel); diff != "" {
					t.Errorf("Service %s selector (-want +got):\n%s", name, diff)
				}
			}
		})
	}
	o := manifests.DefaultOptions("v1.2.3")
	for _, bad := range [][]string{{"Shard1"}, {"a", "a"}, {strings.Repeat("s", 50)}} {
		o.Shards = bad
		if _, err := manifests.Generate(o); err == nil {
			t.Errorf("--shards=%v accepted", bad)
		}
	}
}

// selects reports whether a Deployment with args reconciles an object
// labelled objLabels: it has no --watch-label-selector, or that matches.
func selects(t *testing.T, args []string, objLabels map[string]string) bool {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--watch-label-selector="); ok {
			sel, err := labels.Parse(v)
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			return sel.Matches(labels.Set(objLabels))
		}
	}
	return true
}
