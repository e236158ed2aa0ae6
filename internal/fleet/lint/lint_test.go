package lint_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/devenv/testenv/fleetgen"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/fleet/lint"
)

// lintDir loads a fixture repository and lints it.
func lintDir(t *testing.T, dir string, fo fleet.Options, lo lint.Options) []lint.Finding {
	t.Helper()
	fo.Dir, fo.NoRemoteBases = dir, true
	g, err := fleet.Load(context.Background(), fo)
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return lint.Run(g, lo)
}

func rules(findings []lint.Finding) []string {
	var out []string
	for _, f := range findings {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

func text(t *testing.T, findings []lint.Finding) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := lint.Write(&b, "text", findings); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRuleFixtures runs every rule on a repository that triggers it and on
// a near miss that does not: the trigger yields that rule and no other,
// the near miss yields nothing. The text output is kept as a golden file.
func TestRuleFixtures(t *testing.T) {
	flags := map[string]lint.Options{
		"remote-base":         {NoRemoteBases: true},
		"cross-namespace-ref": {NoCrossNamespaceRefs: true},
	}
	for _, r := range lint.Rules() {
		for _, c := range []string{"trigger", "near-miss"} {
			t.Run(r.ID+"/"+c, func(t *testing.T) {
				findings := lintDir(t, filepath.Join("testdata/fixtures", r.ID, c), fleet.Options{}, flags[r.ID])
				want := []string{r.ID}
				if c == "near-miss" {
					want = nil
				}
				if got := rules(findings); !slices.Equal(got, want) {
					t.Errorf("rules = %v, want %v\n%s", got, want, text(t, findings))
				}
				golden.Assert(t, filepath.Join("testdata/golden", r.ID+"-"+c+".txt"), text(t, findings))
			})
		}
	}
}

// TestSeed003 is the incident of seed 003: before the fix, every
// substituting Kustomization races the root that applies cluster-vars and
// prod has no sync of its own; with the dependsOn edge alone, prod's
// platform waits forever on a root that does not exist; with both, clean.
func TestSeed003(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rules []string
	}{
		{"before", []string{"missing-entry-point", "substitution-race"}},
		{"edge-only", []string{"dangling-dependency", "missing-entry-point"}},
		{"after", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			findings := lintDir(t, filepath.Join("testdata/fixtures/seed-003", tt.name), fleet.Options{}, lint.Options{})
			if got := rules(findings); !slices.Equal(got, tt.rules) {
				t.Errorf("rules = %v, want %v\n%s", got, tt.rules, text(t, findings))
			}
			golden.Assert(t, filepath.Join("testdata/golden", "seed-003-"+tt.name+".txt"), text(t, findings))
		})
	}
}

// TestSeed003DecryptKey decrypts the fixture's SOPS Secret with the test
// key: the build reads it, and the lint stays clean.
func TestSeed003DecryptKey(t *testing.T) {
	key := mustRead(t, "testdata/keys/test.agekey")
	fo := fleet.Options{Dir: "testdata/fixtures/seed-003/after", DecryptKeys: map[string][]byte{"test.agekey": key}}
	g, err := fleet.Load(context.Background(), fo)
	if err != nil {
		t.Fatal(err)
	}
	if f := lint.Run(g, lint.Options{}); len(f) != 0 {
		t.Errorf("findings with the key:\n%s", text(t, f))
	}
	wave := g.Clusters[0].Node("Kustomization", "flux-system", "apps-wave-0")
	for _, o := range wave.Objects {
		if o.GetKind() == "Secret" {
			if _, encrypted := o.Object["sops"]; encrypted {
				t.Error("the Secret is still encrypted with the key given")
			}
			return
		}
	}
	t.Error("no Secret in apps-wave-0")
}

