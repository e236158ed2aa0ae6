package imagepolicy

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/image/scan"
)

// reflectDigest fills ref.Digest as digestReflectionPolicy says: Never
// leaves it empty, IfNotPresent keeps the digest already known for the same
// image and tag and fetches it otherwise, Always fetches it every time.
func (r *Reconciler) reflectDigest(ctx context.Context, obj *imagev1.ImagePolicy, repo *imagev1.ImageRepository,
	image name.Repository, ref *imagev1.ImageRef) error {
	fetch := false
	switch obj.GetDigestReflectionPolicy() {
	case imagev1.ReflectIfNotPresent:
		prev := obj.Status.LatestRef
		if prev != nil && prev.Name == ref.Name && prev.Tag == ref.Tag && prev.Digest != "" {
			ref.Digest = prev.Digest
		} else {
			fetch = true
		}
	case imagev1.ReflectAlways:
		fetch = true
	}
	if !fetch {
		return nil
	}
	creds, err := scan.Credentials(ctx, r.reader(), repo)
	if err != nil {
		return fmt.Errorf("failed fetching digest of %s: failed to configure authentication options: %w", ref.String(), err)
	}
	digest, err := scan.Digest(ctx, image, ref.Tag, scan.Options{Options: creds, Timeout: repo.GetTimeout()})
	if err != nil {
		return fmt.Errorf("failed fetching digest of %s: %w", ref.String(), err)
	}
	ref.Digest = digest
	return nil
}
