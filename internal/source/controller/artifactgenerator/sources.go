package artifactgenerator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// observedSource is what a source's status says of its artifact.
type observedSource struct {
	kind, namespace, name string
	url, digest, revision string
	// originRevision is the artifact's org.opencontainers.image.revision
	// metadata, when it has one.
	originRevision string
}

// sourceObject is a source kind's object: every one has an artifact.
type sourceObject interface {
	client.Object
	GetArtifact() *meta.Artifact
}

// newSource returns an empty object of a kind spec.sources allows.
func newSource(kind string) (sourceObject, error) {
	switch kind {
	case sourcev1.GitRepositoryKind:
		return &sourcev1.GitRepository{}, nil
	case sourcev1.OCIRepositoryKind:
		return &sourcev1.OCIRepository{}, nil
	case sourcev1.BucketKind:
		return &sourcev1.Bucket{}, nil
	case sourcev1.HelmChartKind:
		return &sourcev1.HelmChart{}, nil
	case sourcev1.ExternalArtifactKind:
		return &sourcev1.ExternalArtifact{}, nil
	}
	return nil, fmt.Errorf("source kind '%s' not supported", kind)
}

// observe reads every source and the artifact its status advertises. A
// source missing or without an artifact is waited for, as source-watcher
// does, --requeue-dependency later (or at once when it gets one: the
// sources are watched).
func (r *Reconciler) observe(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome) error {
	out.sources = make(map[string]observedSource, len(obj.Spec.Sources))
	for _, s := range obj.Spec.Sources {
		o, err := r.observeSource(ctx, obj, s)
		if err != nil {
			return &errs.Waiting{
				Err:          fmt.Errorf("get sources failed: %w", err),
				Reason:       sourceextensionsv1beta1.SourceFetchFailedReason,
				RequeueAfter: r.RequeueDependency,
			}
		}
		out.sources[s.Alias] = o
	}
	out.digest = sourcesDigest(out.sources)
	return nil
}

func (r *Reconciler) observeSource(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, s sourceextensionsv1beta1.SourceReference) (observedSource, error) {
	key := client.ObjectKey{Namespace: obj.Namespace, Name: s.Name}
	if s.Namespace != "" {
		key.Namespace = s.Namespace
	}
	src, err := newSource(s.Kind)
	if err != nil {
		return observedSource{}, err
	}
	if err := r.Client.Get(ctx, key, src); err != nil {
		return observedSource{}, fmt.Errorf("unable to get source '%s/%s': %w", s.Kind, key, err)
	}
	a := src.GetArtifact()
	if a == nil {
		return observedSource{}, fmt.Errorf("source '%s/%s' is not ready", s.Kind, key)
	}
	return observedSource{
		kind: s.Kind, namespace: key.Namespace, name: key.Name,
		url: a.URL, digest: a.Digest, revision: a.Revision,
		originRevision: a.Metadata[sourceextensionsv1beta1.OriginRevisionAnnotation],
	}, nil
}

// sourcesDigest is status.observedSourcesDigest: a sha256 over each
// alias's artifact digest, revision and URL, in alias order, as
// source-watcher computes it, so a status written by either reads the same.
func sourcesDigest(sources map[string]observedSource) string {
	parts := make([]string, 0, len(sources))
	for alias, s := range sources {
		parts = append(parts, fmt.Sprintf("%s=[digest=%s,revision=%s,url=%s]", alias, s.digest, s.revision, s.url))
	}
	sort.Strings(parts)
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(strings.Join(parts, "|"))))
}

// fetchSources downloads and unpacks each source's artifact into
// work/<alias>; the fetcher verifies the digest before unpacking and
// bounds the sizes.
func (r *Reconciler) fetchSources(ctx context.Context, sources map[string]observedSource, work string) (generate.Sources, error) {
	dirs := make(generate.Sources, len(sources))
	for alias, s := range sources {
		dir := filepath.Join(work, "sources", alias)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("failed to create source dir: %w", err)
		}
		if err := r.Fetcher.Fetch(ctx, s.url, s.digest, dir); err != nil {
			return nil, fmt.Errorf("source '%s/%s/%s': %w", s.kind, s.namespace, s.name, err)
		}
		dirs[alias] = dir
	}
	return dirs, nil
}
