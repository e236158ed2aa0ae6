package kustomize

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// memoryTree is root as the controller holds a small artifact of it: the
// tarball the source controller would write, read back with ReadTree.
func memoryTree(t testing.TB, root string) *artifact.Tree {
	t.Helper()
	var buf bytes.Buffer
	if _, err := artifact.WriteArchive(context.Background(), &buf, root, artifact.ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	tree, err := artifact.ReadTree(&buf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

var generatedTree = map[string]string{
	"deploy/namespace.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gen\n",
	"deploy/z/last.yml":                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\n  namespace: gen\n",
	"deploy/a/first.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n",
	"deploy/README.md":                 "# not a manifest\n",
	"deploy/sub/kustomization.yaml":    "resources: [svc.yaml]\nnamePrefix: sub-\n",
	"deploy/sub/svc.yaml":              "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports: [{port: 80}]\n",
	"deploy/sub/not-listed.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-listed\n",
	"deploy/empty.yaml":                "",
	"deploy/skipped/kustomization.yml": "resources: [cm.yaml]\n",
	"deploy/skipped/cm.yaml":           cmYAML,
	"elsewhere/ignored.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n",
}

// treeCases are builds that must come out the same from disk and from
// memory: objects, checksum, files read, or the error, word for word.
var treeCases = []struct {
	name   string
	files  map[string]string
	opts   BuildOptions
	golden string
}{
	{name: "overlay dev", files: podinfoTree, opts: BuildOptions{Path: "./apps/dev"}, golden: "podinfo-dev.yaml"},
	{name: "overlay prod", files: podinfoTree, opts: BuildOptions{Path: "apps/prod"}, golden: "podinfo-prod.yaml"},
	{name: "spec transforms", files: podinfoTree, opts: BuildOptions{Path: "apps/prod", TargetNamespace: "apps", NamePrefix: "p-",
		Components: []string{"../components/tls"}, Images: []meta.Image{{Name: "ghcr.io/stefanprodan/podinfo", NewTag: "6.9.0"}}}},
	{name: "generated kustomization", files: generatedTree, opts: BuildOptions{Path: "deploy", TargetNamespace: "target"}},
	{name: "generated from the root", files: map[string]string{"a.yaml": cmYAML, "b/c.yml": strings.Replace(cmYAML, "cm", "c", 1)}},
	{name: "non-Kubernetes YAML", files: map[string]string{"cm.yaml": cmYAML, ".sops.yaml": "creation_rules: []\n"}},
	{name: "empty directory", files: map[string]string{"docs/README.md": "x\n"}, opts: BuildOptions{Path: "docs"}},
	{name: "generator only", files: map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: gen\n  literals: [a=b]\n"}},
	{name: "generator files", files: map[string]string{
		"kustomization.yaml":  "configMapGenerator:\n- name: gen\n  files: [conf/app.properties]\n  envs: [conf/env]\n",
		"conf/app.properties": "a=b\n", "conf/env": "X=1\n",
	}},
	{name: "generator file missing", files: map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: gen\n  files: [nope.properties]\n"}},
	{name: "generator file is a directory", files: map[string]string{
		"kustomization.yaml": "configMapGenerator:\n- name: gen\n  files: [conf]\n", "conf/a": "a",
	}},
	{name: "missing component", files: podinfoTree, opts: BuildOptions{Path: "apps/dev", Components: []string{"../components/tls", "../components/nope"}}},
	{name: "ignored missing component", files: podinfoTree, opts: BuildOptions{Path: "apps/dev",
		Components: []string{"../components/tls", "../components/nope"}, IgnoreMissingComponents: true}},
	{name: "remote component", files: podinfoTree, opts: BuildOptions{Path: "apps/dev", Components: []string{"https://github.com/x/y//c"}}},
	{name: "spec.path missing", files: podinfoTree, opts: BuildOptions{Path: "apps/staging"}},
	{name: "spec.path is a file", files: podinfoTree, opts: BuildOptions{Path: "apps/dev/kustomization.yaml"}},
	{name: "spec.path through a file", files: podinfoTree, opts: BuildOptions{Path: "apps/dev/kustomization.yaml/x"}},
	{name: "resource missing", files: map[string]string{"kustomization.yaml": "resources: [cm.yaml, missing.yaml]\n", "cm.yaml": cmYAML}},
	{name: "resource through a file", files: map[string]string{"kustomization.yaml": "resources: [cm.yaml/x.yaml]\n", "cm.yaml": cmYAML}},
	{name: "base without kustomization", files: map[string]string{"kustomization.yaml": "resources: [base]\n", "base/cm.yaml": cmYAML}},
	{name: "nested bases", files: map[string]string{
		"kustomization.yaml": "resources: [base, cm.yaml]\nnameSuffix: -top\n", "cm.yaml": strings.Replace(cmYAML, "cm", "top", 1),
		"base/kustomization.yaml": "resources: [../shared/cm.yaml]\nnamePrefix: b-\n", "shared/cm.yaml": cmYAML,
	}},
	{name: "two kustomization files", files: map[string]string{"kustomization.yaml": "resources: []\n", "kustomization.yml": "resources: []\n"}},
	{name: "invalid kustomization", files: map[string]string{"kustomization.yaml": "resources: [\n"}},
	{name: "invalid manifest", files: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": "kind: [\n"}},
	{name: "patch file missing", files: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: nope.yaml\n", "cm.yaml": cmYAML}},
	{name: "patch file", files: map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: patches/p.yaml\n", "cm.yaml": cmYAML,
		"patches/p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
	}},
	{name: "post-build variables", files: map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name:=apps}\n"},
		opts: BuildOptions{PostBuild: &PostBuild{Vars: map[string]string{"other": "x"}}}},
	// security_test.go's escapes that need no symbolic link.
	{name: "spec.path with ..", files: podinfoTree, opts: BuildOptions{Path: "../outside"}},
	{name: "absolute spec.path", files: podinfoTree, opts: BuildOptions{Path: "/etc"}},
	{name: "resource with ..", files: map[string]string{"app/kustomization.yaml": "resources: [../../outside/secret.yaml]\n"}, opts: BuildOptions{Path: "app"}},
	{name: "base with ..", files: map[string]string{"app/kustomization.yaml": "resources: [../../outside/base]\n"}, opts: BuildOptions{Path: "app"}},
	{name: "absolute resource", files: map[string]string{"app/kustomization.yaml": "resources: [/etc/hostname]\n"}, opts: BuildOptions{Path: "app"}},
	{name: "patch file outside", files: map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: ../../outside/secret.yaml\n", "app/cm.yaml": cmYAML,
	}, opts: BuildOptions{Path: "app"}},
	{name: "spec component outside", files: map[string]string{"app/kustomization.yaml": "resources: []\n"},
		opts: BuildOptions{Path: "app", Components: []string{"../../outside/base"}}},
	{name: "ignored missing component outside", files: map[string]string{"app/kustomization.yaml": "resources: []\n"},
		opts: BuildOptions{Path: "app", Components: []string{"../../outside/nothing"}, IgnoreMissingComponents: true}},
}

func TestBuildFromMemoryAsFromDisk(t *testing.T) {
	for _, tt := range treeCases {
		t.Run(tt.name, func(t *testing.T) {
			root := newRoot(t, tt.files)
			diskOpts, memOpts := tt.opts, tt.opts
			diskOpts.Root, diskOpts.NoRemoteBases = root, true
			memOpts.Tree, memOpts.NoRemoteBases = memoryTree(t, root), true
			disk, diskErr := Build(context.Background(), diskOpts)
			mem, memErr := Build(context.Background(), memOpts)
			if diskErr != nil || memErr != nil {
				if diskErr == nil || memErr == nil || diskErr.Error() != memErr.Error() {
					t.Fatalf("errors differ:\ndisk:   %v\nmemory: %v", diskErr, memErr)
				}
				t.Logf("both: %v", memErr)
				if strings.Contains(memErr.Error(), memoryRoot) {
					t.Errorf("error names the memory root: %v", memErr)
				}
				return
			}
			if diff := cmp.Diff(string(mustYAML(t, disk)), string(mustYAML(t, mem))); diff != "" {
				t.Errorf("objects (-disk +memory):\n%s", diff)
			}
			if disk.Checksum != mem.Checksum || disk.Remote != mem.Remote {
				t.Errorf("checksum/remote: disk %s %v, memory %s %v", disk.Checksum, disk.Remote, mem.Checksum, mem.Remote)
			}
			if diff := cmp.Diff(disk.Files, mem.Files); diff != "" {
				t.Errorf("files read (-disk +memory):\n%s", diff)
			}
			if tt.golden != "" {
				golden(t, tt.golden, mustYAML(t, mem))
			}
		})
	}
}

// TestBuildCacheAcrossTrees: a build recorded from disk answers the same
// tree in memory, and the other way round; a changed file misses.
func TestBuildCacheAcrossTrees(t *testing.T) {
	root := newRoot(t, podinfoTree)
	changed := map[string]string{}
	for k, v := range podinfoTree {
		changed[k] = v
	}
	changed["apps/base/podinfo/service.yaml"] += "# changed\n"
	other := newRoot(t, changed)
	tests := []struct {
		name        string
		first, then BuildOptions
		wantHits    int
	}{
		{name: "disk then memory", first: BuildOptions{Root: root}, then: BuildOptions{Tree: memoryTree(t, root)}, wantHits: 1},
		{name: "memory then disk", first: BuildOptions{Tree: memoryTree(t, root)}, then: BuildOptions{Root: root}, wantHits: 1},
		{name: "memory then a changed tree", first: BuildOptions{Tree: memoryTree(t, root)}, then: BuildOptions{Tree: memoryTree(t, other)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := NewBuildCache()
			ctx := WithBuildCache(context.Background(), cache)
			for _, opts := range []BuildOptions{tt.first, tt.then} {
				opts.Path, opts.NoRemoteBases = "apps/dev", true
				if _, err := Build(ctx, opts); err != nil {
					t.Fatal(err)
				}
			}
			if hits, _ := cache.Stats(); hits != tt.wantHits {
				t.Errorf("hits = %d, want %d", hits, tt.wantHits)
			}
		})
	}
}

// TestConfinedFSTreeAsDisk calls every read of the filesystem kustomize
// gets on the same tree on disk and in memory: same answers, same errors,
// once the roots are taken out.
func TestConfinedFSTreeAsDisk(t *testing.T) {
	root := newRoot(t, map[string]string{"a/b.yaml": cmYAML, "a/c/d.yml": cmYAML, "a/.hidden.yaml": cmYAML, "e.txt": "e"})
	disk, err := newConfinedFS(root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := newConfinedFS("", memoryTree(t, root), false)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(c *confinedFS, p string) string{
		"Exists":   func(c *confinedFS, p string) string { return fmt.Sprint(c.Exists(p)) },
		"IsDir":    func(c *confinedFS, p string) string { return fmt.Sprint(c.IsDir(p)) },
		"ReadFile": func(c *confinedFS, p string) string { b, err := c.ReadFile(p); return fmt.Sprint(len(b), err) },
		"ReadDir":  func(c *confinedFS, p string) string { names, err := c.ReadDir(p); return fmt.Sprint(names, err) },
		"Glob":     func(c *confinedFS, p string) string { m, err := c.Glob(p + "/*"); return fmt.Sprint(m, err) },
		"CleanedAbs": func(c *confinedFS, p string) string {
			d, f, err := c.CleanedAbs(p)
			return fmt.Sprint(d, " ", f, " ", err)
		},
		"Walk": func(c *confinedFS, p string) string {
			var seen []string
			err := c.Walk(p, func(path string, info os.FileInfo, err error) error {
				seen = append(seen, fmt.Sprint(path, info != nil && info.IsDir(), err))
				if info != nil && info.Name() == "c" {
					return filepath.SkipDir
				}
				return nil
			})
			return fmt.Sprint(seen, err)
		},
	}
	for _, p := range []string{".", "a", "a/b.yaml", "a/c", "a/c/d.yml", "e.txt", "e.txt/x", "nope", "a/nope/x", "../x"} {
		for name, call := range calls {
			t.Run(name+" "+p, func(t *testing.T) {
				got := strings.ReplaceAll(call(mem, filepath.Join(mem.root, p)), memoryRoot, "<root>")
				want := strings.ReplaceAll(call(disk, filepath.Join(disk.root, p)), disk.root, "<root>")
				if got != want {
					t.Errorf("memory %s\ndisk   %s", got, want)
				}
			})
		}
	}
}
