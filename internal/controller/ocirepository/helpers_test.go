package ocirepository

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/oci"
)

// tarEntry is one entry of a test layer; link makes it a symbolic link.
type tarEntry struct {
	name, body, link string
}

// tarGz writes entries in order, unchecked: tests build hostile layers
// with it.
func tarGz(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.body))}
		if e.link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.link == "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testLayer is a blob with a media type.
type testLayer struct {
	mediaType string
	data      []byte
}

// pushImage writes an OCI manifest with layers and annotations as
// host/org/app:tag and returns its digest.
func pushImage(t testing.TB, host, tag string, annotations map[string]string, layers ...testLayer) string {
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
	return push(t, host, "org/app", tag, img)
}

func push(t testing.TB, host, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.NewTag(host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// cosignKey signs the way `cosign sign --key` does, with ECDSA P-256.
type cosignKey struct{ key *ecdsa.PrivateKey }

func newCosignKey(t testing.TB) *cosignKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &cosignKey{key: key}
}

// publicPEM is the key as cosign.pub holds it.
func (k *cosignKey) publicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// sign pushes the signature image of digest to host/repo:sha256-<hex>.sig:
// one layer holding cosign's simple signing payload, annotated with the
// base64 ASN.1 ECDSA signature of the payload's SHA-256.
func (k *cosignKey) sign(t testing.TB, host, repo, digest string) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": host + "/" + repo},
			"image":    map[string]string{"docker-manifest-digest": digest},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:       static.NewLayer(payload, oci.CosignSignatureMediaType),
		Annotations: map[string]string{oci.CosignSignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	push(t, host, repo, oci.SignatureTag(digest), img)
}

// dockerConfigJSON is a .dockerconfigjson document for one registry.
func dockerConfigJSON(host, user, pass string) []byte {
	return []byte(fmt.Sprintf(`{"auths":{%q:{"username":%q,"password":%q}}}`, host, user, pass))
}
