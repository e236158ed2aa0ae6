package kustomization

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// podinfo is a base with an overlay that patches, retags and adds a
// component, the layout of fluxcd/flux2-kustomize-helm-example.
var podinfo = map[string]string{
	"apps/base/kustomization.yaml": "resources:\n- deployment.yaml\n- service.yaml\n",
	"apps/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
spec:
  replicas: 1
  selector:
    matchLabels: {app: podinfo}
  template:
    metadata:
      labels: {app: podinfo}
    spec:
      containers:
      - name: podinfo
        image: ghcr.io/stefanprodan/podinfo:6.0.0
`,
	"apps/base/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: podinfo
spec:
  selector: {app: podinfo}
  ports:
  - port: 9898
`,
	"apps/components/monitoring/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- dashboard.yaml\n",
	"apps/components/monitoring/dashboard.yaml":     configMapYAML("podinfo-dashboard", "dashboard.json", "{}"),
	"apps/dev/kustomization.yaml": `resources:
- ../base
components:
- ../components/monitoring
images:
- name: ghcr.io/stefanprodan/podinfo
  newTag: 6.5.0
patches:
- target: {kind: Deployment, name: podinfo}
  patch: |
    - op: replace
      path: /spec/replicas
      value: 2
`,
}

func TestOverlayAppliesAndBecomesHealthy(t *testing.T) {
	f, sha := newFixture(t, podinfo)
	k := f.kustomization("podinfo", "./apps/dev", func(s *kustomizev1.KustomizationSpec) {
		s.Wait = true
		s.CommonMetadata = &kustomizev1.CommonMetadata{Labels: map[string]string{"team": "blue"}}
	})
	f.env.Create(t, k)
	rev := "main@sha1:" + sha
	f.waitApplied(k, rev)

	ready := conditions.Get(k, meta.ReadyCondition)
	if ready.Reason != meta.ReconciliationSucceededReason || ready.Message != "Applied revision: "+rev {
		t.Errorf("Ready = %s %q", ready.Reason, ready.Message)
	}
	if h := conditions.Get(k, meta.HealthyCondition); h == nil || h.Status != metav1.ConditionTrue {
		t.Errorf("Healthy = %+v", h)
	}
	want := []string{
		f.ns + "_podinfo-dashboard__ConfigMap",
		f.ns + "_podinfo__Service",
		f.ns + "_podinfo_apps_Deployment",
	}
	if got := inventoryIDs(k); !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v", got, want)
	}
	if k.Status.LastAttemptedRevision != rev || len(k.Status.History) != 1 ||
		k.Status.History[0].Metadata["revision"] != rev || !strings.HasPrefix(k.Status.History[0].Digest, "sha256:") {
		t.Errorf("status = attempted %q, history %+v", k.Status.LastAttemptedRevision, k.Status.History)
	}

	var d appsv1.Deployment
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "podinfo"}, &d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "ghcr.io/stefanprodan/podinfo:6.5.0" {
		t.Errorf("deployment = %d replicas, image %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	if d.Status.AvailableReplicas != 2 {
		t.Errorf("available replicas = %d after a passed health check", d.Status.AvailableReplicas)
	}
	wantLabels := map[string]string{
		kustomizev1.NameLabel: "podinfo", kustomizev1.NamespaceLabel: f.ns, "team": "blue",
	}
	for key, v := range wantLabels {
		if d.Labels[key] != v {
			t.Errorf("label %s = %q, want %q", key, d.Labels[key], v)
		}
	}
	if !slices.ContainsFunc(d.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == ControllerName && m.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("no server-side apply by %s in managedFields", ControllerName)
	}
	f.env.AssertEvent(t, k, meta.ProgressingReason, strings.Join([]string{
		"ConfigMap/" + f.ns + "/podinfo-dashboard created",
		"Service/" + f.ns + "/podinfo created",
		"Deployment/" + f.ns + "/podinfo created",
	}, "\n"))
	f.env.AssertEventPrefix(t, k, meta.ReconciliationSucceededReason, "Reconciliation finished in ")
}

