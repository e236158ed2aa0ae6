package kustomize

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const cmYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"

// escapeFixture lays out <tmp>/outside/secret.yaml beside <tmp>/root, with
// symlinks from inside the root to it.
func escapeFixture(t *testing.T, files map[string]string) (root string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"outside/secret.yaml":             "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\nstringData:\n  k: v\n",
		"outside/base/kustomization.yaml": "resources: [../secret.yaml]\n",
		"outside/password.env":            "PASSWORD=hunter2\n",
	})
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, files)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(base, "outside", "secret.yaml"), filepath.Join(root, "link-file.yaml")))
	must(os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "link-dir")))
	must(os.Symlink("../outside/password.env", filepath.Join(root, "link-env.env")))
	return root
}

func TestBuildRefusesEscapes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		path  string
		opts  func(*BuildOptions)
		want  string // must appear in the error
	}{
		{name: "spec.path with ..", path: "../outside", want: `"../outside"`},
		{name: "spec.path climbing through a subdirectory", path: "app/../../outside", want: `"app/../../outside"`},
		{name: "absolute spec.path", path: "/etc", want: `"/etc"`},
		{name: "spec.path through a symlinked directory", path: "link-dir/base", want: "link-dir"},
		{
			name:  "resource with ..",
			files: map[string]string{"app/kustomization.yaml": "resources: [../../outside/secret.yaml]\n"},
			path:  "app", want: "../outside/secret.yaml",
		},
		{
			name:  "base with ..",
			files: map[string]string{"app/kustomization.yaml": "resources: [../../outside/base]\n"},
			path:  "app", want: "../outside/base",
		},
		{
			name:  "absolute resource",
			files: map[string]string{"app/kustomization.yaml": "resources: [/etc/hostname]\n"},
			path:  "app", want: "etc/hostname",
		},
		{
			name:  "symlinked resource file",
			files: map[string]string{"app/kustomization.yaml": "resources: [../link-file.yaml]\n"},
			path:  "app", want: "link-file.yaml",
		},
		{
			name:  "resource through a symlinked directory",
			files: map[string]string{"app/kustomization.yaml": "resources: [../link-dir/base]\n"},
			path:  "app", want: "link-dir/base",
		},
		{
			name: "secretGenerator env file through a symlink",
			files: map[string]string{"app/kustomization.yaml": `secretGenerator:
- name: s
  envs: [../link-env.env]
`},
			path: "app", want: "link-env.env",
		},
		{
			name: "patch file outside",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: ../../outside/secret.yaml\n",
				"app/cm.yaml":            cmYAML,
			},
			path: "app", want: "../outside/secret.yaml",
		},
		{
			name:  "generated kustomization over a symlinked file",
			files: map[string]string{"gen/cm.yaml": cmYAML},
			path:  "gen",
			opts: func(o *BuildOptions) {
				if err := os.Symlink(filepath.Join(o.Root, "link-file.yaml"), filepath.Join(o.Root, "gen", "z.yaml")); err != nil {
					panic(err)
				}
			},
			want: "gen/z.yaml",
		},
		{
			name:  "spec component outside",
			files: map[string]string{"app/kustomization.yaml": "resources: []\n"},
			path:  "app",
			opts:  func(o *BuildOptions) { o.Components = []string{"../../outside/base"} },
			want:  "../outside/base",
		},
		{
			name:  "ignored missing component outside",
			files: map[string]string{"app/kustomization.yaml": "resources: []\n"},
			path:  "app",
			opts: func(o *BuildOptions) {
				o.Components = []string{"../../outside/nothing"}
				o.IgnoreMissingComponents = true
			},
			want: "../outside/nothing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := escapeFixture(t, tt.files)
			opts := BuildOptions{Root: root, Path: tt.path, NoRemoteBases: true}
			if tt.opts != nil {
				tt.opts(&opts)
			}
			res, err := Build(context.Background(), opts)
			if err == nil {
				t.Fatalf("build escaped the root: %v", ids(res.Objects))
			}
			if !errors.Is(err, ErrUnsafePath) {
				t.Errorf("error is not ErrUnsafePath: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
			if strings.Contains(err.Error(), filepath.Dir(root)) {
				t.Errorf("error leaks the temporary directory: %v", err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks file content: %v", err)
			}
		})
	}
}

