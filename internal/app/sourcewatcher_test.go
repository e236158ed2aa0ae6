package app

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// exampleFleet is a repository laid out as Flux's example repository
// (fluxcd/flux2-kustomize-helm-example) lays out a cluster since Flux 2.7:
// an ArtifactGenerator splits the monorepo into an infrastructure and an
// apps ExternalArtifact, and three Kustomizations with dependsOn read
// them. ConfigMaps stand in for the charts; {ns} is the test namespace.
var exampleFleet = map[string]string{
	"clusters/staging/artifacts.yaml": `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: flux-system
  namespace: {ns}
spec:
  sources:
    - alias: monorepo
      kind: GitRepository
      name: flux-system
  artifacts:
    - name: infrastructure
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/infrastructure/**"
          to: "@artifact/"
    - name: apps
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/apps/base/**"
          to: "@artifact/base/"
        - from: "@monorepo/apps/staging/**"
          to: "@artifact/staging/"
`,
	"clusters/staging/infrastructure.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-controllers
  namespace: {ns}
spec:
  interval: 1h
  retryInterval: 2s
  timeout: 1m
  sourceRef:
    kind: ExternalArtifact
    name: infrastructure
  path: ./controllers
  prune: true
  wait: true
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-configs
  namespace: {ns}
spec:
  dependsOn:
    - name: infra-controllers
  interval: 1h
  retryInterval: 2s
  sourceRef:
    kind: ExternalArtifact
    name: infrastructure
  path: ./configs
  prune: true
`,
	"clusters/staging/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: {ns}
spec:
  dependsOn:
    - name: infra-configs
  interval: 1h
  retryInterval: 2s
  sourceRef:
    kind: ExternalArtifact
    name: apps
  path: ./staging
  prune: true
  wait: true
`,
	"infrastructure/controllers/kustomization.yaml": "namespace: {ns}\nresources: [controllers.yaml]\n",
	"infrastructure/controllers/controllers.yaml":   exampleConfigMap("ingress-nginx", "controller"),
	"infrastructure/configs/kustomization.yaml":     "namespace: {ns}\nresources: [issuers.yaml]\n",
	"infrastructure/configs/issuers.yaml":           exampleConfigMap("cluster-issuers", "letsencrypt"),
	"apps/base/podinfo/kustomization.yaml":          "resources: [release.yaml]\n",
	"apps/base/podinfo/release.yaml":                exampleConfigMap("podinfo", "base"),
	"apps/staging/kustomization.yaml":               "namespace: {ns}\nresources: [../base/podinfo]\npatches:\n  - path: podinfo-values.yaml\n",
	"apps/staging/podinfo-values.yaml":              exampleConfigMap("podinfo", "staging"),
}

func exampleConfigMap(name, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  value: " + value + "\n"
}

// TestExampleFleetWithArtifactGenerator runs weir-controller with the
// source, source-watcher and kustomize controllers on the example's
// layout: everything converges through the generated ExternalArtifacts in
// dependsOn order, and a commit that changes only apps/ moves only the apps
// artifact and Kustomization; the infrastructure ones keep their revision
// and are not applied again.
func TestExampleFleetWithArtifactGenerator(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	cfg := kubeconfigOf(t, env)
	addr := freeAddr(t)
	opts := DefaultOptions()
	opts.Controllers = []string{"source", "source-watcher", "kustomize"}
	opts.SkipNameValidation = true // other tests of the package run Run in this process too
	opts.FeatureGates = map[string]bool{"ExternalArtifact": true}
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), addr, addr
	runInBackground(t, cfg, opts)

	files := map[string]string{}
	for p, body := range exampleFleet {
		files[p] = strings.ReplaceAll(body, "{ns}", ns)
	}
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Files: files, Message: "example"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("fleet.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	root := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo.Name},
			Path:      "./clusters/staging", Prune: true, Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	env.Create(t, repo, root)

	ks := map[string]*kustomizev1.Kustomization{}
	for _, name := range []string{"infra-controllers", "infra-configs", "apps"} {
		ks[name] = &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		waitReconciled(t, env, ks[name], "")
	}
	var podinfo corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "podinfo"}, &podinfo); err != nil || podinfo.Data["value"] != "staging" {
		t.Fatalf("podinfo: %v %v", podinfo.Data, err)
	}
	infraRev, appsRev := ks["infra-configs"].Status.LastAppliedRevision, ks["apps"].Status.LastAppliedRevision
	if !strings.HasPrefix(infraRev, "latest@sha256:") || !strings.HasPrefix(appsRev, "latest@sha256:") {
		t.Errorf("revisions %q %q", infraRev, appsRev)
	}
	configsApplied := conditions.Get(ks["infra-configs"], meta.ReadyCondition).LastTransitionTime

	srv.Commit(t, "fleet.git", gitserver.Commit{Files: map[string]string{"apps/staging/podinfo-values.yaml": exampleConfigMap("podinfo", "staging-v2")}})
	env.RequestReconcile(t, repo)
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "podinfo"}, &podinfo); err != nil {
			return false, err.Error()
		}
		return podinfo.Data["value"] == "staging-v2", "podinfo not updated yet"
	})
	waitReconciled(t, env, ks["apps"], "")
	if ks["apps"].Status.LastAppliedRevision == appsRev {
		t.Error("apps kept its revision after a commit under apps/")
	}
	for _, name := range []string{"infra-controllers", "infra-configs"} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ks[name]), ks[name]); err != nil {
			t.Fatal(err)
		}
		if got := ks[name].Status.LastAppliedRevision; got != infraRev {
			t.Errorf("%s moved from %s to %s on a commit under apps/", name, infraRev, got)
		}
	}
	if got := conditions.Get(ks["infra-configs"], meta.ReadyCondition).LastTransitionTime; !got.Equal(&configsApplied) {
		t.Errorf("infra-configs' Ready changed at %v", got)
	}
}