func TestPrunesWhatLeftGitAndKeepsPruneDisabled(t *testing.T) {
	f, sha := newFixture(t, map[string]string{
		"app/a.yaml":    configMapYAML("a", "k", "1"),
		"app/b.yaml":    configMapYAML("b", "k", "1"),
		"app/keep.yaml": configMapYAML("keep", "k", "1", kustomizev1.PruneAnnotation+"="+kustomizev1.DisabledValue),
	})
	k := f.kustomization("app", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)

	sha = f.push(gitserver.Commit{Delete: []string{"app/b.yaml", "app/keep.yaml"}, Message: "drop b and keep"})
	f.waitApplied(k, "main@sha1:"+sha)
	if !f.absent("b") {
		t.Error("ConfigMap b survived its removal from Git")
	}
	f.configMap("keep") // prune: Disabled
	f.configMap("a")
	if got, want := inventoryIDs(k), []string{f.ns + "_a__ConfigMap"}; !slices.Equal(got, want) {
		t.Errorf("inventory = %v, want %v", got, want)
	}
	f.env.AssertEvent(t, k, meta.ProgressingReason, "ConfigMap/"+f.ns+"/b deleted")

	// A path that legitimately builds to nothing prunes everything.
	sha = f.push(gitserver.Commit{Files: map[string]string{"app/README.md": "nothing to deploy\n"},
		Delete: []string{"app/a.yaml"}, Message: "empty the app"})
	f.waitApplied(k, "main@sha1:"+sha)
	if !f.absent("a") || len(inventoryIDs(k)) != 0 {
		t.Errorf("after an empty build: a absent %v, inventory %v", f.absent("a"), inventoryIDs(k))
	}
}

func TestDriftIsCorrected(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("a", "k", "from-git")})
	k := f.kustomization("app", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)

	cm := f.configMap("a")
	cm.Data["k"] = "edited-by-hand"
	if err := f.env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	f.env.RequestReconcile(t, k)
	f.env.WaitForReady(t, k, nil)
	if got := f.configMap("a").Data["k"]; got != "from-git" {
		t.Errorf("after reconcile k = %q, want the value from Git", got)
	}
	f.env.AssertEvent(t, k, meta.ProgressingReason, "ConfigMap/"+f.ns+"/a configured")
}

// TestFailuresKeepTheLastGoodState pushes one bad commit after another on
// top of a good one. Each must fail with its reason, leave the applied
// objects as they were, prune nothing (every bad commit also deletes b), and
// keep lastAppliedRevision at the good commit.
func TestFailuresKeepTheLastGoodState(t *testing.T) {
	f, goodSHA := newFixture(t, map[string]string{
		"app/a.yaml": configMapYAML("a", "k", "good"),
		"app/b.yaml": configMapYAML("b", "k", "good"),
	})
	k := f.kustomization("app", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.PostBuild = &kustomizev1.PostBuild{Substitute: map[string]string{"defined": "yes"}}
	})
	f.env.Create(t, k)
	good := "main@sha1:" + goodSHA
	f.waitApplied(k, good)

	tests := []struct {
		name    string
		files   map[string]string
		reason  string
		message string
	}{
		{
			name:    "invalid YAML",
			files:   map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n"},
			reason:  meta.BuildFailedReason,
			message: "a.yaml",
		},
		{
			name:    "undefined variable in strict mode",
			files:   map[string]string{"app/a.yaml": configMapYAML("a", "k", "${undefined_var}")},
			reason:  meta.BuildFailedReason,
			message: "undefined_var",
		},
		{
			name:    "object the API server rejects",
			files:   map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: [1, 2]\n"},
			reason:  meta.ReconciliationFailedReason,
			message: "ConfigMap/" + f.ns + "/a",
		},
		{
			name:    "resource escaping the source root",
			files:   map[string]string{"app/kustomization.yaml": "resources:\n- a.yaml\n- ../../../etc\n"},
			reason:  meta.BuildFailedReason,
			message: "outside the source root",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"app/a.yaml": configMapYAML("a", "k", "good")}
			for p, c := range tt.files {
				files[p] = c
			}
			sha := f.push(gitserver.Commit{Files: files, Delete: []string{"app/b.yaml"}, Message: tt.name})
			ready := f.waitFailed(k, "main@sha1:"+sha, tt.reason)
			if !strings.Contains(ready.Message, tt.message) {
				t.Errorf("message %q does not mention %q", ready.Message, tt.message)
			}
			if strings.Contains(ready.Message, "/tmp/") {
				t.Errorf("message %q leaks the temporary directory", ready.Message)
			}
			if k.Status.LastAppliedRevision != good {
				t.Errorf("lastAppliedRevision = %q, want %q", k.Status.LastAppliedRevision, good)
			}
			if f.absent("b") {
				t.Fatal("b was pruned by a failed reconcile")
			}
			if got := f.configMap("a").Data["k"]; got != "good" {
				t.Errorf("a.k = %q, want the last good value", got)
			}
			// Restore b so the next case starts from the good tree.
			sha = f.push(gitserver.Commit{Files: map[string]string{
				"app/a.yaml": configMapYAML("a", "k", "good"), "app/b.yaml": configMapYAML("b", "k", "good"),
			}, Delete: deletable(tt.files), Message: "restore"})
			good = "main@sha1:" + sha
			f.waitApplied(k, good)
		})
	}
}

