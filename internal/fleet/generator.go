package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// extensionsGroup is the API group of ArtifactGenerator.
const extensionsGroup = "source.extensions.fluxcd.io"

// Generator is an ArtifactGenerator of the graph and what running its
// copy rules on the local trees of its sources gave.
type Generator struct {
	Object *unstructured.Unstructured
	Position
	// Artifacts are the Keys of the ExternalArtifacts it generates, in
	// the order generate.Expand returns them.
	Artifacts []string
	// Unresolved are the Keys of its sources the graph has no local tree
	// for; nothing is generated then.
	Unresolved []string
	// Err is why its spec is invalid (decoding, generate.Validate or
	// generate.Expand); nothing is generated then.
	Err error
	// Failed are the artifacts whose copy operations failed, by Key: a
	// copy matching nothing in its source, an unsafe source, a bound of
	// Options.Generate. The generator fails the same way in the cluster.
	Failed map[string]error
	// Overwrites are, by Key of the artifacts that have any, the files
	// a later copy operation replaced after an earlier one wrote them.
	Overwrites map[string][]generate.Overwrite
}

// addGenerator records an ArtifactGenerator the graph yields and, when
// every source it reads is local, builds each ExternalArtifact it
// generates into a directory of the loader's, once per graph, adding it
// as a local source.
func (cl *clusterLoad) addGenerator(ctx context.Context, o *unstructured.Unstructured, pos Position) {
	g := &Generator{Object: o, Position: pos}
	cl.c.Generators = append(cl.c.Generators, g)
	ag := &sourceextensionsv1beta1.ArtifactGenerator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, ag); err != nil {
		g.Err = fmt.Errorf("decoding %s: %w", Key(o), err)
		return
	}
	if err := generate.Validate(&ag.Spec); err != nil {
		g.Err = err
		return
	}
	sources := generate.Sources{}
	for _, s := range ag.Spec.Sources {
		key := sourceKey(s.Kind, o.GetNamespace(), s.Namespace, s.Name)
		dir := cl.sourceDir(key)
		if dir == "" {
			g.Unresolved = append(g.Unresolved, key)
			continue
		}
		sources[s.Alias] = dir
	}
	if len(g.Unresolved) > 0 {
		return
	}
	artifacts, err := generate.Expand(&ag.Spec, sources)
	if err != nil {
		g.Err = err
		return
	}
	for _, a := range artifacts {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(sourceGroup + "/v1")
		u.SetKind(sourceextensionsv1beta1.ExternalArtifactKind)
		u.SetNamespace(o.GetNamespace())
		u.SetName(a.Name)
		key := Key(u)
		g.Artifacts = append(g.Artifacts, key)
		dir, overwrites, err := cl.generated(ctx, key, a, sources)
		if len(overwrites) > 0 {
			if g.Overwrites == nil {
				g.Overwrites = map[string][]generate.Overwrite{}
			}
			g.Overwrites[key] = overwrites
		}
		if err != nil {
			if g.Failed == nil {
				g.Failed = map[string]error{}
			}
			g.Failed[key] = err
			continue
		}
		if prev := cl.c.Sources[key]; prev == nil || prev.Implicit {
			cl.c.Sources[key] = &Source{Object: u, Position: pos, Dir: dir}
		}
	}
}

// generated builds the tree of artifact a (an ExternalArtifact's Key)
// the first time the cluster asks for it (two clusters may generate
// different artifacts of one name), in a directory of the loader's
// removed when Load returns. It returns the files copy operations
// overwrote, too.
func (cl *clusterLoad) generated(ctx context.Context, key string, a generate.Artifact, sources generate.Sources) (string, []generate.Overwrite, error) {
	id := cl.c.Entry + "\x00" + key
	if t, ok := cl.trees[id]; ok {
		return t.dir, t.overwrites, t.err
	}
	t := tree{}
	defer func() { cl.trees[id] = t }()
	if cl.tmp == "" {
		if cl.tmp, t.err = os.MkdirTemp("", "weir-generated-"); t.err != nil {
			cl.tmp = ""
			return "", nil, t.err
		}
	}
	t.dir = filepath.Join(cl.tmp, fmt.Sprint(len(cl.trees)))
	if t.err = os.Mkdir(t.dir, 0o755); t.err != nil {
		return "", nil, t.err
	}
	stats, err := generate.Build(ctx, a.Spec.Copy, sources, t.dir, cl.opts.Generate)
	t.overwrites = stats.Overwrites
	if t.err = err; err != nil {
		return "", t.overwrites, t.err
	}
	cl.labels[t.dir] = key
	return t.dir, t.overwrites, nil
}

// tree is a generated artifact's directory, or why it could not be built,
// and the files its copy operations overwrote.
type tree struct {
	dir        string
	overwrites []generate.Overwrite
	err        error
}

// removeGenerated removes the trees the loader generated.
func (l *loader) removeGenerated() {
	if l.tmp != "" {
		_ = os.RemoveAll(l.tmp)
	}
}