func TestBuildFollowsSymlinksInsideRoot(t *testing.T) {
	root := newRoot(t, map[string]string{
		"shared/cm.yaml":         cmYAML,
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
	})
	if err := os.Symlink("../shared/cm.yaml", filepath.Join(root, "app", "cm.yaml")); err != nil {
		t.Fatal(err)
	}
	res := mustBuild(t, BuildOptions{Root: root, Path: "app"})
	if len(res.Objects) != 1 {
		t.Fatalf("got %v", ids(res.Objects))
	}
}

// countingListener accepts connections on the loopback interface and counts
// them; under NoRemoteBases the count must stay 0.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

func serveLoopback(t *testing.T) (*countingListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n")
	})}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Close() })
	return cl, "127.0.0.1:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func TestNoRemoteBasesMakesNoConnection(t *testing.T) {
	ln, addr := serveLoopback(t)
	base := "http://" + addr
	tests := []struct {
		name  string
		files map[string]string
		url   string
		opts  func(*BuildOptions)
	}{
		{name: "http resource", url: base + "/x.yaml",
			files: map[string]string{"app/kustomization.yaml": "resources: [" + base + "/x.yaml]\n"}},
		{name: "https resource", url: "https://" + addr + "/x.yaml",
			files: map[string]string{"app/kustomization.yaml": "resources: [https://" + addr + "/x.yaml]\n"}},
		{name: "git base on github", url: "github.com/example/repo//deploy?ref=v1.0.0",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- github.com/example/repo//deploy?ref=v1.0.0\n"}},
		{name: "git base over http", url: base + "/repo.git//deploy?ref=main",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- " + base + "/repo.git//deploy?ref=main\n"}},
		{name: "scp-style git base", url: "git@" + addr + ":org/repo//deploy",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- git@" + addr + ":org/repo//deploy\n"}},
		{name: "legacy bases field", url: "ssh://git@" + addr + "/org/repo",
			files: map[string]string{"app/kustomization.yaml": "bases:\n- ssh://git@" + addr + "/org/repo\n"}},
		{name: "component in a kustomization", url: base + "/repo//component",
			files: map[string]string{"app/kustomization.yaml": "components:\n- " + base + "/repo//component\n"}},
		{name: "spec component", url: base + "/c",
			files: map[string]string{"app/kustomization.yaml": "resources: []\n"},
			opts:  func(o *BuildOptions) { o.Components = []string{base + "/c"} }},
		{name: "remote base in a nested local base", url: base + "/deep.yaml",
			files: map[string]string{
				"app/kustomization.yaml":    "resources: [../base]\n",
				"base/kustomization.yaml":   "resources: [cm.yaml, ../shared]\n",
				"base/cm.yaml":              cmYAML,
				"shared/kustomization.yaml": "resources: [" + base + "/deep.yaml]\n",
			}},
		{name: "configMapGenerator file", url: base + "/config.properties",
			files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files: [app.properties=" + base + "/config.properties]\n"}},
		{name: "secretGenerator env", url: base + "/secret.env",
			files: map[string]string{"app/kustomization.yaml": "secretGenerator:\n- name: s\n  envs: [" + base + "/secret.env]\n"}},
		{name: "patch path", url: base + "/patch.yaml",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: " + base + "/patch.yaml\n", "app/cm.yaml": cmYAML}},
		{name: "openapi schema", url: base + "/schema.json",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\nopenapi:\n  path: " + base + "/schema.json\n", "app/cm.yaml": cmYAML}},
		{name: "crds", url: base + "/crd.yaml",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\ncrds: [" + base + "/crd.yaml]\n", "app/cm.yaml": cmYAML}},
		{name: "replacements path", url: base + "/repl.yaml",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\nreplacements:\n- path: " + base + "/repl.yaml\n", "app/cm.yaml": cmYAML}},
		{name: "generator config file", url: base + "/gen.yaml",
			files: map[string]string{"app/kustomization.yaml": "generators: [" + base + "/gen.yaml]\n"}},
		{name: "file named in a local generator config", url: base + "/data.txt",
			files: map[string]string{
				"app/kustomization.yaml": "generators: [gen.yaml]\n",
				"app/gen.yaml":           "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nfiles:\n- " + base + "/data.txt\n",
			}},
		{name: "file named in an inline transformer", url: base + "/patch.yaml",
			files: map[string]string{"app/kustomization.yaml": `resources: [cm.yaml]
transformers:
- |-
  apiVersion: builtin
  kind: PatchTransformer
  metadata:
    name: p
  path: ` + base + `/patch.yaml
`, "app/cm.yaml": cmYAML}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRoot(t, tt.files)
			opts := BuildOptions{Root: root, Path: "app", NoRemoteBases: true}
			if tt.opts != nil {
				tt.opts(&opts)
			}
			_, err := Build(context.Background(), opts)
			if err == nil {
				t.Fatal("build succeeded")
			}
			if !strings.Contains(err.Error(), tt.url) {
				t.Errorf("error %q does not name %s", err, tt.url)
			}
			if opts.Components == nil && !errors.Is(err, ErrRemoteDisallowed) {
				t.Errorf("error is not ErrRemoteDisallowed: %v", err)
			}
		})
	}
	if n := ln.accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback listener", n)
	}
}

// With remote bases allowed, the same listener is reached: the test above
// would notice a connection.
func TestRemoteResourceAllowedByDefault(t *testing.T) {
	ln, addr := serveLoopback(t)
	root := newRoot(t, map[string]string{"kustomization.yaml": "resources: [http://" + addr + "/x.yaml]\n"})
	res := mustBuild(t, BuildOptions{Root: root})
	if ln.accepted.Load() == 0 {
		t.Fatal("the listener saw no connection")
	}
	if len(res.Objects) != 1 || res.Objects[0].GetName() != "fetched" {
		t.Fatalf("got %v", ids(res.Objects))
	}
}

func TestFileURLBaseRefused(t *testing.T) {
	outside := t.TempDir()
	root := newRoot(t, map[string]string{"kustomization.yaml": "resources: [file://" + outside + "]\n"})
	_, err := Build(context.Background(), BuildOptions{Root: root})
	if !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("want ErrUnsafePath even with remote bases allowed, got %v", err)
	}
}

func TestHelmChartsRefused(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"helmCharts": {"kustomization.yaml": `helmCharts:
- name: podinfo
  repo: https://stefanprodan.github.io/podinfo
  version: 6.5.0
`},
		"legacy helmChartInflationGenerator": {"kustomization.yaml": `helmChartInflationGenerator:
- chartName: podinfo
  chartRepoUrl: https://stefanprodan.github.io/podinfo
`},
		"in a base": {
			"kustomization.yaml":      "resources: [base]\n",
			"base/kustomization.yaml": "helmCharts:\n- name: podinfo\n",
		},
		"as a generator": {
			"kustomization.yaml": "generators: [chart.yaml]\n",
			"chart.yaml":         "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: c\nname: podinfo\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Build(context.Background(), BuildOptions{Root: newRoot(t, files)})
			if !errors.Is(err, ErrHelmUnsupported) || !strings.Contains(err.Error(), "kustomization.yaml") {
				t.Fatalf("want ErrHelmUnsupported naming the file, got %v", err)
			}
		})
	}
}

func TestPluginsRefused(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"external generator": {
			"kustomization.yaml": "generators: [gen.yaml]\n",
			"gen.yaml":           "apiVersion: example.com/v1\nkind: SecretsFromVault\nmetadata:\n  name: v\n",
		},
		"exec KRM function": {
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"cm.yaml":            cmYAML,
			"fn.yaml": `apiVersion: example.com/v1
kind: Mutator
metadata:
  name: m
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: /bin/sh
`,
		},
		"container KRM function": {
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"cm.yaml":            cmYAML,
			"fn.yaml": `apiVersion: example.com/v1
kind: Mutator
metadata:
  name: m
  annotations:
    config.kubernetes.io/function: |
      container:
        image: example.com/fn:latest
`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Build(context.Background(), BuildOptions{Root: newRoot(t, files)})
			if !errors.Is(err, ErrPluginsDisabled) {
				t.Fatalf("want ErrPluginsDisabled, got %v", err)
			}
		})
	}
}
