package createcmd

import (
	"reflect"
	"testing"

	"github.com/weir-gitops/weir/api/meta"
)

func TestSourceRef(t *testing.T) {
	for in, want := range map[string]sourceRef{
		"podinfo":                       {"GitRepository", "podinfo", ""},
		"podinfo.flux-system":           {"GitRepository", "podinfo", "flux-system"},
		"GitRepository/podinfo":         {"GitRepository", "podinfo", ""},
		"ocirepository/podinfo.apps":    {"OCIRepository", "podinfo", "apps"},
		"Bucket/apps/secrets":           {"Bucket", "secrets", "apps"},
		"GitRepository/my.repo.staging": {"GitRepository", "my.repo", "staging"},
	} {
		var got sourceRef
		if err := got.Set(in); err != nil || got != want {
			t.Errorf("Set(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "HelmRepository/x", "a/b/c/d", "GitRepository/"} {
		var r sourceRef
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted: %+v", bad, r)
		}
	}
}

func TestSafeRelativePath(t *testing.T) {
	for in, want := range map[string]string{
		"./": "./", "deploy": "./deploy", "./deploy/": "./deploy", "../../etc": "./etc",
		"a/../b": "./b", `win\path`: "./win/path", "/abs": "./abs",
	} {
		var p safeRelativePath
		if err := p.Set(in); err != nil || string(p) != want {
			t.Errorf("Set(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
}

func TestDependsOn(t *testing.T) {
	got := dependsOn([]string{"infra", "flux-system/crds", "apps@dep.status.ready", "ns/db@dep.metadata.generation == 1"})
	want := []meta.DependencyReference{
		{Name: "infra"},
		{Name: "crds", Namespace: "flux-system"},
		{Name: "apps", ReadyExpr: "dep.status.ready"},
		{Name: "db", Namespace: "ns", ReadyExpr: "dep.metadata.generation == 1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dependsOn = %+v", got)
	}
}

func TestHealthChecks(t *testing.T) {
	got, err := healthChecks([]string{"Deployment/podinfo.apps", "HelmRelease/redis.data"})
	if err != nil {
		t.Fatal(err)
	}
	want := []meta.NamespacedObjectKindReference{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo", Namespace: "apps"},
		{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: "redis", Namespace: "data"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("healthChecks = %+v", got)
	}
	for _, bad := range []string{"Deployment/podinfo", "Pod/x.y", "podinfo.apps", "Deployment/a.b.c"} {
		if _, err := healthChecks([]string{bad}); err == nil {
			t.Errorf("healthChecks(%q) accepted", bad)
		}
	}
}
