package artifactgenerator

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// store builds one artifact into the run's scratch directory and stores
// its tarball as externalartifact/<namespace>/<name>/<digest>.tar.gz. The
// tarball depends only on the files (artifact.WriteArchive), so an
// artifact whose files did not change is found already stored and kept
// as it is: same file, same digest, same revision.
func (r *Reconciler) store(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, a generate.Artifact, out *outcome) (*meta.Artifact, error) {
	staging := filepath.Join(out.work, "artifacts", a.Name)
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create staging dir: %w", err)
	}
	if _, err := generate.Build(ctx, a.Spec.Copy, out.dirs, staging, r.Build); err != nil {
		return nil, err
	}
	digest, err := r.tarballDigest(ctx, staging)
	if err != nil {
		return nil, err
	}
	_, hex, _ := strings.Cut(digest, ":")
	eaMeta := metav1.ObjectMeta{Namespace: obj.Namespace, Name: a.Name}
	stored := r.Storage.NewArtifactFor(sourcev1.ExternalArtifactKind, &eaMeta, "", hex+".tar.gz")

	unlock, err := r.Storage.Lock(ctx, sourcev1.ExternalArtifactKind, obj.Namespace, a.Name)
	if err != nil {
		return nil, fmt.Errorf("failed to acquire artifact lock: %w", err)
	}
	defer unlock()
	if !r.reuse(&stored, digest) {
		if _, err := r.Storage.Archive(ctx, &stored, staging, nil); err != nil {
			return nil, fmt.Errorf("failed to create artifact: %w", err)
		}
	}
	stored.Revision = "latest@" + stored.Digest
	setRevisions(&stored, a.Spec, out.sources)
	return &stored, nil
}

// tarballDigest is the digest the tarball of dir will have in storage.
func (r *Reconciler) tarballDigest(ctx context.Context, dir string) (string, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := artifact.WriteArchive(ctx, pw, dir, artifact.ArchiveOptions{})
		pw.CloseWithError(err)
	}()
	d, err := artifact.Digest(r.Storage.Algorithm(), pr)
	_ = pr.Close()
	if err != nil {
		return "", fmt.Errorf("failed to archive artifact: %w", err)
	}
	return d, nil
}

// reuse fills a from the file already stored at its path when that file
// has the digest: the content did not change.
func (r *Reconciler) reuse(a *meta.Artifact, digest string) bool {
	if !r.Storage.Exists(*a) {
		return false
	}
	a.Digest = digest
	if err := r.Storage.Verify(*a); err != nil {
		a.Digest = ""
		return false
	}
	p, err := r.Storage.LocalPath(*a)
	if err != nil {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	size := fi.Size()
	a.Size, a.LastUpdateTime = &size, metav1.NewTime(fi.ModTime())
	return true
}

// setRevisions applies spec.artifacts[].revision and originRevision: the
// revision of the aliased source instead of latest@<digest>, and the
// origin revision (the source's own origin revision metadata, or its
// revision) as the artifact's org.opencontainers.image.revision.
func setRevisions(a *meta.Artifact, spec sourceextensionsv1beta1.OutputArtifact, sources map[string]observedSource) {
	if s, ok := sources[strings.TrimPrefix(spec.Revision, "@")]; ok && spec.Revision != "" {
		a.Revision = s.revision
	}
	if s, ok := sources[strings.TrimPrefix(spec.OriginRevision, "@")]; ok && spec.OriginRevision != "" {
		origin := s.originRevision
		if origin == "" {
			origin = s.revision
		}
		a.Metadata = map[string]string{sourceextensionsv1beta1.OriginRevisionAnnotation: origin}
	}
}

// collectFiles removes old tarballs of the generated artifacts under the
// retention rules (--artifact-retention-*); the current one stays.
func (r *Reconciler) collectFiles(ctx context.Context, inventory []sourceextensionsv1beta1.ExternalArtifactReference) {
	for _, ref := range inventory {
		unlock, err := r.Storage.Lock(ctx, sourcev1.ExternalArtifactKind, ref.Namespace, ref.Name)
		if err != nil {
			return
		}
		current := meta.Artifact{Path: artifact.ObjectDir(sourcev1.ExternalArtifactKind, ref.Namespace, ref.Name) + "/" + ref.Filename}
		if _, err := r.Storage.GarbageCollect(ctx, current, r.RetentionRecords, r.RetentionTTL); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed", "artifact", ref.Namespace+"/"+ref.Name)
		}
		unlock()
	}
}
