package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/internal/fleet"
)

// worktrees holds whole repositories whose spec.paths are relative to
// their root: Load reads them in place, with Within standing for the
// directory `weir lint` is run on.
const worktrees = "testdata/worktrees"

// appliers maps every object a cluster applies to the IDs of the nodes
// applying it.
func appliers(c *fleet.Cluster) map[string][]string {
	out := map[string][]string{}
	for _, k := range c.AppliedKeys() {
		out[k] = ids(c.Applied[k])
	}
	return out
}

// TestLoadWithin: with Within, entry points are looked for inside it —
// the root syncs and clusters/* directories there, or Within itself —
// while every spec.path resolves from the repository's root.
func TestLoadWithin(t *testing.T) {
	for _, tt := range []struct {
		name, repo, within string
		entries            []string
		implicit           bool
	}{
		{"a cluster directory is the entry point", "kustomize-helm-example", "clusters/staging", []string{"clusters/staging"}, true},
		{"a clusters directory holds the entry points", "kustomize-helm-example", "clusters", []string{"clusters/production", "clusters/staging"}, true},
		{"the whole repository, as without Within", "kustomize-helm-example", "", []string{"clusters/production", "clusters/staging"}, true},
		{"the root syncs inside it", "tests-fleet", "tests/fleet", []string{"tests/fleet/clusters/dev", "tests/fleet/clusters/prod"}, false},
		{"an entry directory holding its children's directories", "flat-entry", "deploy", []string{"deploy"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := fleet.Load(context.Background(), fleet.Options{Dir: filepath.Join(worktrees, tt.repo), Within: tt.within, NoRemoteBases: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.entries, entries(g)); diff != "" {
				t.Fatalf("entries (-want +got):\n%s", diff)
			}
			for _, c := range g.Clusters {
				if c.Root.Implicit != tt.implicit || c.MissingRoot {
					t.Errorf("%s: root implicit %v missing %v, want implicit %v", c.Entry, c.Root.Implicit, c.MissingRoot, tt.implicit)
				}
				if len(c.Kustomizations()) < 2 {
					t.Errorf("%s: only %v found", c.Entry, ids(c.Nodes))
				}
				for _, n := range c.Kustomizations() {
					if !n.Built || n.Err != nil {
						t.Errorf("%s: %s built %v, err %v", c.Entry, n.ID(), n.Built, n.Err)
					}
				}
				for k, nodes := range appliers(c) {
					if len(nodes) != 1 {
						t.Errorf("%s: %s applied by %v", c.Entry, k, nodes)
					}
				}
			}
		})
	}
}

func TestLoadWithinNoEntryPoint(t *testing.T) {
	_, err := fleet.Load(context.Background(), fleet.Options{Dir: filepath.Join(worktrees, "flat-entry")})
	if err == nil || !strings.Contains(err.Error(), "no entry point") {
		t.Errorf("the whole repository holding no entry point: err %v, want no entry point, as without Within", err)
	}
}

// TestLoadRefusesEntriesOutsideTheRepository: Paths and Within stay in
// the repository, lexically and through symlinks.
func TestLoadRefusesEntriesOutsideTheRepository(t *testing.T) {
	outside := writeTree(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n"})
	dir := writeTree(t, fleetRepo)
	if err := os.Symlink(outside, filepath.Join(dir, "clusters", "elsewhere")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		opts fleet.Options
		want string
	}{
		{"a path climbing out", fleet.Options{Paths: []string{"clusters/../../x"}}, "outside the repository"},
		{"Within climbing out", fleet.Options{Within: ".."}, "outside the repository"},
		{"a path through a symlink", fleet.Options{Paths: []string{"clusters/elsewhere"}}, "a symlink out of the repository"},
		{"Within through a symlink", fleet.Options{Within: "clusters/elsewhere"}, "a symlink out of the repository"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Dir = dir
			if _, err := fleet.Load(context.Background(), tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// childrenRepo is a cluster directory holding the Kustomizations and the
// directories they sync: apps (./clusters/dev/apps, which reads
// ../base), and more, written inside apps' path, whose own path is
// ./clusters/dev/more. ns.yaml is the root's own.
var childrenRepo = map[string]string{
	"clusters/dev/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: dev}\n",
	"clusters/dev/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 1m, path: ./clusters/dev/apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
	"clusters/dev/apps/kustomization.yaml": "resources: [../base, more.yaml]\n",
	"clusters/dev/apps/more.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: more, namespace: flux-system}
spec: {interval: 1m, path: ./clusters/dev/more, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
	"clusters/dev/base/kustomization.yaml": "resources: [cm.yaml]\n",
	"clusters/dev/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: default}\n",
	"clusters/dev/more/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more, namespace: default}\n",
}

// TestImplicitRootLeavesChildrenTheirObjects: the root assumed for an
// entry point applies what is its own and none of what the Kustomizations
// written there sync themselves, while a root sync the repository holds
// is built as Flux builds it, every YAML file below its path included.
func TestImplicitRootLeavesChildrenTheirObjects(t *testing.T) {
	const root, apps, more = "Kustomization/flux-system/flux-system", "Kustomization/flux-system/apps", "Kustomization/flux-system/more"
	// Without the base, which a root sync's build would list twice (as
	// ./base and through ./apps) and fail on, as Flux's does.
	noBase := map[string]string{}
	for k, v := range childrenRepo {
		if !strings.HasPrefix(k, "clusters/dev/base/") && k != "clusters/dev/apps/kustomization.yaml" {
			noBase[k] = v
		}
	}
	rootSync := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, path: ./clusters/dev, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`
	otherSource := strings.ReplaceAll(childrenRepo["clusters/dev/apps.yaml"], "name: flux-system}}", "name: other}}") +
		"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: other, namespace: flux-system}\nspec: {interval: 1m, url: https://example.com/other}\n"
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  map[string][]string
	}{
		{"implicit root: the children's paths and what their builds read are theirs", childrenRepo, map[string][]string{
			apps:                     {root},
			"Namespace/dev":          {root},
			"ConfigMap/default/base": {apps},
			more:                     {apps},
			"ConfigMap/default/more": {more},
		}},
		{"implicit root: a generated kustomization in a child's path", noBase, map[string][]string{
			apps:                     {root},
			"Namespace/dev":          {root},
			more:                     {apps},
			"ConfigMap/default/more": {more},
		}},
		{"root sync: Flux's generated kustomization lists the children's directories too", with(noBase, "clusters/dev/flux-system/sync.yaml", rootSync), map[string][]string{
			root:                     {root},
			apps:                     {root},
			"Namespace/dev":          {root},
			more:                     {root, apps},
			"ConfigMap/default/more": {root, more},
		}},
		{"an entry directory's own kustomization.yaml is built as it says", with(childrenRepo, "clusters/dev/kustomization.yaml", "resources: [ns.yaml, apps.yaml, apps]\n"), map[string][]string{
			apps:                     {root},
			"Namespace/dev":          {root},
			"ConfigMap/default/base": {root, apps},
			more:                     {root, apps},
			"ConfigMap/default/more": {more},
		}},
		{"a Kustomization of another source leaves its path to the root", with(noBase, "clusters/dev/apps.yaml", otherSource), map[string][]string{
			apps:                              {root},
			"GitRepository/flux-system/other": {root},
			"Namespace/dev":                   {root},
			more:                              {root},
			"ConfigMap/default/more":          {more},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := fleet.Load(context.Background(), fleet.Options{Dir: writeTree(t, tt.files), Paths: []string{"clusters/dev"}})
			if err != nil {
				t.Fatal(err)
			}
			c := g.Clusters[0]
			for _, n := range c.Kustomizations() {
				if n.Built && n.Err != nil {
					t.Errorf("%s: %v", n.ID(), n.Err)
				}
			}
			if diff := cmp.Diff(tt.want, appliers(c)); diff != "" {
				t.Errorf("appliers (-want +got):\n%s", diff)
			}
		})
	}
}

// with is files with one file replaced or added.
func with(files map[string]string, path, content string) map[string]string {
	out := map[string]string{path: content}
	for k, v := range files {
		if k != path {
			out[k] = v
		}
	}
	return out
}

// TestImplicitRootAboveARootSync: an entry directory holding a cluster's
// root sync below it (fleet/ holding fleet/clusters/dev/flux-system) gets
// an implicit root that finds the root sync: that one is the root itself,
// not a child whose path the implicit root would leave out.
func TestImplicitRootAboveARootSync(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"fleet/clusters/dev/flux-system/sync.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, path: ./fleet/clusters/dev, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		"fleet/clusters/dev/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 1m, path: ./fleet/apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		"fleet/apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
	})
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, Paths: []string{"fleet"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Kustomization/flux-system/flux-system": {"Kustomization/flux-system/flux-system"},
		"Kustomization/flux-system/apps":        {"Kustomization/flux-system/flux-system"},
		"ConfigMap/default/app":                 {"Kustomization/flux-system/apps"},
	}
	if diff := cmp.Diff(want, appliers(g.Clusters[0])); diff != "" {
		t.Errorf("appliers (-want +got):\n%s", diff)
	}
}
