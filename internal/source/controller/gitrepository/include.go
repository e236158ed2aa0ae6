package gitrepository

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// includes returns the current artifacts of spec.include's repositories;
// each must exist in the same namespace and have an artifact in storage.
func (r *Reconciler) includes(ctx context.Context, obj *sourcev1.GitRepository) ([]meta.Artifact, error) {
	var out []meta.Artifact
	for _, inc := range obj.Spec.Include {
		var dep sourcev1.GitRepository
		key := client.ObjectKey{Namespace: obj.Namespace, Name: inc.GitRepositoryRef.Name}
		if err := r.Client.Get(ctx, key, &dep); err != nil {
			return nil, includeError("could not get resource for include '%s': %v", inc.GitRepositoryRef.Name, err)
		}
		if dep.Status.Artifact == nil || !r.Storage.Exists(*dep.Status.Artifact) {
			return nil, includeError("no artifact available for include '%s'", inc.GitRepositoryRef.Name)
		}
		out = append(out, *dep.Status.Artifact)
	}
	return out, nil
}

// copyIncludes extracts each included artifact's fromPath into toPath of the
// checkout in dir. Paths are confined to their roots.
func (r *Reconciler) copyIncludes(obj *sourcev1.GitRepository, includes []meta.Artifact, dir string) error {
	for i, inc := range obj.Spec.Include {
		scratch, err := os.MkdirTemp("", "include-")
		if err != nil {
			return &errs.Generic{Err: err, Reason: sourcev1.DirCreationFailedReason}
		}
		err = r.extractInclude(includes[i], inc, scratch, dir)
		removeAll(scratch)
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) extractInclude(a meta.Artifact, inc sourcev1.GitRepositoryInclude, scratch, dir string) error {
	f, err := r.Storage.Open(a)
	if err != nil {
		return includeError("failed to open artifact of include '%s': %v", inc.GitRepositoryRef.Name, err)
	}
	defer f.Close()
	if err := artifact.Untar(f, scratch, 0); err != nil {
		return includeError("failed to extract artifact of include '%s': %v", inc.GitRepositoryRef.Name, err)
	}
	from, err := confined(scratch, inc.GetFromPath())
	if err != nil {
		return &errs.Stalling{Err: fmt.Errorf("include '%s': fromPath: %w", inc.GitRepositoryRef.Name, err), Reason: sourcev1.InvalidPathReason}
	}
	toPath := inc.ToPath
	if toPath == "" {
		toPath = inc.GitRepositoryRef.Name
	}
	to, err := confined(dir, toPath)
	if err != nil {
		return &errs.Stalling{Err: fmt.Errorf("include '%s': toPath: %w", inc.GitRepositoryRef.Name, err), Reason: sourcev1.InvalidPathReason}
	}
	if err := os.RemoveAll(to); err != nil {
		return includeError("failed to clear '%s': %v", toPath, err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return includeError("failed to create '%s': %v", toPath, err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		return includeError("failed to copy include '%s': %v", inc.GitRepositoryRef.Name, err)
	}
	return nil
}

// confined joins rel to root and refuses anything that would leave root.
// A leading slash means the root, as in Flux.
func confined(root, rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(strings.TrimLeft(rel, "/")))
	if clean == "." {
		return root, nil
	}
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%q escapes the repository root", rel)
	}
	return filepath.Join(root, clean), nil
}

func includeError(format string, args ...any) error {
	return &errs.Generic{Err: fmt.Errorf(format, args...), Reason: sourcev1.IncludeUnavailableCondition}
}
