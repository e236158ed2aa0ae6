package browsertest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: podinfo, image: "ghcr.io/stefanprodan/podinfo:6.7.0"}]
`

// podFleet is a Kustomization (the real controller) applying a Deployment,
// which kube-controller-manager and kwok run as a ReplicaSet and a Pod.
func podFleet(t *testing.T) *fleet {
	t.Helper()
	env := testenv.Get(t)
	f := &fleet{t: t, env: env, ns: env.Namespace(t), srv: gitserver.New(t, gitserver.Options{}), ks: map[string]*kustomizev1.Kustomization{}}
	f.srv.InitRepo(t, "fleet.git")
	f.commit = f.srv.Commit(t, "fleet.git", gitserver.Commit{Message: "web", Files: map[string]string{"web/deploy.yaml": deployment}})
	f.repo = gitRepository(f)
	env.Create(t, f.repo)
	f.add("web", "./web", nil)
	f.waitReady("web")
	env.WaitForCurrent(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}}, testenv.DefaultTimeout)
	return f
}

// podReader may read toolkit objects, workloads and Pods, not pods/log.
func podReader(t *testing.T, f *fleet) *rest.Config {
	t.Helper()
	read := []string{"get", "list", "watch"}
	return namespaceUser(t, f.env, f.ns, "pod-reader-"+f.ns,
		rbacv1.PolicyRule{APIGroups: []string{"kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "apps"}, Resources: []string{"*"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: read})
}

// openLogs opens the Logs of the page's first Pod and returns what its
// first container's pane says.
func openLogs(b *browser) (note, lines string) {
	b.t.Helper()
	b.waitJS("a Pod in the tree", `!!document.querySelector('[data-testid=tree-node][data-kind=Pod] [data-testid=pod-logs]')`, 10*time.Second)
	b.eval(`document.querySelector('[data-testid=pod-logs] summary').click()`, nil)
	b.waitJS("the logs to load", `document.querySelector('[data-testid=pod-logs]').dataset.loaded === 'true'`, 10*time.Second)
	return b.str(`document.querySelector('[data-testid=container-log] [data-testid=log-note]').innerText`),
		b.str(`document.querySelector('[data-testid=container-log] [data-testid=log-lines]').innerText`)
}

// TestObjectPageShowsPodsAndTheirLogs: a Kustomization's page shows its
// Deployment's ReplicaSet and Pod with phase, readiness and restarts; the
// Pod's log as the node serves it through pods/log (kwok's server plays
// the kubelet); "follow" shows a line written after it started, and stops;
// a user without pods/log is told so in a sentence.
func TestObjectPageShowsPodsAndTheirLogs(t *testing.T) {
	f := podFleet(t)
	before := "listening on :9898 " + f.ns
	if err := f.env.ControlPlane.AppendPodLog(before); err != nil {
		t.Fatal(err)
	}
	b := newUI(t, f.env.Config)
	b.open(ksURL(f.ns, "web"))
	b.waitJS("the ReplicaSet and the Pod", `!!document.querySelector('[data-testid=tree-node][data-kind=Deployment] [data-testid=tree-node][data-kind=ReplicaSet] [data-testid=tree-node][data-kind=Pod]')`, 10*time.Second)
	facts := b.str(`document.querySelector('[data-testid=tree-node][data-kind=Pod] [data-testid=pod-facts]').innerText`)
	if !strings.Contains(facts, "Running · ready 1/1 · 0 restarts") {
		t.Errorf("the Pod says %q, want Running · ready 1/1 · 0 restarts", facts)
	}
	note, lines := openLogs(b)
	b.screenshot("pod-logs")
	var pods corev1.PodList
	if err := f.env.Client.List(context.Background(), &pods, client.InNamespace(f.ns)); err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods: %v %d", err, len(pods.Items))
	}
	if !strings.Contains(lines, before) {
		t.Errorf("the log shows %q (note %q), want the line the node logged: %q", lines, note, before)
	}
	// Following streams until pressed again: a line the container logs
	// after the follow began shows without a reload.
	b.eval(`document.querySelector('[data-testid=log-follow]').click()`, nil)
	b.waitJS("the follow to start", `document.querySelector('[data-testid=log-follow]').getAttribute('aria-pressed') === 'true'`, 10*time.Second)
	// The follow reads from the end of the log once the node has it: the
	// container logs a line every half second until one shows.
	after := "GET /healthz 200 " + f.ns
	shown := `document.querySelector('[data-testid=container-log] [data-testid=log-lines]').innerText.includes(` + strconv.Quote(after) + `)`
	for i := 0; ; i++ {
		if err := f.env.ControlPlane.AppendPodLog(after + " #" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		var ok bool
		b.eval(shown, &ok)
		if ok {
			break
		}
		if i == 20 {
			t.Fatalf("no followed line after 10 s: the log shows %q", b.str(`document.querySelector('[data-testid=container-log] [data-testid=log-lines]').innerText`))
		}
	}
	b.screenshot("pod-logs-followed")
	b.eval(`document.querySelector('[data-testid=log-follow]').click()`, nil)
	if pressed := b.str(`document.querySelector('[data-testid=log-follow]').getAttribute('aria-pressed')`); pressed != "false" {
		t.Errorf("after Stop following the button is pressed: %q", pressed)
	}

	viewer := newUI(t, podReader(t, f))
	viewer.open(ksURL(f.ns, "web"))
	note, lines = openLogs(viewer)
	viewer.screenshot("pod-logs-denied")
	if lines != "" || !strings.HasPrefix(note, "You may not read the logs of pod "+f.ns+"/"+pods.Items[0].Name+" (pods/log)") {
		t.Errorf("a user without pods/log sees %q (lines %q), want a sentence saying so", note, lines)
	}
}

// helmRelease writes a HelmRelease with values from a ConfigMap and a
// Secret, its HelmChart and a status as the helm controller would (no
// helm controller runs here).
func helmRelease(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	ctx := context.Background()
	env.Create(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-values", Namespace: ns},
			Data: map[string]string{"values.yaml": "replicaCount: 2\nui: {color: teal}\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-auth", Namespace: ns},
			StringData: map[string]string{"values.yaml": "auth: {password: correct-horse}\n"}})
	for _, o := range []struct{ obj, status string }{
		{`{"apiVersion":"source.toolkit.fluxcd.io/v1","kind":"HelmChart","metadata":{"name":"` + ns + `-web"},
			"spec":{"chart":"podinfo","sourceRef":{"kind":"HelmRepository","name":"charts"},"interval":"10m","suspend":true}}`,
			`{"artifact":{"path":"p","url":"http://127.0.0.1:1/p.tgz","revision":"6.7.0","digest":"sha256:feedface","lastUpdateTime":"2026-12-01T00:00:00Z"}}`},
		{`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"web"},
			"spec":{"interval":"10m","chart":{"spec":{"chart":"podinfo","sourceRef":{"kind":"HelmRepository","name":"charts"}}},
			"valuesFrom":[{"kind":"ConfigMap","name":"web-values"},{"kind":"Secret","name":"web-auth"}],"values":{"ui":{"color":"plum"}}}}`,
			`{"helmChart":"` + ns + `/` + ns + `-web","conditions":[{"type":"Ready","status":"True","reason":"UpgradeSucceeded",
			"message":"Helm upgrade succeeded","lastTransitionTime":"` + time.Now().UTC().Format(time.RFC3339) + `"}],
			"history":[{"name":"web","namespace":"` + ns + `","version":3,"status":"deployed","chartName":"podinfo","chartVersion":"6.7.0",
			"configDigest":"sha256:c","digest":"sha256:d","firstDeployed":"2026-12-01T00:00:00Z","lastDeployed":"2026-12-01T00:00:00Z"}]}`},
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(o.obj)); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		env.Create(t, u)
		var status map[string]any
		if err := json.Unmarshal([]byte(o.status), &status); err != nil {
			t.Fatal(err)
		}
		// The source controller may have written the HelmChart (its
		// finalizer) since: write the status on the latest version.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return err
			}
			u.Object["status"] = status
			return env.Client.Status().Update(ctx, u)
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHelmReleasePageShowsChartAndValues: the chart's name, version and
// digest; each top-level key's origin; the Secret's value masked and found
// nowhere on the page; the next run; a user who may not read the Secret
// sees a sentence instead of the values.
func TestHelmReleasePageShowsChartAndValues(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	helmRelease(t, env, ns)
	b := newUI(t, env.Config)
	b.open("/objects/HelmRelease/" + ns + "/web")
	b.screenshot("helm")
	for id, want := range map[string]string{"chart-name": "podinfo", "chart-version": "6.7.0", "chart-digest": "sha256:feedface"} {
		if got := b.str(`document.querySelector('[data-testid=` + id + `]').innerText`); got != want {
			t.Errorf("%s shows %q, want %q", id, got, want)
		}
	}
	var origins map[string]string
	b.eval(`Object.fromEntries([...document.querySelectorAll('[data-testid=value-origins] tbody tr')].map(r => [r.dataset.key, r.cells[1].innerText]))`, &origins)
	for key, want := range map[string]string{
		"auth": "Secret/web-auth key values.yaml (Secret values masked)", "replicaCount": "ConfigMap/web-values key values.yaml",
		"ui": "values", // the ConfigMap's ui.color is overridden
	} {
		if got := origins[key]; got != want {
			t.Errorf("the origin of %s reads %q, want %q", key, got, want)
		}
	}
	values := b.str(`document.querySelector('[data-testid=values] pre').innerText`)
	if !strings.Contains(values, "password: '*****'") || !strings.Contains(values, "color: plum") {
		t.Errorf("the merged values read:\n%s\nwant the password masked and spec.values' colour on top", values)
	}
	if page := b.str(`document.body.textContent`); strings.Contains(page, "correct-horse") {
		t.Error("the Secret's value is on the page")
	}
	if next := b.str(`document.querySelector('[data-testid=summary] [data-testid=next-run]').innerText`); !strings.HasPrefix(next, "next run in ") {
		t.Errorf("the summary's next run says %q, want 'next run in …'", next)
	}
	b.open("/?namespace=" + ns)
	row := `[data-testid=object-row][data-id="HelmChart/` + ns + `/` + ns + `-web"] [data-col=next]`
	if next := b.str(`document.querySelector('` + row + `').innerText`); next != "suspended" {
		t.Errorf("the suspended HelmChart's next run says %q, want suspended", next)
	}

	read := []string{"get", "list", "watch"}
	cfg := namespaceUser(t, env, ns, "no-secrets-"+ns,
		rbacv1.PolicyRule{APIGroups: []string{"helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"}, Resources: []string{"*"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "events"}, Verbs: read})
	denied := newUI(t, cfg)
	denied.open("/objects/HelmRelease/" + ns + "/web")
	msg := denied.str(`(() => { const e = document.querySelector('[data-testid=values-error]'); return e && e.offsetParent ? e.innerText : ''; })()`)
	if !strings.HasPrefix(msg, "You may not read every ConfigMap and Secret valuesFrom names, so the values cannot be shown") ||
		!strings.Contains(msg, "web-auth") {
		t.Errorf("a user who may not read the Secret sees %q, want a sentence naming it", msg)
	}
}
