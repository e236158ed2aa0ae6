package buildcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
)

// Built is one Kustomization of a build and the objects it renders.
type Built struct {
	Kustomization *kustomizev1.Kustomization
	Objects       []*unstructured.Unstructured
}

// maxDepth bounds --recursive, which a Kustomization that holds itself
// would otherwise never end.
const maxDepth = 32

// RenderTree is Render, then with opts.Recursive the Kustomizations the
// objects hold, depth first, each with its own spec and from the local
// copy of its source: the root of the directory built for the same source,
// opts.LocalSources for another (flux's --local-sources), which a
// Kustomization of a source it does not name fails the build for.
func RenderTree(ctx context.Context, deps *clideps.Deps, name string, opts Options) ([]Built, error) {
	if opts.DryRun && opts.KustomizationFile == "" {
		return nil, errors.New("--dry-run needs --kustomization-file: the Kustomization cannot be read from the cluster")
	}
	local, err := localSources(opts.LocalSources)
	if err != nil {
		return nil, err
	}
	var reader client.Reader
	if !opts.DryRun {
		if reader, err = deps.Client(); err != nil {
			return nil, err
		}
	}
	gen := newGenerated(opts.KustomizationFile, local)
	defer gen.close()
	objects, obj, root, err := renderRoot(ctx, reader, deps.Namespace(), name, opts, gen)
	if err != nil {
		return nil, err
	}
	out := []Built{{Kustomization: obj, Objects: objects}}
	if !opts.Recursive {
		return out, nil
	}
	t := &tree{opts: opts, reader: reader, gen: gen, roots: map[string]string{sourceKey(obj): root}}
	for k, v := range local {
		t.roots[k] = v
	}
	seen := map[string]bool{obj.Namespace + "/" + obj.Name: true}
	return t.children(ctx, out, objects, obj.Namespace, seen, 1)
}

// localSources checks --local-sources and makes its paths absolute.
func localSources(in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		if strings.Count(k, "/") != 2 {
			return nil, fmt.Errorf("--local-sources %s: want Kind/namespace/name=path", k)
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			return nil, err
		}
		out[k] = abs
	}
	return out, nil
}

type tree struct {
	opts   Options
	reader client.Reader
	// roots map Kind/namespace/name of a source to its local root.
	roots map[string]string
	// gen builds the ExternalArtifacts of the local repository's
	// ArtifactGenerators that roots has no directory for.
	gen *generated
}

// children appends to out the Kustomizations among objects and what they
// render, recursively.
// A Kustomization without a namespace is the parent's, where the
// controller applies it.
func (t *tree) children(ctx context.Context, out []Built, objects []*unstructured.Unstructured, ns string,
	seen map[string]bool, depth int) ([]Built, error) {
	for _, u := range objects {
		if u.GetKind() != kustomizev1.KustomizationKind || !strings.HasPrefix(u.GetAPIVersion(), kustomizev1.GroupVersion.Group+"/") {
			continue
		}
		child := &kustomizev1.Kustomization{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, child); err != nil {
			return nil, fmt.Errorf("reading Kustomization %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		if child.Namespace == "" {
			child.Namespace = ns
		}
		id := child.Namespace + "/" + child.Name
		if seen[id] || depth > maxDepth {
			return nil, fmt.Errorf("--recursive: Kustomization %s is built twice (a cycle) or nests more than %d deep", id, maxDepth)
		}
		seen[id] = true
		key := sourceKey(child)
		root, ok := t.roots[key]
		if !ok && child.Spec.SourceRef.Kind == sourceextensionsv1beta1.ExternalArtifactKind {
			var err error
			if root, err = t.gen.tree(ctx, cmp.Or(child.Spec.SourceRef.Namespace, child.Namespace), child.Spec.SourceRef.Name); err != nil {
				return nil, fmt.Errorf("Kustomization %s: %w", id, err) //nolint:staticcheck // the kind leads
			}
			t.roots[key], ok = root, true
		}
		if !ok {
			return nil, fmt.Errorf("Kustomization %s builds from %s: give its local directory with --local-sources %s=PATH", //nolint:staticcheck // the kind leads
				id, key, key)
		}
		rel := cleanPath(child.Spec.Path)
		objs, err := renderAt(ctx, t.reader, child, root, rel, t.opts)
		if err != nil {
			return nil, fmt.Errorf("building Kustomization %s from %s: %w", id, filepath.Join(root, rel), err)
		}
		out = append(out, Built{Kustomization: child, Objects: objs})
		if out, err = t.children(ctx, out, objs, child.Namespace, seen, depth+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sourceKey is Kind/namespace/name of k's source, the namespace defaulting
// to k's own.
func sourceKey(k *kustomizev1.Kustomization) string {
	ns := k.Spec.SourceRef.Namespace
	if ns == "" {
		ns = k.Namespace
	}
	return k.Spec.SourceRef.Kind + "/" + ns + "/" + k.Spec.SourceRef.Name
}
