package oci

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
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func layerDescriptors(mediaTypes ...string) []v1.Descriptor {
	var out []v1.Descriptor
	for i, mt := range mediaTypes {
		h := sha256.Sum256([]byte{byte(i)})
		out = append(out, v1.Descriptor{MediaType: types.MediaType(mt), Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h[:])}})
	}
	return out
}

// entry is one tar entry of a test layer.
type entry struct {
	name, body, link string
	typ              byte
}

// tarGz writes entries as a gzipped tarball, in order, unchecked: tests
// use it to build hostile layers.
func tarGz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
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

// layer is a blob with a media type, for image.
type layer struct {
	mediaType string
	data      []byte
}

// image builds an OCI manifest with the given layers and annotations.
func image(t testing.TB, annotations map[string]string, layers ...layer) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.flux.config.v1+json")
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
	return img
}

// push writes img as host/repo:tag and returns its digest.
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

// signer makes cosign-style signatures with an ECDSA P-256 key.
type signer struct {
	key *ecdsa.PrivateKey
}

func newSigner(t testing.TB) *signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{key: key}
}

// publicPEM is the public key as `cosign generate-key-pair` writes cosign.pub.
func (s *signer) publicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// payload is cosign's simple signing document for digest.
func payload(t testing.TB, ref, digest string) []byte {
	t.Helper()
	doc := map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": ref},
			"image":    map[string]string{"docker-manifest-digest": digest},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sign returns the base64 ASN.1 signature of data's SHA-256.
func (s *signer) sign(t testing.TB, data []byte) string {
	t.Helper()
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// sigLayer is one layer of a signature image.
type sigLayer struct {
	payload   []byte
	signature string
	mediaType string // cosign's when empty
}

// pushSignatures writes the signature image of digest, as cosign does,
// to host/repo:sha256-<hex>.sig.
func pushSignatures(t testing.TB, host, repo, digest string, layers ...sigLayer) {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	for _, l := range layers {
		mt := l.mediaType
		if mt == "" {
			mt = CosignSignatureMediaType
		}
		var err error
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:       static.NewLayer(l.payload, types.MediaType(mt)),
			Annotations: map[string]string{CosignSignatureAnnotation: l.signature},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	push(t, host, repo, SignatureTag(digest), img)
}
