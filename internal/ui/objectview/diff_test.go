package objectview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/livediff"
)

// storeArtifact archives files as the artifact of GitRepository ns/name at
// revision, served by storage.
func storeArtifact(t *testing.T, ns, name, revision string, files map[string]string) meta.Artifact {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := storage.NewArtifactFor("GitRepository", &metav1.ObjectMeta{Namespace: ns, Name: name}, revision, "artifact.tar.gz")
	if _, err := storage.Archive(context.Background(), &a, dir, nil); err != nil {
		t.Fatal(err)
	}
	return a
}

// gitRepository is a GitRepository whose status advertises a at url.
func gitRepository(name string, a meta.Artifact, url string) string {
	return fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: %s, namespace: NS}
spec: {url: "http://127.0.0.1:1/fleet.git", interval: 1m, ref: {branch: main}}
status:
  observedGeneration: 1
  artifact: {path: %q, url: %q, revision: %q, digest: %q, lastUpdateTime: "2026-01-01T10:00:00Z", size: %d}
`, name, a.Path, url, a.Revision, a.Digest, *a.Size)
}

// deployFiles are the source's new revision: app-config changed, new
// created, the Secret's value rotated; old (in the inventory) is gone.
var deployFiles = map[string]string{
	"deploy/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [config.yaml, new.yaml, secret.yaml]\n",
	"deploy/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {a: \"2\"}\n",
	"deploy/new.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {x: \"1\"}\n",
	"deploy/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {token: new-never-printed}\n",
}

// applied is what the controller applied from the previous revision.
const applied = `apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: NS, labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: NS}}
data: {a: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS, labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: NS}}
stringData: {token: old-never-printed}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: old, namespace: NS, labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: NS}}
data: {b: "1"}
`

// kustomization prunes, and its inventory holds what applied wrote.
func kustomization(name, source, extra string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: NS}
spec:
  interval: 10m
  path: ./deploy
  prune: true
  targetNamespace: NS
  sourceRef: {kind: GitRepository, name: ` + source + `}
` + extra + `status:
  observedGeneration: 1
  inventory:
    entries:
    - {id: NS_app-config__ConfigMap, v: v1}
    - {id: NS_creds__Secret, v: v1}
    - {id: NS_old__ConfigMap, v: v1}
`
}

func ids(changes []livediff.Change) []string {
	out := []string{}
	for _, c := range changes {
		out = append(out, c.ID)
	}
	return out
}