// TestExamples lints weir's own example fleet as weir dev serves it. It is
// clean once the one object weir dev creates outside Git, the
// HelmRepository flux-system/charts, is named; without it the HelmRelease's
// source is missing, and that is all.
func TestExamples(t *testing.T) {
	load := func(assume ...string) []lint.Finding {
		g, err := fleet.Load(context.Background(), fleet.Options{FS: examples.Fleet(), NoRemoteBases: true, Assume: assume,
			DecryptKeys: map[string][]byte{"demo.agekey": examples.DemoAgeKey()}})
		if err != nil {
			t.Fatal(err)
		}
		return lint.Run(g, lint.Options{NoRemoteBases: true, NoCrossNamespaceRefs: false})
	}
	if f := load("HelmRepository/flux-system/charts"); len(f) != 0 {
		t.Errorf("the example fleet is not clean:\n%s", text(t, f))
	}
	f := load()
	if len(f) != 1 || f[0].Rule != "missing-source" || f[0].Object != "HelmRelease/apps/hello" {
		t.Errorf("without --assume, want only the HelmRelease's missing source:\n%s", text(t, f))
	}
	golden.Assert(t, "testdata/golden/examples.txt", text(t, f))
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGenerated200 lints a generated repository of 200 Kustomizations: all
// built, clean.
func TestGenerated200(t *testing.T) {
	dir := t.TempDir()
	repo, err := fleetgen.Write(dir, 200, 1000)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, NoRemoteBases: true})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Clusters[0]
	if len(g.Clusters) != 1 || len(c.Kustomizations()) != 201 {
		t.Fatalf("%d clusters, %d Kustomizations, want 1 and 201", len(g.Clusters), len(c.Kustomizations()))
	}
	objects := 0
	for _, n := range c.Kustomizations() {
		if !n.Built || n.Err != nil {
			t.Errorf("%s: built %v, err %v", n.ID(), n.Built, n.Err)
		}
		if n != c.Root {
			objects += len(n.Objects)
		}
	}
	if objects != repo.Objects+1 { // the infrastructure Namespace
		t.Errorf("%d objects built, want %d", objects, repo.Objects+1)
	}
	golden.Assert(t, "testdata/golden/generated-200.txt", text(t, lint.Run(g, lint.Options{})))
}

// TestEntryHoldingItsChildren: clusters/staging holds the cluster's
// Kustomizations and the directories they sync, and no root sync. The
// root assumed for it applies the Kustomizations and none of their
// objects: clean. A root sync the repository holds is built as Flux
// builds it, its generated kustomization listing every YAML file below
// clusters/staging, so each object is then applied twice.
func TestEntryHoldingItsChildren(t *testing.T) {
	const fixture = "testdata/fixtures/entry-holding-children"
	findings := lintDir(t, fixture, fleet.Options{}, lint.Options{})
	if len(findings) != 0 {
		t.Errorf("findings:\n%s", text(t, findings))
	}
	golden.Assert(t, "testdata/golden/entry-holding-children.txt", text(t, findings))

	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	sync := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/staging
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`
	if err := os.MkdirAll(filepath.Join(dir, "clusters/staging/flux-system"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clusters/staging/flux-system/gotk-sync.yaml"), []byte(sync), 0o644); err != nil {
		t.Fatal(err)
	}
	findings = lintDir(t, dir, fleet.Options{Paths: []string{"clusters/staging"}}, lint.Options{})
	if got := rules(findings); !slices.Equal(got, []string{"duplicate-object"}) || len(findings) != 2 {
		t.Errorf("with a root sync: rules %v, want the Namespace and the Service applied twice\n%s", got, text(t, findings))
	}
	golden.Assert(t, "testdata/golden/entry-holding-children-root-sync.txt", text(t, findings))
}

// TestMissingExternalArtifact: a sourceRef to an ExternalArtifact no
// generator of the graph produces is missing-source, while the one the
// generator does produce is built.
func TestMissingExternalArtifact(t *testing.T) {
	const fixture = "testdata/fixtures/missing-external-artifact"
	findings := lintDir(t, fixture, fleet.Options{}, lint.Options{})
	if got := rules(findings); !slices.Equal(got, []string{"missing-source"}) {
		t.Errorf("rules = %v, want [missing-source]\n%s", got, text(t, findings))
	}
	golden.Assert(t, "testdata/golden/missing-external-artifact.txt", text(t, findings))
}