// deletable lists the files a case added that the good tree does not have.
func deletable(files map[string]string) []string {
	var out []string
	for p := range files {
		if p != "app/a.yaml" && p != "app/b.yaml" {
			out = append(out, p)
		}
	}
	return out
}

func TestSourceAndPathErrors(t *testing.T) {
	f, _ := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("a", "k", "v")})

	missing := f.kustomization("missing-source", "./app", func(s *kustomizev1.KustomizationSpec) { s.SourceRef.Name = "nope" })
	f.env.Create(t, missing)
	ready := f.waitFailed(missing, "", meta.ArtifactFailedReason)
	if want := "Source 'GitRepository/" + f.ns + "/nope' not found"; ready.Message != want {
		t.Errorf("message = %q, want %q", ready.Message, want)
	}

	badPath := f.kustomization("missing-path", "./does-not-exist", nil)
	f.env.Create(t, badPath)
	ready = f.waitFailed(badPath, "", meta.ArtifactFailedReason)
	if !strings.HasPrefix(ready.Message, "kustomization path not found") || strings.Contains(ready.Message, "/tmp/") {
		t.Errorf("message = %q", ready.Message)
	}

	escape := f.kustomization("escape", "../../etc", nil)
	f.env.Create(t, escape)
	ready = f.waitFailed(escape, "", meta.BuildFailedReason)
	if !strings.Contains(ready.Message, "climbs out of the source root") {
		t.Errorf("message = %q", ready.Message)
	}
}

func TestDeletionPolicy(t *testing.T) {
	f, sha := newFixture(t, map[string]string{
		"mirror/a.yaml": configMapYAML("mirror-a", "k", "v"),
		"orphan/a.yaml": configMapYAML("orphan-a", "k", "v"),
	})
	rev := "main@sha1:" + sha
	mirror := f.kustomization("mirror", "./mirror", nil)
	orphan := f.kustomization("orphan", "./orphan", func(s *kustomizev1.KustomizationSpec) {
		s.DeletionPolicy = kustomizev1.DeletionPolicyOrphan
	})
	f.env.Create(t, mirror, orphan)
	f.waitApplied(mirror, rev)
	f.waitApplied(orphan, rev)

	for _, k := range []*kustomizev1.Kustomization{mirror, orphan} {
		if err := f.env.Client.Delete(context.Background(), k); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), &kustomizev1.Kustomization{})
			return err != nil, "Kustomization " + k.Name + " still there"
		})
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		return f.absent("mirror-a"), "mirror-a not deleted with its Kustomization (MirrorPrune, prune: true)"
	})
	f.configMap("orphan-a")
}
