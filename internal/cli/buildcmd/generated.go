package buildcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// generated builds, on demand, the trees of ExternalArtifacts that an
// ArtifactGenerator of the local fleet repository produces, with the
// controller's copy code (internal/source/generate) in a temporary
// directory, bounded as the controller bounds an artifact. The generators
// and the local directories of their sources come from the offline fleet
// graph (internal/fleet), as `weir lint` sees them: this repository for
// the root's GitRepository and for one whose URL is a remote of it, a
// --local-sources entry for any other source (it wins over the graph).
type generated struct {
	// repo is the repository root; file the --kustomization-file and cwd
	// the working directory, repository-relative ("" when outside it),
	// which choose among clusters generating one name differently.
	repo, file, cwd string
	local           map[string]string
	bounds          generate.Options

	graph   *fleet.Graph
	loadErr error
	tmp     string
	trees   map[string]string
	// building guards against generators reading each other's artifacts
	// in a circle.
	building map[string]bool
}

// newGenerated returns the resolver for the repository holding file (the
// --kustomization-file), else the current directory.
func newGenerated(file string, local map[string]string) *generated {
	g := &generated{local: local, trees: map[string]string{}, building: map[string]bool{}}
	cwd, _ := os.Getwd()
	start := cwd
	if file != "" {
		start = filepath.Dir(file)
	}
	g.repo, _ = fleet.WorkTreeRoot(start)
	if g.repo == "" && file == "" {
		g.repo = cwd
	}
	g.file = g.rel(file)
	g.cwd = g.rel(cwd)
	return g
}

