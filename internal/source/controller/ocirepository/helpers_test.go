package ocirepository

import (
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// testLayer is a blob with a media type.
type testLayer struct {
	mediaType string
	data      []byte
}

// pushImage writes an OCI manifest with layers and annotations as
// org/app:tag in reg and returns its digest.
func pushImage(t testing.TB, reg *ociregistry.Registry, tag string, annotations map[string]string, layers ...testLayer) string {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, sourcev1.OCIArtifactConfigMediaType)
	for _, l := range layers {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(l.data, types.MediaType(l.mediaType))})
		if err != nil {
			t.Fatal(err)
		}
	}
	if annotations != nil {
		img = mutate.Annotations(img, annotations).(v1.Image)
	}
	return reg.Push(t, "org/app", tag, img)
}

// dockerConfigJSON is a .dockerconfigjson document for one registry.
func dockerConfigJSON(host, user, pass string) []byte {
	return []byte(fmt.Sprintf(`{"auths":{%q:{"username":%q,"password":%q}}}`, host, user, pass))
}
