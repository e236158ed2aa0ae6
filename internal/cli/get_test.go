package cli_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestGet(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "get/objects.yaml", ns)

	tests := []struct {
		name   string
		args   []string
		golden string
		code   int
	}{
		{"sources git", []string{"get", "sources", "git"}, "get/sources-git.golden", 0},
		{"source alias and no header", []string{"get", "source", "git", "--no-header"}, "get/sources-git-no-header.golden", 0},
		{"one by name", []string{"get", "sources", "git", "podinfo"}, "get/sources-git-podinfo.golden", 0},
		{"ready=false", []string{"get", "sources", "git", "--status-selector", "ready=false"}, "get/sources-git-not-ready.golden", 0},
		{"label selector", []string{"get", "ks", "-l", "team=a"}, "get/ks-label.golden", 0},
		{"kustomizations", []string{"get", "kustomizations"}, "get/ks.golden", 0},
		{"helmreleases", []string{"get", "hr"}, "get/hr.golden", 0},
		{"sources all", []string{"get", "sources", "all"}, "get/sources-all.golden", 0},
		{"all", []string{"get", "all"}, "get/all.golden", 0},
		{"wide", []string{"get", "ks", "-o", "wide"}, "get/ks-wide.golden", 0},
		{"ks show source", []string{"get", "ks", "--show-source"}, "get/ks-show-source.golden", 0},
		{"hr show source", []string{"get", "hr", "--show-source"}, "get/hr-show-source.golden", 0},
		{"wide and show source", []string{"get", "ks", "-o", "wide", "--show-source"}, "get/ks-wide.golden", 0},
		{"yaml", []string{"get", "sources", "git", "podinfo", "-o", "yaml"}, "get/git-podinfo.yaml.golden", 0},
		{"json", []string{"get", "ks", "apps", "-o", "json"}, "get/ks-apps.json.golden", 0},
		{"name", []string{"get", "all", "-o", "name"}, "get/all-name.golden", 0},
		{"not found", []string{"get", "ks", "missing"}, "get/ks-missing.golden", 1},
		{"none of the kind", []string{"get", "sources", "git", "-l", "team=nobody"}, "get/git-none.golden", 0},
		{"bad status selector", []string{"get", "ks", "--status-selector", "ready"}, "get/bad-status-selector.golden", 1},
		{"watch all refused", []string{"get", "all", "-w"}, "get/watch-all.golden", 1},
		{"bad format", []string{"get", "ks", "-o", "toml"}, "get/bad-format.golden", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := weir(t, append(tt.args, "-n", ns)...)
			if res.Code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.Code, tt.code, res.Stderr)
			}
			assertGolden(t, tt.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
		})
	}
}

// TestGetShowsProgress lists a Kustomization whose reconcile is running its
// health checks, as reconcile.ProgressUnknown leaves it: READY Unknown with
// the phase that runs.
func TestGetShowsProgress(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	applyFixture(t, "get/progress.yaml", ns)
	res := weir(t, "get", "kustomizations", "-n", ns)
	if res.Code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", res.Code, res.Stderr)
	}
	assertGolden(t, "get/ks-progress.golden", "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
}

// TestGetAllNamespaces lists across namespaces: the NAMESPACE column comes
// first.
func TestGetAllNamespaces(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "get/two-namespaces.yaml", ns, ns2)
	res := weir(t, "get", "sources", "git", "-A", "-l", "weir.test/case="+ns)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	// Rows come in namespace order, and the namespaces' names are random:
	// compare them sorted.
	out := strings.NewReplacer(ns2+"\t", "NS2\t", ns+"\t", "NS\t").Replace(res.Stdout)
	lines := strings.SplitAfter(out, "\n")
	sort.Strings(lines[1:])
	assertGolden(t, "get/git-all-namespaces.golden", strings.Join(lines, ""))
}

// TestGetWatch prints the existing object, then its change, row by row.
func TestGetWatch(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	objs := applyFixture(t, "get/watch.yaml", ns)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan result)
	go func() { done <- weirIO(ctx, t, "", out, "get", "ks", "-w", "-n", ns) }()
	waitFor(t, out, "waiting to be reconciled")
	writeStatus(t, objs[0], map[string]any{
		"lastAppliedRevision": "main@sha1:67e2c98a60dc92283531412a9e604dd4bae005a9",
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
			"message": "Applied revision: main@sha1:67e2c98a60dc92283531412a9e604dd4bae005a9", "lastTransitionTime": "2026-11-01T10:00:00Z",
		}},
	})
	waitFor(t, out, "Applied revision")
	cancel()
	res := <-done
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	assertGolden(t, "get/watch.golden", res.Stdout, ns)
}
