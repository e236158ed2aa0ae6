package ociregistry

import (
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image is a small container image whose digest depends on content, so
// that images made from different strings differ.
func Image(content string) v1.Image {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(content), types.OCILayer)})
	if err != nil {
		panic(fmt.Sprintf("append layer: %v", err)) // static layers cannot fail
	}
	return img
}

// PushTags pushes one image (made from content) as repo:tag for every tag,
// uploading its blobs once and writing only a manifest per further tag, and
// returns the image's digest. Thousands of tags take seconds.
func (r *Registry) PushTags(t testing.TB, repo, content string, tags ...string) string {
	t.Helper()
	if len(tags) == 0 {
		t.Fatal("PushTags: no tags")
	}
	img := Image(content)
	digest := r.Push(t, repo, tags[0], img)
	for _, tag := range tags[1:] {
		ref, err := name.NewTag(r.Host()+"/"+repo+":"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Tag(ref, img, remote.WithAuth(r.auth)); err != nil {
			t.Fatalf("tag %s: %v", ref, err)
		}
	}
	return digest
}