// assertDiff checks the diff of the fixture: one changed ConfigMap, a
// changed Secret with masked values, one created and one pruned object.
func assertDiff(t *testing.T, ns string, res *DiffResult, revision string) {
	t.Helper()
	if res.Error != "" {
		t.Fatalf("diff error: %s", res.Error)
	}
	want := map[string][]string{
		"created": {"ConfigMap/" + ns + "/new"},
		"changed": {"ConfigMap/" + ns + "/app-config", "Secret/" + ns + "/creds"},
		"deleted": {"ConfigMap/" + ns + "/old"},
	}
	got := map[string][]string{"created": ids(res.Created), "changed": ids(res.Changed), "deleted": ids(res.Deleted)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if res.Revision != revision {
		t.Errorf("revision %q, want %q", res.Revision, revision)
	}
	all := fmt.Sprint(res)
	for _, secret := range []string{"never-printed", "bmV3LW5ldmVyLXByaW50ZWQ", "b2xkLW5ldmVyLXByaW50ZWQ"} {
		if strings.Contains(all, secret) {
			t.Errorf("the diff shows a Secret value (%s):\n%s", secret, all)
		}
	}
	if len(res.Changed) == 2 {
		if d := res.Changed[0].Diff; !strings.Contains(d, "-  a: \"1\"") || !strings.Contains(d, "+  a: \"2\"") {
			t.Errorf("app-config's diff:\n%s", d)
		}
		if d := res.Changed[1].Diff; !strings.Contains(d, "-  token: '***** (before)'") || !strings.Contains(d, "+  token: '***** (after)'") {
			t.Errorf("the Secret's diff does not show its masked change:\n%s", d)
		}
	}
	if len(res.Created) == 1 && !strings.Contains(res.Created[0].Diff, "+  x: \"1\"") {
		t.Errorf("the created object's diff:\n%s", res.Created[0].Diff)
	}
}

// TestDiffKustomization renders the source's current artifact, fetched by
// its URL, and dry-runs it: changed, created, pruned, Secret masked. A
// caller who may not read the decryption Secret is told so.
func TestDiffKustomization(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	a := storeArtifact(t, ns, "repo", "main@sha1:2222", deployFiles)
	applyAs(t, ns, meta.KustomizeControllerManager, applied)
	applyYAML(t, ns, gitRepository("repo", a, a.URL)+"---\n"+kustomization("apps", "repo", "")+"---\n"+
		kustomization("sealed", "repo", "  decryption: {provider: sops, secretRef: {name: sops-keys}}\n"))

	res, err := Diff(context.Background(), env.Client, env.Config, Ref{Kind: "Kustomization", Namespace: ns, Name: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	assertDiff(t, ns, res, "main@sha1:2222")

	grant(t, ns, "erin", "kustomize.toolkit.fluxcd.io", []string{"kustomizations"}, []string{"get"})
	grant(t, ns, "erin", "source.toolkit.fluxcd.io", []string{"gitrepositories"}, []string{"get"})
	c, cfg := as(t, "erin")
	res, err = Diff(context.Background(), c, cfg, Ref{Kind: "Kustomization", Namespace: ns, Name: "sealed"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Error, "decryption Secret") || !strings.Contains(res.Error, "forbidden") {
		t.Errorf("a caller who may not read the decryption Secret: error %q", res.Error)
	}

	if _, err := Diff(context.Background(), env.Client, env.Config, Ref{Kind: "GitRepository", Namespace: ns, Name: "repo"}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("Diff of a GitRepository: %v, want ErrNotApplicable", err)
	}
}

// TestDiffThroughServiceProxy: the artifact URL names the source
// controller's Service, which is not reachable from here; the artifact
// comes through the API server's service proxy with the caller's
// credentials. kube-apiserver refuses Endpoints on 127.0.0.1 ("may not be
// in the loopback range"), so a stand-in answers the proxy path, as the
// API server would, from the artifact server.
func TestDiffThroughServiceProxy(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	a := storeArtifact(t, ns, "repo", "main@sha1:3333", deployFiles)
	inCluster := "http://source-controller." + ns + ".svc.cluster.local./" + a.Path
	applyAs(t, ns, meta.KustomizeControllerManager, applied)
	applyYAML(t, ns, gitRepository("repo", a, inCluster)+"---\n"+kustomization("apps", "repo", ""))

	direct := dialDirect
	t.Cleanup(func() { dialDirect = direct })
	var dialled []string
	dialDirect = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		if strings.Contains(addr, ".svc.") {
			return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}}
		}
		return direct(ctx, network, addr)
	}
	prefix := "/api/v1/namespaces/" + ns + "/services/http:source-controller:80/proxy/"
	proxied := 0
	apiServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || r.Header.Get("Authorization") != "Bearer caller-token" {
			http.Error(w, "not the service proxy of the caller", http.StatusForbidden)
			return
		}
		proxied++
		resp, err := http.Get(storage.URL(rest))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer apiServer.Close()

	cfg := &rest.Config{Host: apiServer.URL, BearerToken: "caller-token"}
	res, err := Diff(context.Background(), env.Client, cfg, Ref{Kind: "Kustomization", Namespace: ns, Name: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	assertDiff(t, ns, res, "main@sha1:3333")
	if proxied != 1 || len(dialled) == 0 || !strings.HasPrefix(dialled[0], "source-controller."+ns+".svc.cluster.local.") {
		t.Errorf("tried %v directly, then %d requests through the proxy; want the Service's host, then 1", dialled, proxied)
	}

	cfg.BearerToken = "someone-else"
	if res, err := Diff(context.Background(), env.Client, cfg, Ref{Kind: "Kustomization", Namespace: ns, Name: "apps"}); err != nil || !strings.Contains(res.Error, "service proxy") || !strings.Contains(res.Error, "403") {
		t.Errorf("a proxy that refuses the caller: %v, %+v", err, res)
	}
}

func TestDiffResultHasOneState(t *testing.T) {
	change := &livediff.Result{Changes: []livediff.Change{{ID: "ConfigMap/apps/app", Action: livediff.Changed}}}
	tests := []struct {
		name string
		res  *livediff.Result
		err  error
		want DiffState
	}{
		{"nothing to change", &livediff.Result{}, nil, DiffUnchanged},
		{"no result, no error", nil, nil, DiffUnchanged},
		{"a build error", nil, errors.New("kustomize build failed"), DiffFailed},
		{"changes", change, nil, DiffChanges},
		{"changes, then an error", change, errors.New("forbidden"), DiffFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := result("main@sha1:abc", tt.res, tt.err)
			if got.State != tt.want {
				t.Errorf("state = %s, want %s", got.State, tt.want)
			}
			if (got.State == DiffFailed) != (got.Error != "") {
				t.Errorf("state %s with error %q", got.State, got.Error)
			}
		})
	}
	if na := NotApplicable("GitRepository"); na.State != DiffNotApplicable || !strings.Contains(na.Error, "GitRepository applies nothing") {
		t.Errorf("NotApplicable = %+v", na)
	}
}
