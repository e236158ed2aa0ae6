package layering

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/weir-gitops/weir"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -json`, whose Deps field lists every package a
// package needs, directly or not.
func listPackages(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	args := append([]string{"list", "-json"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("go list: %v\n%s", err, exitErr.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	tests := []struct {
		name      string
		pattern   string
		forbidden []string
		// allowed, when set, is the complete list of prefixes a dependency
		// may have besides the standard library.
		allowed []string
		// inherited are forbidden prefixes tolerated as indirect
		// dependencies of a library weir must use, never imported by weir.
		inherited []string
	}{
		{
			name:    "api imports apimachinery and api only",
			pattern: "./api/...",
			allowed: []string{
				module + "/api/", "k8s.io/apimachinery/", "k8s.io/klog/", "k8s.io/utils/", "k8s.io/kube-openapi/",
				"sigs.k8s.io/", "github.com/", "gopkg.in/", "go.yaml.in/", "golang.org/x/",
			},
			forbidden: []string{
				"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/apiextensions-apiserver",
				"k8s.io/api/", module + "/internal/", module + "/config/",
			},
		},
		{
			name:      "nothing imports Flux's modules",
			pattern:   "./...",
			forbidden: []string{"github.com/fluxcd/"},
			// Helm v4's own kube client waits with Flux's fork of
			// kstatus (helm.sh/helm/v4/pkg/kube imports it): weir reaches
			// it only through Helm, and no weir package imports it.
			inherited: []string{"github.com/fluxcd/cli-utils/"},
		},
		{
			name:      "the binaries carry no test servers",
			pattern:   "./cmd/... ./examples/... ./internal/devenv/gitserve/...",
			forbidden: []string{module + "/internal/devenv/testenv"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range listPackages(t, strings.Fields(tt.pattern)...) {
				for _, imp := range p.Imports {
					if hasAnyPrefix(imp, tt.inherited) {
						t.Errorf("%s imports %s", p.ImportPath, imp)
					}
				}
				for _, dep := range p.Deps {
					if isStd(dep) || hasAnyPrefix(dep, tt.inherited) {
						continue
					}
					for _, f := range tt.forbidden {
						if strings.HasPrefix(dep, f) {
							t.Errorf("%s depends on %s", p.ImportPath, dep)
						}
					}
					if tt.allowed != nil && !hasAnyPrefix(dep, tt.allowed) {
						t.Errorf("%s depends on %s, outside the allowed set", p.ImportPath, dep)
					}
				}
			}
		})
	}
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestFloors holds every package of the module to its floor: no import runs
// upward, and no package is left without a floor.
func TestFloors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	for _, p := range listPackages(t, "./...") {
		rel, _ := relative(p.ImportPath)
		from, ok := floorOf(rel)
		if !ok {
			t.Errorf("%s has no floor: add it to floors in floors_test.go (and to docs/architecture.md)", rel)
			continue
		}
		for _, imp := range p.Imports {
			irel, ok := relative(imp)
			if !ok {
				continue
			}
			to, ok := floorOf(irel)
			if ok && to.level > from.level {
				t.Errorf("%s (%s) imports %s (%s), a floor above it", rel, from.name, irel, to.name)
			}
		}
	}
}

// TestFloorsCoverTheirPatterns keeps the table honest: each pattern names
// at least one package, so a package moved away leaves no stale rule.
func TestFloorsCoverTheirPatterns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	used := map[string]bool{}
	for _, p := range listPackages(t, "./...") {
		rel, _ := relative(p.ImportPath)
		for _, f := range floors {
			for _, pat := range f.patterns {
				if regexp.MustCompile(`^(` + pat + `)$`).MatchString(rel) {
					used[pat] = true
				}
			}
		}
	}
	for _, f := range floors {
		for _, pat := range f.patterns {
			if !used[pat] {
				t.Errorf("floor %q: pattern %s matches no package", f.name, pat)
			}
		}
	}
}