// rel is p relative to the repository, "" when p is empty or outside it.
func (g *generated) rel(p string) string {
	if p == "" || g.repo == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	r, err := filepath.Rel(g.repo, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(r)
}

// close removes the trees built.
func (g *generated) close() {
	if g.tmp != "" {
		_ = os.RemoveAll(g.tmp)
	}
}

// tree returns the directory holding the content of ExternalArtifact
// namespace/name, built from its ArtifactGenerator.
func (g *generated) tree(ctx context.Context, namespace, name string) (string, error) {
	key := fleet.KeyOf(sourceextensionsv1beta1.ExternalArtifactKind, namespace, name)
	if dir, ok := g.trees[key]; ok {
		return dir, nil
	}
	if g.building[key] {
		return "", fmt.Errorf("ExternalArtifact %s/%s is generated from itself", namespace, name)
	}
	g.building[key] = true
	defer delete(g.building, key)
	if g.repo == "" {
		return "", fmt.Errorf("ExternalArtifact %s/%s: no Git work tree holds %s to find its ArtifactGenerator in; give the artifact's content with --path",
			namespace, name, g.file)
	}
	c, gen, err := g.find(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	dir, err := g.build(ctx, c, gen, name)
	if err != nil {
		return "", fmt.Errorf("ExternalArtifact %s/%s of ArtifactGenerator %s (%s): %w",
			namespace, name, strings.TrimPrefix(fleet.Key(gen.gen.Object), sourceextensionsv1beta1.ArtifactGeneratorKind+"/"), where(gen.gen.Position), err)
	}
	g.trees[key] = dir
	return dir, nil
}

// candidate is a generator of the graph producing the wanted name.
type candidate struct {
	c   *fleet.Cluster
	gen *fleet.Generator
	ag  *sourceextensionsv1beta1.ArtifactGenerator
}

// find returns the generator of ExternalArtifact namespace/name: among the
// clusters generating it, the one the --kustomization-file belongs to,
// else the one holding the current directory; clusters generating it
// alike are one.
func (g *generated) find(ctx context.Context, namespace, name string) (*fleet.Cluster, *candidate, error) {
	if g.graph == nil && g.loadErr == nil {
		g.graph, g.loadErr = fleet.Load(ctx, fleet.Options{Dir: g.repo, Sources: fleetSources(g.local)})
	}
	if g.loadErr != nil {
		return nil, nil, fmt.Errorf("loading the fleet repository %s to find the ArtifactGenerator of ExternalArtifact %s/%s: %w",
			g.repo, namespace, name, g.loadErr)
	}
	var all []candidate
	for _, c := range g.graph.Clusters {
		for _, gen := range c.Generators {
			ag := &sourceextensionsv1beta1.ArtifactGenerator{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(gen.Object.Object, ag) != nil || ag.Namespace != namespace {
				continue
			}
			if produces(gen, ag, name) {
				all = append(all, candidate{c: c, gen: gen, ag: ag})
			}
		}
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("no ArtifactGenerator of the fleet repository %s generates ExternalArtifact %s/%s; give the artifact's content with --path",
			g.repo, namespace, name)
	}
	picked := narrow(all, func(cd candidate) bool {
		return g.file != "" && slices.ContainsFunc(cd.c.Nodes, func(n *fleet.Node) bool { return n.File == g.file })
	})
	picked = narrow(picked, func(cd candidate) bool {
		return g.cwd != "" && (g.cwd == cd.c.Entry || strings.HasPrefix(g.cwd, cd.c.Entry+"/"))
	})
	for _, cd := range picked[1:] {
		if !reflect.DeepEqual(cd.ag.Spec, picked[0].ag.Spec) {
			var entries []string
			for _, p := range picked {
				entries = append(entries, p.c.Entry)
			}
			return nil, nil, fmt.Errorf("ExternalArtifact %s/%s is generated differently in %s: name the cluster with a --kustomization-file of it, or run from its directory",
				namespace, name, strings.Join(entries, ", "))
		}
	}
	return picked[0].c, &picked[0], nil
}

// narrow keeps the candidates keep accepts, or all when it accepts none.
func narrow(all []candidate, keep func(candidate) bool) []candidate {
	var out []candidate
	for _, cd := range all {
		if keep(cd) {
			out = append(out, cd)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// produces reports whether the generator writes an ExternalArtifact of
// that name: one the graph built, or, when its sources are not all local,
// one its spec names outright.
func produces(gen *fleet.Generator, ag *sourceextensionsv1beta1.ArtifactGenerator, name string) bool {
	key := fleet.KeyOf(sourceextensionsv1beta1.ExternalArtifactKind, ag.Namespace, name)
	if slices.Contains(gen.Artifacts, key) {
		return true
	}
	return slices.ContainsFunc(ag.Spec.OutputArtifacts, func(a sourceextensionsv1beta1.OutputArtifact) bool { return a.Name == name })
}

// build runs the generator's copy operations for artifact name into a
// new directory.
func (g *generated) build(ctx context.Context, c *fleet.Cluster, cd *candidate, name string) (string, error) {
	sources, err := g.sources(ctx, c, cd.ag)
	if err != nil {
		return "", err
	}
	if err := generate.Validate(&cd.ag.Spec); err != nil {
		return "", err
	}
	arts, err := generate.Expand(&cd.ag.Spec, sources)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(arts, func(a generate.Artifact) bool { return a.Name == name })
	if i < 0 {
		return "", errors.New("its pathPattern matches no directory of that name in the local sources")
	}
	if g.tmp == "" {
		if g.tmp, err = os.MkdirTemp("", "weir-build-artifact-"); err != nil {
			g.tmp = ""
			return "", err
		}
	}
	dir := filepath.Join(g.tmp, fmt.Sprint(len(g.trees)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := generate.Build(ctx, arts[i].Spec.Copy, sources, dir, g.bounds); err != nil {
		return "", err
	}
	return dir, nil
}

// sources maps each alias of ag to the local directory of its source: a
// --local-sources entry, else the directory the fleet graph resolved, else
// for a generated ExternalArtifact its own tree.
func (g *generated) sources(ctx context.Context, c *fleet.Cluster, ag *sourceextensionsv1beta1.ArtifactGenerator) (generate.Sources, error) {
	out := generate.Sources{}
	for _, s := range ag.Spec.Sources {
		ns := s.Namespace
		if ns == "" {
			ns = ag.Namespace
		}
		key := s.Kind + "/" + ns + "/" + s.Name
		if dir, ok := g.local[key]; ok {
			out[s.Alias] = dir
			continue
		}
		if s.Kind == sourceextensionsv1beta1.ExternalArtifactKind {
			dir, err := g.tree(ctx, ns, s.Name)
			if err != nil {
				return nil, fmt.Errorf("source @%s: %w", s.Alias, err)
			}
			out[s.Alias] = dir
			continue
		}
		if src := c.Sources[key]; src != nil && src.Dir != "" && src.Object.GetKind() != sourceextensionsv1beta1.ExternalArtifactKind {
			out[s.Alias] = src.Dir
			continue
		}
		return nil, fmt.Errorf("source @%s (%s) is not this repository: give its local directory with --local-sources %s=PATH", s.Alias, key, key)
	}
	return out, nil
}

// fleetSources turns --local-sources (Kind/namespace/name) into the fleet
// loader's namespace/name keys.
func fleetSources(local map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range local {
		if _, rest, ok := strings.Cut(k, "/"); ok {
			out[rest] = v
		}
	}
	return out
}

// where writes a position as file:line.
func where(p fleet.Position) string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}
