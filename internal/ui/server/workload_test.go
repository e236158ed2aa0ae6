package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// workload writes a HelmRelease whose values take a Secret's key at a
// targetPath, a Kustomization applying a Deployment, and the ReplicaSet
// and Pod the controllers would make of it (owner references), each with
// its status.
func workload(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	docs := []struct{ obj, status string }{
		{`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`, ""}, // no controller manager here makes it
		{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"hunter2"}}`, ""},
		{`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"db"},
			"spec":{"interval":"10m","chartRef":{"kind":"OCIRepository","name":"charts"},
			"valuesFrom":[{"kind":"Secret","name":"db","valuesKey":"password","targetPath":"auth.password"}],
			"values":{"auth":{"user":"app"},"replicas":2}}}`,
			`{"lastAttemptedRevision":"1.2.3+0123456789ab","lastAttemptedRevisionDigest":"sha256:0123456789abcdef",
			"history":[{"name":"db","namespace":"` + ns + `","version":4,"status":"deployed","chartName":"db","chartVersion":"1.2.3",
			"configDigest":"sha256:c","digest":"sha256:d","firstDeployed":"2026-12-01T00:00:00Z","lastDeployed":"2026-12-02T00:00:00Z"}]}`},
		{`{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{"name":"apps"},
			"spec":{"interval":"1m","prune":true,"sourceRef":{"kind":"GitRepository","name":"repo"}}}`,
			`{"inventory":{"entries":[{"id":"` + ns + `_web_apps_Deployment","v":"v1"}]}}`},
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},
			"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"podinfo"}]}}}}`, ""},
	}
	var uid string
	for _, d := range docs {
		u := object(t, d.obj)
		u.SetNamespace(ns)
		env.Create(t, u)
		uid = string(u.GetUID())
		if d.status != "" {
			var status map[string]any
			if err := json.Unmarshal([]byte(d.status), &status); err != nil {
				t.Fatal(err)
			}
			u.Object["status"] = status
			if err := env.Client.Status().Update(context.Background(), u); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := func(kind, name, uid string) string {
		return `"ownerReferences":[{"apiVersion":"apps/v1","kind":"` + kind + `","name":"` + name + `","uid":"` + uid + `","controller":true}]`
	}
	rs := object(t, `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-6b7f",`+owner("Deployment", "web", uid)+`},
		"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"podinfo"}]}}}}`)
	rs.SetNamespace(ns)
	env.Create(t, rs)
	pod := object(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-6b7f-q2x9z","labels":{"app":"web"},`+owner("ReplicaSet", "web-6b7f", string(rs.GetUID()))+`},
		"spec":{"initContainers":[{"name":"migrate","image":"podinfo"}],"containers":[{"name":"web","image":"podinfo"}]}}`)
	pod.SetNamespace(ns)
	env.Create(t, pod)
}

// TestWorkloadPagesAsAUser reads, in cluster mode as a user who may read
// the HelmRelease, the Secret, the workloads and Pods but not pods/log:
// the HelmRelease's chart and values (the Secret's value masked), the
// Kustomization's tree down to the Pod, the Pod's logs refused in a
// sentence per container (200, not an error), and a follow refused the
// same way on the event stream; against golden JSON (the namespace
// written NS).
func TestWorkloadPagesAsAUser(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	workload(t, env, ns)
	uiToken := serviceAccountToken(t, env, ns, "weir-ui")
	bind(t, env, ns, "weir-ui", true, uiRules...)
	token := serviceAccountToken(t, env, ns, "gina")
	bind(t, env, ns, "gina", false,
		rbacv1.PolicyRule{APIGroups: []string{"helm.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "apps"}, Resources: []string{"*"},
			Verbs: []string{"get", "list"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "pods"}, Verbs: []string{"get", "list"}},
	)
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = uiToken
	r := start(t, "cluster", cfg)
	b := newBrowser(t, r.Base)
	var who struct{ CSRFToken string }
	if code := b.post("/api/login", map[string]string{"token": token}, &who); code != http.StatusOK {
		t.Fatalf("login: %d", code)
	}
	var hr struct {
		Helm json.RawMessage `json:"helm"`
	}
	var ks struct {
		Tree json.RawMessage `json:"tree"`
	}
	var logs json.RawMessage
	for path, into := range map[string]any{
		"/api/objects/HelmRelease/" + ns + "/db":     &hr,
		"/api/objects/Kustomization/" + ns + "/apps": &ks,
		"/api/pods/" + ns + "/web-6b7f-q2x9z/logs":   &logs,
	} {
		if code := b.getJSON(path, into); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	if strings.Contains(string(hr.Helm), "hunter2") {
		t.Errorf("the Secret's value reached the page: %s", hr.Helm)
	}
	got, err := json.MarshalIndent(map[string]json.RawMessage{"helmRelease": hr.Helm, "tree": ks.Tree, "logs": logs}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "workload-pages.json"), []byte(strings.ReplaceAll(string(got), ns, "NS")+"\n"))

	resp, err := b.c.Get(r.Base + "/api/pods/" + ns + "/web-6b7f-q2x9z/logs/web/follow")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := "event: failed\ndata: You may not read the logs of pod " + ns + "/web-6b7f-q2x9z (pods/log): "
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(body), want) {
		t.Errorf("follow: %s %q, want an event stream starting %q", resp.Header.Get("Content-Type"), body, want)
	}
}
