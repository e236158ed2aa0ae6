package objectview

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// fleet is a GitRepository and two Kustomizations, one Ready with a
// history and an inventory (a ConfigMap that exists, a Deployment that
// does not, the failing Kustomization nested), one failing its build.
const fleet = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: NS}
spec: {url: "http://127.0.0.1:1/fleet.git", interval: 1m, ref: {branch: main}}
status:
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact for revision 'main@sha1:1111'", lastTransitionTime: "2026-01-01T10:00:00Z"}
  artifact: {path: gitrepository/NS/repo/1111.tar.gz, url: "http://127.0.0.1:1/x.tar.gz", revision: "main@sha1:1111", digest: "sha256:00", lastUpdateTime: "2026-01-01T10:00:00Z", size: 1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {a: "1"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ready, namespace: NS}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
  dependsOn: [{name: infra}, {name: base, namespace: other}]
status:
  observedGeneration: 1
  lastAppliedRevision: "main@sha1:1111"
  lastAttemptedRevision: "main@sha1:1111"
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: main@sha1:1111", lastTransitionTime: "2026-01-01T10:01:00Z"}
  history:
  - {digest: "sha256:aaaa", firstReconciled: "2026-01-01T10:01:00Z", lastReconciled: "2026-01-01T11:01:00Z", lastReconciledDuration: 1s, lastReconciledStatus: ReconciliationSucceeded, totalReconciliations: 2, metadata: {revision: "main@sha1:1111"}}
  - {digest: "sha256:bbbb", firstReconciled: "2026-01-01T09:00:00Z", lastReconciled: "2026-01-01T09:00:00Z", lastReconciledDuration: 2s, lastReconciledStatus: BuildFailed, totalReconciliations: 1, metadata: {revision: "main@sha1:0000"}}
  inventory:
    entries:
    - {id: NS_settings__ConfigMap, v: v1}
    - {id: NS_web_apps_Deployment, v: v1}
    - {id: NS_failing_kustomize.toolkit.fluxcd.io_Kustomization, v: v1}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: failing, namespace: NS}
spec:
  interval: 10m
  path: ./broken
  prune: true
  sourceRef: {kind: GitRepository, name: repo}
status:
  observedGeneration: 1
  lastAttemptedRevision: "main@sha1:1111"
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomization path not found: stat broken: no such file or directory", lastTransitionTime: "2026-01-01T10:02:00Z"}
`

// TestGet reads a Ready and a failing Kustomization: summary, conditions,
// history, source, dependsOn, spec and the tree with each node's state,
// against golden JSON (the namespace written NS).
func TestGet(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, fleet)
	for _, name := range []string{"ready", "failing"} {
		t.Run(name, func(t *testing.T) {
			d, err := Get(context.Background(), env.Client, env.Config, Ref{Kind: "Kustomization", Namespace: ns, Name: name})
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", "get-"+name+".json"), []byte(strings.ReplaceAll(string(data), ns, "NS")+"\n"))
		})
	}
	if _, err := Get(context.Background(), env.Client, env.Config, Ref{Kind: "Kustomization", Namespace: ns, Name: "nope"}); !IsNotFound(err) {
		t.Errorf("a missing Kustomization: %v, want a NotFound error", err)
	}
	if _, err := Get(context.Background(), env.Client, env.Config, Ref{Kind: "Deployment", Namespace: ns, Name: "x"}); err == nil {
		t.Error("a kind that is not a toolkit kind: no error")
	}
}

func TestHistoryOfAHelmReleaseKeepsHelmRevisions(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "app", "namespace": "apps"},
		"status": map[string]any{"history": []any{
			map[string]any{"name": "app", "namespace": "apps", "version": int64(3), "status": "deployed", "chartName": "podinfo",
				"chartVersion": "6.5.0", "configDigest": "sha256:c", "digest": "sha256:d", "firstDeployed": "2026-12-01T00:00:00Z", "lastDeployed": "2026-12-02T00:00:00Z"},
			map[string]any{"name": "app", "namespace": "apps", "version": int64(2), "status": "superseded", "chartName": "podinfo",
				"chartVersion": "6.4.0", "configDigest": "sha256:b", "digest": "sha256:e", "firstDeployed": "2026-11-01T00:00:00Z", "lastDeployed": "2026-11-02T00:00:00Z"},
		}},
	}}
	got := historyOf(u)
	if len(got) != 2 || got[0].HelmRevision != 3 || got[1].HelmRevision != 2 || got[0].Revision != "podinfo@6.5.0" ||
		got[1].LastReconciledStatus != "superseded" {
		t.Errorf("history = %+v, want v3 podinfo@6.5.0 then v2 superseded", got)
	}
}
